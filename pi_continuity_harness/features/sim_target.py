"""SimTarget: the conformance suite against the simulated Pi 1.6 host.

It runs any Python extension factory (the reference by default) in a
:class:`~pi_continuity_harness.simulator.simulation.Simulation` and reads observations from
its trace, so it sees exactly what an RPC client plus the observer extension see on real
Pi, and a little more (the trace itself, for reports).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import PI_VERSION, __version__
from ..simulator.agent_session import OBSERVABLE_EVENTS
from ..simulator.extension_api import ExtensionFactory
from ..simulator.host import ProcessStartError
from ..simulator.model_script import Reply, RequestKind, SynthesisReply
from ..simulator.scenario import Scenario
from ..simulator.simulation import Simulation
from .target import CAPABILITIES, Observation, ObservedRequest, OperationOutcome, TargetStartError

__all__ = ["SimTarget"]


class SimTarget:
    """The simulated host behind the Target seam."""

    name = "sim"

    def __init__(
        self, implementation: str | ExtensionFactory, workdir: str | Path, *, seed: int | None = None
    ) -> None:
        self._implementation = implementation
        self._workdir = Path(workdir)
        self._seed = seed
        self._simulation: Simulation | None = None

    @property
    def implementation(self) -> str:
        if isinstance(self._implementation, str):
            return self._implementation
        return f"{self._implementation.__module__}:{self._implementation.__qualname__}"

    @property
    def simulation(self) -> Simulation:
        if self._simulation is None:
            raise RuntimeError("the target has not been started")
        return self._simulation

    def capabilities(self) -> frozenset[str]:
        return frozenset(CAPABILITIES)

    def start(self, scenario: Scenario, *, attach: Callable[[Simulation], None] | None = None) -> None:
        """Start the simulation of ``scenario``; ``attach`` is handed the simulation before it
        starts, for observers that must see every trace record (the explorer's invariant checker)."""
        self._simulation = Simulation(
            scenario, workdir=self._workdir, seed=self._seed, implementation=self._implementation
        )
        if attach is not None:
            attach(self._simulation)
        try:
            self._simulation.start()
        except ProcessStartError as error:
            self._simulation.finish()  # the process is gone: write the trace, release the loop
            raise TargetStartError(str(error)) from error

    def perform(self, op: Any) -> OperationOutcome:
        result = self.simulation.perform(op)
        return OperationOutcome(result.name, result.ok, result.error, result.disposition)

    def script(self, kind: RequestKind, replies: Iterable[Reply | SynthesisReply]) -> None:
        self.simulation.host.service.extend(kind, list(replies))  # type: ignore[arg-type]

    def observe(self) -> Observation:
        host = self.simulation.host
        paths = host.paths
        observation = Observation(
            target=self.name,
            project_dir=Path(paths.project_dir),
            agent_dir=Path(paths.agent_dir),
            session_dir=Path(paths.session_dir),
        )
        for outcome in self.simulation.result.operations:
            observation.operations.append(
                OperationOutcome(outcome.name, outcome.ok, outcome.error, outcome.disposition)
            )
        workdir = paths.workdir
        for record in host.trace.records:
            kind = record["kind"]
            payload = {
                k: _restore(v, workdir) for k, v in record.items() if k not in ("seq", "t", "kind", "name")
            }
            if kind == "session":
                if record["name"] == "session_info_changed":
                    payload = {
                        "name": payload.get("sessionName")
                    }  # Pi's field (``name`` is reserved in traces)
                observation.session_events.append({"type": record["name"], **payload})
            elif kind == "event" and record["name"] in OBSERVABLE_EVENTS:
                # Only what the real-Pi observer extension logs (not ``command``, ``tool_call``...).
                observation.extension_events.append({"type": record["name"], **payload})
            elif kind == "ui" and record["name"] in ("select", "confirm", "input", "editor"):
                observation.dialogs.append({"method": record["name"], **payload})
            elif kind == "fs" and record["name"] not in ("tool_write", "tool_remove"):
                observation.fs_events.append({"op": record["name"], "path": payload.get("path")})
        observation.notifications = [(n.message, n.notify_type) for n in host.ui.notifications]
        observation.statuses = dict(host.ui.statuses)
        observation.widgets = [_restore(dict(w), workdir) for w in host.ui.widget_updates]
        aborted = {
            (r.get("caller"), r.get("index"))
            for r in host.trace.records
            if r["kind"] == "model" and r["name"] == "reply" and r.get("stopReason") == "aborted"
        }
        observation.model_requests = [
            ObservedRequest(req.kind, req.index, req, (req.kind, req.index) in aborted)
            for req in host.service.requests
        ]
        runtime = host.runtime
        if runtime is not None:
            manager = runtime.session_manager
            observation.entries = manager.get_entries()
            observation.session_id = manager.get_session_id()
            file = manager.get_session_file()
            observation.session_file = Path(file) if file else None
        elif host.last_session_file:
            observation.session_file = Path(host.last_session_file)
            observation.entries = observation.session_file_entries()[1:]
            header = observation.session_file_entries()[:1]
            observation.session_id = header[0].get("id") if header else None
        return observation

    def versions(self) -> dict[str, str]:
        return {
            "harness": __version__,
            "host": f"pi-continuity-harness simulator (Pi {PI_VERSION} model)",
            "python": platform.python_version(),
            "os": platform.platform(),
        }

    def close(self) -> None:
        if self._simulation is not None and not self._simulation.finished:
            self._simulation.finish()


def _restore(value: Any, workdir: str) -> Any:
    """Trace values carry ``$WORK``; observations carry real paths, like real Pi's do."""
    if isinstance(value, str):
        return value.replace("$WORK", workdir)
    if isinstance(value, dict):
        return {k: _restore(v, workdir) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, workdir) for v in value]
    return value
