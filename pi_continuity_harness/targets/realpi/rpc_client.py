"""Drive a real ``pi --mode rpc`` process: JSONL commands on stdin, responses and events on stdout.

Framing is LF only (``readline()`` on the binary pipe; U+2028 inside JSON strings is not a line
break). Every stdout line that is not the response to one of our commands goes to the event
log with a monotonic sequence number. Extension dialogs (``extension_ui_request`` with method
``select``/``confirm``/``input``/``editor``) are answered by the reader thread from a FIFO of
answers. A dialog left without an answer (an empty FIFO) is cancelled (``{"cancelled": true}``)
at once, unless Pi asked it with a ``timeout``: that one is left unanswered, and Pi's timer gives
it its default (``dist/modes/rpc/rpc-mode.js:69-74``), as a user who never answers would see
(:func:`left_to_pis_timer`). Fire-and-forget UI requests
(``notify``, ``setStatus``, ``setWidget``, ``setTitle``, ``set_editor_text``) are recorded.

Pi handles RPC commands concurrently, so :meth:`PiRpcProcess.send` may be called from any
thread (for example from the fake model server's ``on_hold`` callback while another thread
waits in :meth:`PiRpcProcess.prompt`).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol

from pi_continuity_harness.errors import TargetError
from pi_continuity_harness.scenario.operations import (
    DialogAnswer,
    DialogAnswerMismatchError,
    Operation,
    pick_answer,
)

__all__ = [
    "DIALOG_METHODS",
    "UI_NOTIFY_METHODS",
    "AnswerRules",
    "DialogAnswerer",
    "DialogRecord",
    "HeldAnswer",
    "PiProcessExitedError",
    "PiRpcError",
    "PiRpcProcess",
    "PiRpcTimeoutError",
    "ProcessCompanions",
    "PromptResult",
    "RpcEvent",
    "dialog_response",
    "left_to_pis_timer",
]

Json = dict[str, Any]
AnswerLike = DialogAnswer | Mapping[str, Any] | bool | str | None


@dataclass(frozen=True)
class HeldAnswer:
    """An answer given only once ``hold`` has returned: the dialog stays open meanwhile.

    The reader thread runs ``hold`` in a thread of its own (it may send RPC commands and wait
    for their responses, which the reader thread reads), then writes the answer."""

    answer: AnswerLike
    hold: Callable[[], None]


#: Called by the reader thread for each dialog request; returns the answer. None: no answer (a
#: dialog asked with a timeout is left to Pi's timer, any other is cancelled,
#: :func:`left_to_pis_timer`); ``{"cancelled": True}`` cancels at once.
DialogAnswerer = Callable[[Json], AnswerLike | HeldAnswer]

DIALOG_METHODS = frozenset({"select", "confirm", "input", "editor"})
UI_NOTIFY_METHODS = frozenset({"notify", "setStatus", "setWidget", "setTitle", "set_editor_text"})
_STDERR_LIMIT = 1 << 20


class PiRpcError(TargetError, RuntimeError):
    """An RPC command failed or the protocol was violated."""


class PiRpcTimeoutError(PiRpcError, TimeoutError):
    """Waiting for a response or an event took too long."""


class PiProcessExitedError(PiRpcError):
    """The Pi process ended while we were waiting for it."""


@dataclass(frozen=True)
class RpcEvent:
    """One non-response stdout line, in arrival order."""

    seq: int
    time: float
    data: Json

    @property
    def type(self) -> str:
        return str(self.data.get("type", ""))


@dataclass(frozen=True)
class DialogRecord:
    """A dialog Pi opened and the answer we sent (``response`` None: none, Pi's timer gave the
    dialog its default, :func:`left_to_pis_timer`)."""

    seq: int
    request: Json
    response: Json | None


@dataclass
class PromptResult:
    """What one :meth:`PiRpcProcess.prompt` call saw."""

    response: Json
    events: list[RpcEvent]
    dialogs: list[DialogRecord]
    ui: list[Json]
    settled: Json | None
    seconds: float
    unused_answers: list[Json] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return bool(self.response.get("success"))

    @property
    def disposition(self) -> str | None:
        data = self.response.get("data")
        return str(data.get("disposition")) if isinstance(data, dict) and "disposition" in data else None

    @property
    def aborted(self) -> bool:
        return bool(self.settled and self.settled.get("aborted"))

    def of_type(self, *types: str) -> list[Json]:
        return [e.data for e in self.events if e.type in types]

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def dialog_response(request: Mapping[str, Any], answer: AnswerLike) -> Json:
    """The ``extension_ui_response`` for ``request`` given one scripted answer (None: cancel)."""
    response: Json = {"type": "extension_ui_response", "id": request.get("id")}
    if answer is None:
        response["cancelled"] = True
    elif isinstance(answer, DialogAnswer):
        if answer.cancel:
            response["cancelled"] = True
        elif answer.confirm is not None:
            response["confirmed"] = answer.confirm
        elif answer.select is not None:
            options = request.get("options")
            chosen = answer.choose([str(o) for o in options]) if isinstance(options, list) else None
            response["value"] = chosen if chosen is not None else answer.select
        else:
            response["value"] = answer.input
    elif isinstance(answer, bool):
        response["confirmed"] = answer
    elif isinstance(answer, str):
        response["value"] = answer
    else:
        for key in ("value", "confirmed", "cancelled"):
            if key in answer:
                response[key] = answer[key]
        if len(response) == 2:
            raise ValueError(f"a dialog answer needs value, confirmed or cancelled: {answer!r}")
    return response


def left_to_pis_timer(request: Mapping[str, Any], answer: AnswerLike) -> bool:
    """Whether a dialog gets no response at all: it has no answer (None) and Pi asked it with a
    timeout. Pi 1.6 arms a timer for a truthy ``opts.timeout`` and resolves the dialog with its
    default (``undefined``/``false``) when it fires; the request carries that ``timeout``
    (``dist/modes/rpc/rpc-mode.js:51-85``). A user who never answers leaves it to the timer, and
    the simulator waits the timeout out the same way (``simulator/ui.py`` ``_dialog``); Pi (Node)
    does the timing, with its clamps (``pi_dialog_timeout``). An untimed dialog would wait
    forever: it is cancelled at once instead, on both targets."""
    return answer is None and bool(request.get("timeout"))


def _answer_json(answer: AnswerLike) -> Json:
    return {k: v for k, v in dialog_response({}, answer).items() if k not in ("type", "id")}


#: The answer that cancels a dialog at once, timed or not (a scenario error's dialog).
_CANCEL: Json = {"cancelled": True}

_DIALOG_FIELDS = {"select": "options", "confirm": "message", "input": "placeholder", "editor": "prefill"}


class AnswerRules:
    """A dialog answerer that plays scenario answers the way the simulator's UI does.

    Answers are :class:`DialogAnswer` values: targeted ones (``when``) go to the first
    dialog whose title, message or options match, positional ones in the order dialogs open
    (:func:`pick_answer`). An unanswered dialog gets None: it is cancelled at once, unless Pi
    asked it with a timeout (then Pi's timer gives its default, :func:`left_to_pis_timer`). A
    positional answer of the wrong kind, or a ``select`` that matches no option, cancels the
    dialog at once, timed or not, and is kept in :attr:`errors` (the simulator fails the
    operation with the same message).

    :attr:`records` holds every dialog in the simulator's observation shape:
    ``{"method", "title", "options"|"message"|"placeholder"|"prefill", "answer"}`` (keys
    with ``None`` values left out, as in the simulator's trace). Thread-safe.
    """

    def __init__(self, answers: Iterable[DialogAnswer] = ()) -> None:
        self._lock = threading.Lock()
        self._pending: list[DialogAnswer] = list(answers)
        self.records: list[Json] = []
        self.errors: list[str] = []
        #: Runs an answer's ``during`` operations while its dialog is open: ``(operations,
        #: dialog method)``; called in a thread of its own (:class:`HeldAnswer`). None: ignored.
        self.hold: Callable[[tuple[Operation, ...], str], None] | None = None

    def set(self, answers: Iterable[DialogAnswer]) -> None:
        """Replace the pending answers (and forget earlier mismatch errors)."""
        with self._lock:
            self._pending = list(answers)
            self.errors = []

    def add(self, answers: Iterable[DialogAnswer]) -> list[DialogAnswer]:
        """Append answers after the pending ones; returns them (for :meth:`discard`)."""
        added = list(answers)
        with self._lock:
            self._pending.extend(added)
        return added

    def discard(self, answers: Iterable[DialogAnswer]) -> None:
        """Drop those of ``answers`` that are still pending (by identity)."""
        with self._lock:
            drop = {id(a) for a in answers}
            self._pending = [a for a in self._pending if id(a) not in drop]

    def unused(self) -> list[DialogAnswer]:
        with self._lock:
            return list(self._pending)

    def take_errors(self) -> list[str]:
        with self._lock:
            errors, self.errors = self.errors, []
            return errors

    def __call__(self, request: Json) -> AnswerLike | HeldAnswer:
        answer = self._pick(request)
        hold = self.hold
        scripted = answer.scripted if isinstance(answer, _Chosen) else answer
        if isinstance(scripted, DialogAnswer) and scripted.during and hold is not None:
            operations, method = scripted.during, str(request.get("method", ""))
            given = answer.value if isinstance(answer, _Chosen) else answer
            return HeldAnswer(given, lambda: hold(operations, method))
        return answer.value if isinstance(answer, _Chosen) else answer

    def _pick(self, request: Json) -> AnswerLike | _Chosen:
        method = str(request.get("method", ""))
        title = str(request.get("title") or "")
        message = str(request.get("message") or "")
        raw_options = request.get("options")
        options = [str(o) for o in raw_options] if isinstance(raw_options, list) else None
        record: Json = {"method": method, "title": title}
        extra = request.get(_DIALOG_FIELDS.get(method, ""))
        if extra is not None:
            record[_DIALOG_FIELDS[method]] = extra
        with self._lock:
            try:
                answer = pick_answer(self._pending, method, title, message, options)
            except DialogAnswerMismatchError as error:
                self.errors.append(str(error))
                self.records.append(record)
                return dict(_CANCEL)
            if answer is not None:
                record["answer"] = answer.record()
            self.records.append(record)
            if answer is not None and answer.select is not None and not answer.cancel:
                chosen = answer.choose(options or [])
                if chosen is None:
                    self.errors.append(f"select {title!r}: {answer.select!r} matches none of {options!r}")
                    return dict(_CANCEL)
                return _Chosen({"value": chosen}, answer)
            return answer


@dataclass(frozen=True)
class _Chosen:
    """The option a ``select`` answer picked (``value``), and the answer that picked it."""

    value: Json
    scripted: DialogAnswer


class ProcessCompanions(Protocol):
    """Processes outside Pi's process group that must live and die with it: the workers of a
    bridge zygote (:mod:`.bridge_zygote`), which a fresh bridge would have been in the group."""

    def freeze(self, pgid: int) -> None:
        """Stop them (before the group is killed: none takes a step after Pi died)."""

    def reap(self, pgid: int) -> None:
        """Kill them and wait until they are gone (after the group is killed or Pi ended)."""


class PiRpcProcess:
    """A ``pi --mode rpc`` child process (argv, env and cwd come from the caller)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        default_timeout: float = 30.0,
        dialog_answerer: DialogAnswerer | None = None,
        companions: ProcessCompanions | None = None,
    ) -> None:
        self.argv = list(argv)
        self.companions = companions
        self.env = dict(env) if env is not None else None
        self.cwd = str(cwd) if cwd is not None else None
        self.default_timeout = default_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: set[str] = set()
        self._responses: dict[str, Json] = {}
        self._events: list[RpcEvent] = []
        self._seq = 0
        self._answers: collections.deque[AnswerLike] = collections.deque()
        self._answerer: DialogAnswerer | None = dialog_answerer
        self._dialogs: list[DialogRecord] = []
        self._ui: list[tuple[int, Json]] = []
        self._stderr = bytearray()
        self._eof = False
        self._threads: list[threading.Thread] = []
        #: The answer threads of held dialogs (:class:`HeldAnswer`) not yet waited for.
        self._held_answers: list[threading.Thread] = []
        self.started_at: float | None = None
        #: Seconds from spawn to the first ``get_state`` reply (set by :meth:`start`).
        self.start_seconds: float | None = None

    # lifecycle ---------------------------------------------------------------

    def start(self, *, wait_ready: bool = True, timeout: float | None = None) -> PiRpcProcess:
        """Spawn Pi (own process group) and, by default, wait for a ``get_state`` reply."""
        if self._proc is not None:
            raise PiRpcError("already started")
        self.started_at = time.monotonic()
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(
                target=self._read_stdout, args=(self._proc.stdout,), name="pi-rpc-stdout", daemon=True
            ),
            threading.Thread(
                target=self._read_stderr, args=(self._proc.stderr,), name="pi-rpc-stderr", daemon=True
            ),
        ]
        for thread in self._threads:
            thread.start()
        if wait_ready:
            try:
                self.get_state(timeout=timeout)
            except BaseException:
                self.kill()
                raise
            self.start_seconds = time.monotonic() - self.started_at
        return self

    def __enter__(self) -> PiRpcProcess:
        if self._proc is None:
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def stderr_text(self) -> str:
        with self._cond:
            return self._stderr.decode("utf-8", "replace")

    def close(self, timeout: float = 5.0) -> int | None:
        """Orderly shutdown: close stdin (Pi quits), wait, then SIGTERM / SIGKILL on timeout."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(OSError), self._write_lock:
                if proc.stdin is not None and not proc.stdin.closed:
                    proc.stdin.close()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
                try:
                    proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    proc.wait(timeout=5.0)
        self._reap_group(proc.pid)
        if self.companions is not None:
            self.companions.reap(proc.pid)
        self._join()
        return proc.returncode

    def kill(self) -> int | None:
        """SIGKILL Pi and its process group at once (crash simulation); its companions are
        stopped before and reaped after."""
        proc = self._proc
        if proc is None:
            return None
        if self.companions is not None:
            self.companions.freeze(proc.pid)
        self._reap_group(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)
        if self.companions is not None:
            self.companions.reap(proc.pid)
        self._join()
        return proc.returncode

    @staticmethod
    def _reap_group(pgid: int) -> None:
        # Pi was started in its own session, so its process group id is its pid.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)

    def _join(self) -> None:
        proc = self._proc
        if proc is not None:
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=2.0)

    # reader threads ----------------------------------------------------------

    def _read_stderr(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                with self._cond:
                    self._stderr += chunk
                    if len(self._stderr) > _STDERR_LIMIT:
                        del self._stderr[: len(self._stderr) - _STDERR_LIMIT]

    def _read_stdout(self, stream: IO[bytes]) -> None:
        try:
            while True:
                line = stream.readline()
                if not line:
                    break
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                if not text.strip():
                    continue
                try:
                    data = json.loads(text)
                except ValueError:
                    data = {"type": "_unparsed", "line": text}
                if not isinstance(data, dict):
                    data = {"type": "_unparsed", "line": text}
                self._dispatch(data)
        except (OSError, ValueError):
            pass
        finally:
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def _dispatch(self, data: Json) -> None:
        with self._cond:
            rid = data.get("id")
            if data.get("type") == "response" and isinstance(rid, str) and rid in self._pending:
                self._pending.discard(rid)
                self._responses[rid] = data
                self._cond.notify_all()
                return
            seq = self._seq
            self._seq += 1
            self._events.append(RpcEvent(seq=seq, time=time.monotonic(), data=data))
            dialog = data.get("type") == "extension_ui_request" and data.get("method") in DIALOG_METHODS
            answerer = self._answerer
            if dialog and answerer is None:
                scripted = self._answers.popleft() if self._answers else None
                response = None if left_to_pis_timer(data, scripted) else dialog_response(data, scripted)
                self._dialogs.append(DialogRecord(seq=seq, request=data, response=response))
            elif data.get("type") == "extension_ui_request" and data.get("method") in UI_NOTIFY_METHODS:
                self._ui.append((seq, data))
            self._cond.notify_all()
        if not dialog:
            return
        if answerer is not None:
            # Outside the lock: the answerer may be slow or take its own locks.
            try:
                chosen = answerer(data)
            except Exception as error:  # a broken answerer must not kill the reader thread
                chosen = dict(_CANCEL)
                with self._cond:
                    self._stderr += f"\n[harness] dialog answerer failed: {error!r}\n".encode()
            if isinstance(chosen, HeldAnswer):
                thread = threading.Thread(
                    target=self._answer_after,
                    args=(data, seq, chosen),
                    name="pi-rpc-held-dialog",
                    daemon=True,
                )
                with self._cond:
                    self._held_answers.append(thread)
                thread.start()
                return
            answer = None if left_to_pis_timer(data, chosen) else dialog_response(data, chosen)
            with self._cond:
                self._dialogs.append(DialogRecord(seq=seq, request=data, response=answer))
        else:
            with self._cond:
                answer = next(d.response for d in reversed(self._dialogs) if d.seq == seq)
        if answer is None:
            return  # no answer: Pi's timer gives the dialog its default
        with contextlib.suppress(PiRpcError):
            self._write(answer)

    def _answer_after(self, data: Json, seq: int, held: HeldAnswer) -> None:
        """Run ``held.hold`` (the dialog is open), then answer the dialog."""
        try:
            held.hold()
        except Exception as error:  # the dialog is answered whatever the operations did
            with self._cond:
                self._stderr += f"\n[harness] held dialog failed: {error!r}\n".encode()
        answer = dialog_response(data, held.answer)
        with self._cond:
            self._dialogs.append(DialogRecord(seq=seq, request=data, response=answer))
        with contextlib.suppress(PiRpcError):
            self._write(answer)

    # sending -----------------------------------------------------------------

    def _write(self, obj: Json) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise PiRpcError("Pi is not started")
        data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
        with self._write_lock:
            try:
                proc.stdin.write(data)
                proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise PiProcessExitedError(self._describe(f"cannot write to Pi ({exc})")) from exc

    def send_nowait(self, command: Mapping[str, Any]) -> str:
        """Send a command; returns its id (use :meth:`wait_response`)."""
        cmd = dict(command)
        rid = str(cmd.get("id") or f"h{next(self._ids)}")
        cmd["id"] = rid
        with self._cond:
            self._pending.add(rid)
        self._write(cmd)
        return rid

    def wait_response(self, rid: str, timeout: float | None = None) -> Json:
        limit = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while rid not in self._responses:
                if self._eof:
                    self._pending.discard(rid)
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PiRpcTimeoutError(
                        self._describe(f"no response to command {rid} within {limit:.1f} s")
                    )
                self._cond.wait(remaining)
            else:
                return self._responses.pop(rid)
        raise self._exited(f"Pi exited before answering command {rid}")

    def send(self, command: Mapping[str, Any], timeout: float | None = None) -> Json:
        """Send a command and wait for its response (``success`` may be false)."""
        return self.wait_response(self.send_nowait(command), timeout)

    def call(self, command: Mapping[str, Any], timeout: float | None = None) -> Any:
        """Send a command; return its ``data``, raising :class:`PiRpcError` when it failed."""
        response = self.send(command, timeout)
        if not response.get("success"):
            raise PiRpcError(f"{command.get('type')} failed: {response.get('error')}")
        return response.get("data")

    # events ------------------------------------------------------------------

    @property
    def events(self) -> list[RpcEvent]:
        with self._cond:
            return list(self._events)

    @property
    def event_seq(self) -> int:
        """The sequence number the next event will get."""
        with self._cond:
            return self._seq

    def events_since(self, seq: int) -> list[RpcEvent]:
        with self._cond:
            return [e for e in self._events if e.seq >= seq]

    @property
    def dialogs(self) -> list[DialogRecord]:
        with self._cond:
            return list(self._dialogs)

    @property
    def ui_requests(self) -> list[Json]:
        """Fire-and-forget UI requests (notify, setStatus, setWidget, ...)."""
        with self._cond:
            return [d for _, d in self._ui]

    def set_dialog_answerer(self, answerer: DialogAnswerer | None) -> None:
        """Answer dialogs with ``answerer`` (None: back to the FIFO of :meth:`queue_answers`)."""
        with self._cond:
            self._answerer = answerer

    def queue_answers(self, answers: Iterable[AnswerLike], *, replace: bool = False) -> None:
        """Add dialog answers to the FIFO (``replace`` drops the unused ones first)."""
        with self._cond:
            if replace:
                self._answers.clear()
            self._answers.extend(answers)

    def take_unused_answers(self) -> list[AnswerLike]:
        with self._cond:
            left = list(self._answers)
            self._answers.clear()
            return left

    def wait_for_event(
        self,
        predicate: Callable[[Json], bool] | str,
        timeout: float | None = None,
        *,
        after_seq: int = 0,
    ) -> RpcEvent:
        """The first event with ``seq >= after_seq`` matching ``predicate`` (or that type name)."""
        test: Callable[[Json], bool]
        if isinstance(predicate, str):
            name = predicate

            def test(data: Json) -> bool:
                return data.get("type") == name
        else:
            test = predicate
        limit = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        checked = 0
        with self._cond:
            while True:
                # an event's seq is its index in the log
                for event in self._events[max(checked, after_seq) :]:
                    if test(event.data):
                        return event
                checked = len(self._events)
                if self._eof:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PiRpcTimeoutError(self._describe(f"event not seen within {limit:.1f} s"))
                self._cond.wait(remaining)
        raise self._exited("Pi exited while waiting for an event")

    def wait_for_held_answers(self, timeout: float | None = None) -> bool:
        """Wait until every held dialog's answer thread has ended (its ``during`` operations
        ran and its answer was written); returns whether there was any to wait for.

        Pi may give a timed dialog its default before then (its timer fires,
        ``dist/modes/rpc/rpc-mode.js:69-74``) and the command goes on and ends; the client still
        runs the operations, and an operation is over only when they are: the simulator's
        settle waits for them the same way (``simulator/ui.py`` ``_hold_until``).
        """
        limit = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            threads, self._held_answers = self._held_answers, []
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                raise PiRpcTimeoutError(
                    self._describe(f"a held dialog's operations did not end within {limit:.1f} s")
                )
        return bool(threads)

    def wait_idle(self, timeout: float | None = None, *, quiet: float = 0.05) -> Json:
        """Wait until Pi is neither streaming nor compacting and no event arrived for ``quiet`` s."""
        limit = self.default_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while True:
            before = self.event_seq
            time.sleep(quiet)
            state: Json = self.call({"type": "get_state"}, timeout=max(0.1, deadline - time.monotonic()))
            if not state.get("isStreaming") and not state.get("isCompacting") and self.event_seq == before:
                return state
            if time.monotonic() > deadline:
                raise PiRpcTimeoutError(self._describe(f"Pi did not become idle within {limit:.1f} s"))

    # high-level commands -----------------------------------------------------

    def prompt(
        self,
        text: str,
        *,
        answers: Iterable[AnswerLike] | None = None,
        streaming_behavior: str | None = None,
        timeout: float | None = None,
        settle: bool = True,
        settle_quiet: float = 0.05,
        images: Sequence[Json] = (),
    ) -> PromptResult:
        """Send ``prompt`` and, with ``settle``, wait until the run has settled.

        ``answers`` (if given) replaces the dialog FIFO; unused answers are removed at the end
        and reported. For ``started``/``queued`` the call waits for ``agent_settled``; then (and
        for ``handled``, e.g. an extension command) until Pi is idle and quiet, which also
        covers runs and compactions that a command or a settle handler started. Do not settle
        from the fake server's ``on_hold`` callback: the held request blocks the run.
        """
        limit = self.default_timeout if timeout is None else timeout
        t0 = time.monotonic()
        seq0 = self.event_seq
        if answers is not None:
            self.queue_answers(answers, replace=True)
        command: Json = {"type": "prompt", "message": text}
        if images:
            # RPC ``prompt.images`` (``dist/modes/rpc/rpc-mode.js:324-326``).
            command["images"] = [dict(image) for image in images]
        if streaming_behavior is not None:
            command["streamingBehavior"] = streaming_behavior
        response = self.send(command, timeout=limit)
        settled: Json | None = None
        if settle and response.get("success"):
            disposition = (response.get("data") or {}).get("disposition")
            remaining = max(0.1, limit - (time.monotonic() - t0))
            if disposition in ("started", "queued"):
                settled = self.wait_for_event("agent_settled", remaining, after_seq=seq0).data
            remaining = max(0.1, limit - (time.monotonic() - t0))
            self.wait_idle(remaining, quiet=settle_quiet)
            later = [e for e in self.events_since(seq0) if e.type == "agent_settled"]
            if later:
                settled = later[-1].data
        unused: list[Json] = []
        if answers is not None:
            unused = [_answer_json(a) for a in self.take_unused_answers()]
        events = self.events_since(seq0)
        with self._cond:
            dialogs = [d for d in self._dialogs if d.seq >= seq0]
            ui = [d for s, d in self._ui if s >= seq0]
        return PromptResult(
            response=response,
            events=events,
            dialogs=dialogs,
            ui=ui,
            settled=settled,
            seconds=time.monotonic() - t0,
            unused_answers=unused,
        )

    def compact(self, custom_instructions: str | None = None, timeout: float | None = None) -> Json:
        """RPC ``compact`` (aborts a running turn first); the response, successful or not."""
        command: Json = {"type": "compact"}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        return self.send(command, timeout)

    def abort(self, timeout: float | None = None) -> Json:
        return self.send({"type": "abort"}, timeout)

    def set_model(self, provider: str, model_id: str, timeout: float | None = None) -> Json:
        return self.send({"type": "set_model", "provider": provider, "modelId": model_id}, timeout)

    def new_session(self, parent_session: str | None = None, timeout: float | None = None) -> Json:
        command: Json = {"type": "new_session"}
        if parent_session is not None:
            command["parentSession"] = parent_session
        return self.send(command, timeout)

    def get_state(self, timeout: float | None = None) -> Json:
        data: Json = self.call({"type": "get_state"}, timeout)
        return data

    def get_entries(self, since: str | None = None, timeout: float | None = None) -> Json:
        """``{"entries": [...], "leafId": ...}``."""
        command: Json = {"type": "get_entries"}
        if since is not None:
            command["since"] = since
        data: Json = self.call(command, timeout)
        return data

    def get_session_stats(self, timeout: float | None = None) -> Json:
        data: Json = self.call({"type": "get_session_stats"}, timeout)
        return data

    def get_messages(self, timeout: float | None = None) -> list[Json]:
        data: Json = self.call({"type": "get_messages"}, timeout)
        return list(data.get("messages") or [])

    def get_last_assistant_text(self, timeout: float | None = None) -> str | None:
        data: Json = self.call({"type": "get_last_assistant_text"}, timeout)
        text = data.get("text")
        return str(text) if text is not None else None

    def get_commands(self, timeout: float | None = None) -> list[Json]:
        data: Json = self.call({"type": "get_commands"}, timeout)
        return list(data.get("commands") or [])

    # diagnostics -------------------------------------------------------------

    def _exited(self, message: str, wait_s: float = 2.0) -> PiProcessExitedError:
        """The error for "stdout ended"; first lets the process finish, so ``alive`` and
        ``returncode`` agree with it (a kill from another thread may still be in flight)."""
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=wait_s)
        return PiProcessExitedError(self._describe(message))

    def _describe(self, message: str, *, stderr_lines: int = 30, events: int = 15) -> str:
        with self._cond:
            stderr = self._stderr.decode("utf-8", "replace")
            tail = self._events[-events:]
        rc = self._proc.poll() if self._proc is not None else None
        lines = [message, f"(pid {self.pid}, returncode {rc})"]
        lines.append("--- last events ---")
        for event in tail:
            text = json.dumps(event.data, ensure_ascii=False)
            lines.append(f"#{event.seq} {text[:300]}{'…' if len(text) > 300 else ''}")
        if not tail:
            lines.append("(none)")
        lines.append("--- stderr (tail) ---")
        lines.append("\n".join(stderr.strip().splitlines()[-stderr_lines:]) or "(empty)")
        return "\n".join(lines)
