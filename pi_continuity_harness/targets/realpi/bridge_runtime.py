"""The Python side of the bridge: run a Python extension inside real Pi (see ``bridge.ts``).

Started by ``bridge.ts`` as::

    python -m pi_continuity_harness.targets.realpi.bridge_runtime --extension module:factory \\
        [--config-dir-name .pi] [--faults plan.json]

It reads JSON lines from stdin and writes JSON lines to the real stdout (``print`` and
``sys.stdout`` of the extension go to stderr, so they cannot corrupt the protocol). The
process ends at stdin EOF, which is when Pi ends. Three modules: :mod:`.wire` (the JSON-lines
connection and the codec), :mod:`.bridge_api` (``pi`` and ``ctx`` as calls over the wire) and
this one, the runtime (loading the extension, serving Pi's requests, filesystem faults).

Concurrency: a reader thread parses stdin. Replies to this side's calls resolve
:class:`concurrent.futures.Future` objects directly, so a *synchronous* API method (``ctx.is_idle()``,
``ctx.session_manager.get_entries()``, ``pi.get_settings()``) can block on a round trip while the
asyncio loop is busy in a handler. Every other message is handed to the asyncio loop, and each
request (event, command, tool, callback) runs as its own task: a command can run while a
``session_before_compact`` handler awaits its synthesis, as in Pi.

Semantics are those of the simulator's runner (``simulator/runner.py``): action methods raise
:class:`NotInitializedError` while the factory runs; after a reload or session replacement (the
next ``load``) a captured ``pi``/``ctx`` raises :class:`StaleContextError` (Pi's own stale errors
map to it as well); ``send_user_message`` and the UI setters are fire-and-forget; a
``model_registry.complete()`` whose signal aborts resolves with ``stopReason: "aborted"`` (the
abort reaches Pi's own ``complete()`` signal); ``None`` results are ``undefined`` in Pi.

Filesystem faults (``--faults``): the scenario's :class:`FilesystemMonitor` is installed as an
audit hook here, over the real workspace directories. Every observed operation and fault is
appended to the plan's ``records`` file (JSON lines, the simulator's trace records ``fs`` and
``fault``); at start the counters are replayed from that file, so ``occurrence``/``times``
count across Pi restarts as they do across simulated restarts. A ``crash`` effect kills the
whole Pi process group (Pi and this process), as the simulated process dies. PiTarget gives the
implementation under test a plan even when the scenario has no fs fault, so its file operations
are always observed (``Observation.fs_events``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import itertools
import json
import os
import signal as signal_module
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import IO, Any

from pi_continuity_harness.api import extension_api
from pi_continuity_harness.api.abort import AbortController, AbortSignal
from pi_continuity_harness.api.extension_api import ExtensionFactory, PiError, ReplacedSessionContext
from pi_continuity_harness.api.wire_json import reply_line
from pi_continuity_harness.scenario.faults import FsFault
from pi_continuity_harness.scenario.fs_monitor import FilesystemMonitor, activate_monitor, fs_event
from pi_continuity_harness.scenario.implementations import resolve_implementation
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.targets.realpi.bridge_api import (
    BridgeCommandContext,
    BridgeContext,
    BridgeExtensionAPI,
    BridgeReplacedContext,
    BridgeToolContext,
    Instance,
)
from pi_continuity_harness.targets.realpi.wire import (
    BridgeCallError,
    Connection,
    Json,
    build_event,
    describe_error,
    result_to_wire,
    tool_to_wire,
)

__all__ = ["BridgeRuntime", "install_fault_monitor", "main"]


class BridgeRuntime:
    """Dispatches Pi's requests to the Python extension's instances."""

    def __init__(self, conn: Connection, factory: ExtensionFactory, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.factory = factory
        self.loop = loop
        self.instances: dict[int, Instance] = {}
        self.current: Instance | None = None
        self.descriptions: dict[tuple[int, str], str | None] = {}
        self._signals: dict[str, AbortController] = {}
        self._signal_ids: dict[int, tuple[AbortSignal, str]] = {}
        self._py_signal_ids = itertools.count(1)
        self._callback_ids = itertools.count(1)
        self._callbacks: dict[str, Callable[[ReplacedSessionContext], Awaitable[None]]] = {}
        self._compact_callbacks: dict[str, tuple[Any, Any]] = {}
        #: What a ``with_session`` callback raised, by its id, for ``new_session`` to raise again.
        self._callback_errors: dict[str, Exception] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.eof = asyncio.Event()

    # ------------------------------------------------------------------ signals, callbacks
    def signal_from(self, ref: Any) -> AbortSignal | None:
        if not isinstance(ref, dict) or not ref.get("$signal"):
            return None
        sid = str(ref["$signal"])
        controller = self._signals.get(sid)
        if controller is None:
            controller = AbortController()
            self._signals[sid] = controller
            self._signal_ids[id(controller.signal)] = (controller.signal, sid)
        if ref.get("aborted") and not controller.signal.aborted:
            controller.abort("aborted")
        return controller.signal

    def signal_ref(self, signal: AbortSignal | None) -> Json | None:
        if signal is None:
            return None
        known = self._signal_ids.get(id(signal))
        if known is not None and known[0] is signal:
            sid = known[1]
            return {"$signal": sid, "aborted": signal.aborted, "py": sid.startswith("py")}
        sid = f"py{next(self._py_signal_ids)}"
        self._signal_ids[id(signal)] = (signal, sid)
        signal.add_listener(lambda: self.conn.send({"type": "abort_signal", "signal": sid}))
        return {"$signal": sid, "aborted": signal.aborted, "py": True}

    def register_callback(self, callback: Callable[[ReplacedSessionContext], Awaitable[None]]) -> str:
        cid = f"cb{next(self._callback_ids)}"
        self._callbacks[cid] = callback
        return cid

    def take_callback_error(self, cid: str) -> Exception | None:
        """The exception the ``with_session`` callback ``cid`` raised, if it did (once)."""
        return self._callback_errors.pop(cid, None)

    def register_compact_callback(self, on_complete: Any, on_error: Any) -> str:
        cid = f"cc{next(self._callback_ids)}"
        self._compact_callbacks[cid] = (on_complete, on_error)
        return cid

    # ------------------------------------------------------------------ messages
    def deliver(self, message: Json) -> None:
        """Called from the reader thread."""
        self.loop.call_soon_threadsafe(self._on_message, message)

    def on_eof(self) -> None:
        self.loop.call_soon_threadsafe(self.eof.set)

    def _on_message(self, message: Json) -> None:
        kind = message.get("type")
        if kind == "abort":
            controller = self._signals.get(str(message.get("signal")))
            if controller is not None:
                controller.abort(str(message.get("reason") or "aborted"))
            return
        if kind == "compact_done":
            on_complete, on_error = self._compact_callbacks.pop(str(message.get("callback")), (None, None))
            try:
                if "error" in message:
                    if on_error is not None:
                        # Pi hands ``onError`` the Error compact() threw (agent-session.js:2936-2948).
                        on_error(PiError(str(message["error"])))
                elif on_complete is not None:
                    on_complete(message.get("result") or {})
            except Exception as error:
                print(f"[bridge] ctx.compact callback raised: {describe_error(error)}", file=sys.stderr)
            return
        if kind in ("load", "event", "command", "tool", "callback"):
            task = self.loop.create_task(self._serve(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        print(f"[bridge] unknown message from Pi: {kind!r}", file=sys.stderr)

    async def _serve(self, message: Json) -> None:
        try:
            value = await self._handle(message)
        except Exception as error:
            self.conn.send({"type": "error", "id": message.get("id"), "error": describe_error(error)})
            return
        except BaseException as error:  # SimulatedCrash from an fs fault, cancellation at exit
            self.conn.send({"type": "error", "id": message.get("id"), "error": describe_error(error)})
            raise
        try:
            wire = result_to_wire(value)
            line = reply_line(
                {"type": "result", "id": message.get("id"), "value": wire, "undefined": wire is None}
            )
        except Exception as error:
            # A value JSON cannot carry (a dict key that is a tuple, a cycle): answered as the
            # error of a handler that raised, so Pi's handler or tool throws with its message.
            # Unanswered, Pi waited for this reply forever.
            self.conn.send({"type": "error", "id": message.get("id"), "error": describe_error(error)})
            return
        self.conn.send_line(line)

    async def _handle(self, message: Json) -> Any:
        kind = message.get("type")
        if kind == "load":
            return await self._load(int(message["inst"]))
        instance = self.instances.get(int(message.get("inst") or 0))
        info = message.get("ctx") or {}
        if kind == "callback":
            cid = str(message.get("callback"))
            callback = self._callbacks.pop(cid, None)
            if callback is None:
                return None
            detached = Instance(id=int(info.get("inst") or 0), loading=False)
            try:
                await callback(BridgeReplacedContext(self, detached, info))
            except Exception as error:
                self._callback_errors[cid] = error
                raise
            return None
        if instance is None:
            raise BridgeCallError(f"unknown extension instance {message.get('inst')}")
        if kind == "event":
            _event_name, handler = instance.handlers[int(message["handler"])]
            if handler is None:
                return None
            event = build_event(message.get("event") or {}, self.signal_from)
            return await _maybe_await(handler(event, BridgeContext(self, instance, info)))
        if kind == "command":
            command = instance.commands.get(str(message.get("name")))
            if command is None:
                raise BridgeCallError(f"unknown command {message.get('name')}")
            await _maybe_await(
                command(str(message.get("args") or ""), BridgeCommandContext(self, instance, info))
            )
            return None
        if kind == "tool":
            tool = instance.tools.get(str(message.get("name")))
            if tool is None:
                raise BridgeCallError(f"unknown tool {message.get('name')}")
            result = await tool.execute(
                str(message.get("toolCallId")),
                message.get("params") or {},
                self.signal_from(message.get("signal")),
                BridgeToolContext(self, instance, info),
            )
            return result
        raise BridgeCallError(f"unknown request {kind}")

    async def _load(self, inst_id: int) -> Json:
        for previous in self.instances.values():
            previous.stale = True
        instance = Instance(id=inst_id)
        self.instances[inst_id] = instance
        self.current = instance
        api = BridgeExtensionAPI(self, instance)
        try:
            await _maybe_await(self.factory(api))
        finally:
            instance.loading = False
        return {
            "handlers": [[event, i] for i, (event, _h) in enumerate(instance.handlers)],
            "commands": [[name, self.descriptions.get((inst_id, name))] for name in instance.commands],
            "tools": [tool_to_wire(t) for t in instance.tools.values()],
            "flags": [[name, options] for name, options in instance.flags.items()],
        }

    async def run_until_eof(self) -> None:
        await self.eof.wait()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def _replay_counters(monitor: FilesystemMonitor, records_path: str) -> None:
    """Advance the fault counters over the operations earlier processes of this run saw."""
    try:
        with open(records_path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        event = fs_event(record)
        if event is not None:
            monitor.replay(str(event["op"]), str(event["path"]))
        elif record.get("kind") == "fault" and record.get("effect") == "crash":
            # The process died before the operation ended: no end record to count.
            monitor.replay(str(record.get("op")), str(record.get("path")))


def install_fault_monitor(plan_path: str, process_group: int | None = None) -> FilesystemMonitor:
    """Read a fault plan, replay earlier records, and activate the monitor for this process.

    A ``crash`` kills ``process_group`` (default: this process's group, which is Pi's for a
    bridge Pi spawned; a zygote's worker passes Pi's, :mod:`.bridge_zygote`), then this process."""
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    records_path = str(plan["records"])
    faults = tuple(FsFault.model_validate(f) for f in plan.get("faults") or [])
    records = open(records_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    started = time.monotonic()
    trace = Trace(lambda: round((time.monotonic() - started) * 1000), "")

    def crash() -> None:
        with contextlib.suppress(OSError):
            records.flush()
        with contextlib.suppress(OSError):
            os.killpg(os.getpgrp() if process_group is None else process_group, signal_module.SIGKILL)
        os._exit(137)

    monitor = FilesystemMonitor(
        workdir=str(plan["workdir"]),
        placeholders={str(k): str(v) for k, v in (plan.get("placeholders") or {}).items()},
        trace=trace,
        faults=faults,
        on_crash=crash,
    )

    def sink(record: Json) -> None:
        monitor.host_io += 1
        try:
            records.write(json.dumps({**record, "pid": os.getpid()}, ensure_ascii=False) + "\n")
            records.flush()
        finally:
            monitor.host_io -= 1

    trace.sinks.append(sink)
    _replay_counters(monitor, records_path)
    activate_monitor(monitor).__enter__()
    return monitor


def _protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    """Keep fds 0/1 for the protocol; point the extension's stdin/stdout elsewhere."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def main(argv: list[str] | None = None, *, process_group: int | None = None) -> int:
    """Serve Pi until stdin ends; ``process_group`` is Pi's when this process is not in it."""
    parser = argparse.ArgumentParser(prog="bridge_runtime", description=__doc__.splitlines()[0])
    parser.add_argument("--extension", required=True, help="module:factory or an implementation name")
    parser.add_argument("--config-dir-name", default=None, help="Pi's CONFIG_DIR_NAME")
    parser.add_argument("--faults", default=None, help="JSON file with the filesystem fault plan")
    args = parser.parse_args(argv)
    proto_in, proto_out = _protocol_streams()
    if args.config_dir_name:
        # Before the extension is imported: it reads CONFIG_DIR_NAME when its modules load.
        extension_api.CONFIG_DIR_NAME = args.config_dir_name
        for facade in ("pi_continuity_harness.api", "pi_continuity_harness.simulator"):
            package = sys.modules.get(facade)
            if package is not None:
                package.CONFIG_DIR_NAME = args.config_dir_name  # type: ignore[attr-defined]
    _name, factory = resolve_implementation(args.extension)
    if args.faults:
        install_fault_monitor(args.faults, process_group)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    conn = Connection(proto_in, proto_out)
    runtime = BridgeRuntime(conn, factory, loop)
    reader = threading.Thread(
        target=conn.read_forever, args=(runtime.deliver, runtime.on_eof), name="bridge-reader", daemon=True
    )
    reader.start()
    try:
        loop.run_until_complete(runtime.run_until_eof())
    finally:
        loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
