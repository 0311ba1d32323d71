"""The Target seam: what conformance steps drive, on the simulator or on real Pi.

Steps say what happens and what must be observed; a :class:`Target` turns that into host
operations and observations. Steps never reach past this seam, so every feature that can
run on real Pi does.

A target is started from a :class:`~pi_continuity_harness.scenario.document.Scenario`
(its operations ignored), then driven one operation at a time. The model script can be
extended at any point. :meth:`Target.observe` returns an :class:`Observation` in one
normalised shape for both targets:

* ``session_events``: what Pi streams over RPC (``compaction_start``/``end``,
  ``agent_settled``, ``queue_update``, ``extension_error``, ...), as ``{"type": ...}`` dicts;
* ``extension_events``: what only extensions see (``session_before_compact``,
  ``session_compact``, ``session_start``, ...), recorded by the simulator or by the
  observer extension on real Pi, in the observer's shape;
* notifications, statuses and dialogs (``ctx.ui``), model requests (as the fake server or
  the scripted model received them), operation outcomes, and the files on disk.

Capabilities name what a target can produce; a scenario tagged ``@needs-<capability>``
is skipped, with the reason, on a target without it.

:meth:`Target.run_checked` plays a whole scenario file with the system's *run checker* (the
explorer's invariants, checked after every effect) watching, and returns a :class:`CheckedRun`:
that is how the suite replays a regression the explorer wrote (capability ``run-checker``).
The simulated target finds the checker of a system through the entry-point group
:data:`RUN_CHECKERS_GROUP`, where the explorer registers one per system, so neither the steps
nor the target import the explorer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from pi_continuity_harness.errors import TargetError
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.model_script import ModelRequest, Reply, RequestKind, SynthesisReply
from pi_continuity_harness.scenario.operations import Operation
from pi_continuity_harness.scenario.trace import jsonl_lines

__all__ = [
    "CAPABILITIES",
    "RUN_CHECKERS_GROUP",
    "CheckedRun",
    "HeldOutcome",
    "Observation",
    "ObservedCounts",
    "ObservedRequest",
    "OperationOutcome",
    "Target",
    "TargetBudgetError",
    "TargetStartError",
    "TargetUnavailableError",
]

#: Capability name -> what it means. Scenario tags are ``@needs-<name>``.
CAPABILITIES: dict[str, str] = {
    "trace-faults": "crash or inject operations at any host effect (simulator only)",
    "fs-faults": "fail, corrupt or crash at an extension's own file operation (Python implementations)",
    "python-implementation": "the implementation under test is a Python extension",
    "virtual-time": "time is virtual: long waits cost nothing",
    "crash": "kill the Pi process at an operation boundary",
    "held-model-calls": "run operations while a model call is held open",
    "held-dialogs": "run operations while an extension dialog is held open (a dialog answer's during)",
    "print-mode": "run Pi without a UI (print mode)",
    "run-checker": "the explorer's invariants watch every effect of a scenario file's run (simulator only)",
    # What the host itself does. The simulator and Pi 1.6.0 have all of these; older real Pi
    # releases lack some (targets/realpi/versions.py names the release and the file:line).
    "agent-settled-aborted": "agent_settled says whether the run was aborted (Pi >= 1.1.0)",
    "busy-while-run-starts": "the session is busy from a run's preflight, so a message sent during "
    "a pre-prompt compaction queues behind the starting run (Pi >= 1.2.0)",
    "uncapped-summary-output": "Pi's own summarizer asks for the model's whole output limit, not "
    "0.8 x reserveTokens (Pi >= 1.4.0)",
    "saved-trust-decision": "a decision saved in trust.json applies to a project without "
    "trust-requiring resources (Pi >= 1.5.0)",
    "pi-1.5-system-prompt": "the system prompt has Pi 1.5's wording, as the simulator models it (Pi >= 1.5.0)",
    "reload-refused-while-busy": "a reload while a response or compaction runs is refused (Pi >= 1.5.2)",
    "rpc-session-start-events": "RPC streams what session_start handlers emit after a session "
    "replacement, e.g. their entry_appended (Pi >= 1.6.0)",
    "observed-checker": "the explorer's invariants read what the target observes after every operation of a "
    "scenario file's run (real Pi: the invariants its observations allow)",
}

#: Entry-point group of the run checkers, one per system name (see :meth:`Target.run_checked`).
RUN_CHECKERS_GROUP = "pi_continuity_harness.run_checkers"


class TargetUnavailableError(TargetError, RuntimeError):
    """The target cannot run here (for example, real Pi is not installed)."""


class TargetBudgetError(TargetError, RuntimeError):
    """The scenario exceeded its budget (``scenario/budget.py``: host operations or virtual
    seconds on the simulator, wall-clock seconds on real Pi) and was stopped there. The message
    names the budget and what was still running; the suite goes on with the next scenario."""


class TargetStartError(TargetError, RuntimeError):
    """Pi refused to start (real Pi 1.6 exits 1 when an extension fails to load). The first line
    of the message is Pi's reason, the same on both targets:
    ``Failed to load extension "<name>": Failed to load extension: <message>``."""


@dataclass(frozen=True)
class OperationOutcome:
    """What an RPC client learns from one operation."""

    name: str
    ok: bool
    error: str | None = None
    disposition: str | None = None


@dataclass(frozen=True)
class HeldOutcome:
    """An operation a held model call or a held-open dialog ran (``during``), and what the RPC
    client learnt from it.

    ``request`` names the held call: ``<kind>#<index>`` (``agent#2``: the third agent request),
    or ``dialog:<method>`` for a dialog answer's ``during`` (``dialog:select``);
    ``operation`` is the index of the top-level operation during which it ran.
    """

    request: str
    operation: int
    outcome: OperationOutcome


@dataclass(frozen=True)
class ObservedRequest:
    """One model request, as the model (scripted or fake server) received it."""

    kind: RequestKind
    index: int
    request: ModelRequest
    aborted: bool = False

    @property
    def text(self) -> str:
        """Everything the request carries as text, system prompt first."""
        parts = [self.request.system_prompt or ""]
        for message in self.request.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
        return "\n".join(parts)

    def last_user_text(self) -> str:
        for message in reversed(self.request.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
        return ""


class ObservedCounts(NamedTuple):
    """How many session events, extension events, model requests, entries, notifications,
    dialogs and command outputs an observation holds: where a step's mark of "what was seen
    before this action" stands (``features/steps/common.py``)."""

    session_events: int
    extension_events: int
    model_requests: int
    entries: int
    notifications: int
    dialogs: int
    command_output: int

    @classmethod
    def of(cls, observation: Observation) -> ObservedCounts:
        return cls(
            len(observation.session_events),
            len(observation.extension_events),
            len(observation.model_requests),
            len(observation.entries),
            len(observation.notifications),
            len(observation.dialogs),
            len(observation.command_output),
        )


@dataclass
class Observation:
    """Everything a step may assert on, in one shape for every target."""

    target: str
    project_dir: Path
    agent_dir: Path
    session_dir: Path
    operations: list[OperationOutcome] = field(default_factory=list)
    #: The outcomes of the operations held model calls ran (``during``), in the order they ended.
    held_operations: list[HeldOutcome] = field(default_factory=list)
    session_events: list[dict[str, Any]] = field(default_factory=list)
    #: Every session event whole, as Pi's RPC mode writes it (``session_events`` summarises
    #: them): what the comparison of the two targets compares.
    rpc_events: list[dict[str, Any]] = field(default_factory=list)
    extension_events: list[dict[str, Any]] = field(default_factory=list)
    notifications: list[tuple[str, str]] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    #: Every widget update in order: ``{"key", "lines"}`` (``lines`` None clears), plus
    #: ``placement`` when one was given.
    widgets: list[dict[str, Any]] = field(default_factory=list)
    dialogs: list[dict[str, Any]] = field(default_factory=list)
    model_requests: list[ObservedRequest] = field(default_factory=list)
    session_file: Path | None = None
    session_id: str | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)
    #: The implementation's own file operations (``{"op", "path", "ok"}``: every attempt, ``path``
    #: a rename's destination, ``ok`` False when it failed), where the target can see
    #: them (the simulator; real Pi with a Python implementation through the bridge).
    fs_events: list[dict[str, Any]] = field(default_factory=list)
    #: What slash commands showed without a UI (print and json modes), one text per command:
    #: what the command wrote to stdout or stderr, which Pi shows the user on stderr there
    #: (the simulator; Pi's RPC mode always has a UI).
    command_output: list[str] = field(default_factory=list)
    #: The slash commands each loaded extension registered, by the extension's name as the
    #: simulator reports it (the implementation's spec, ``competitor:<behaviour>``), in
    #: registration order, while Pi runs (simulator: the runner's records; real Pi: RPC
    #: ``get_commands`` by ``sourceInfo.path``). Empty once the process ended.
    commands: dict[str, list[str]] = field(default_factory=dict)
    #: The machine root on disk. The paths above are the ones the host sees; the simulator's
    #: host sees a fixed virtual root instead (``simulator/virtual_root.py``), which leads to
    #: this directory while the simulation is the process's current one. None: ``project_dir.parent``.
    machine_dir: Path | None = None

    # ----------------------------------------------------------------- places
    @property
    def run_dir(self) -> Path:
        """The scenario's run directory on disk (it holds the machine's directory)."""
        return (self.machine_dir or self.project_dir.parent).parent

    def on_disk(self, path: str | Path) -> Path:
        """A path the host sees, as it is on disk (for messages that outlive the run)."""
        root, text = str(self.project_dir.parent), str(path)
        if self.machine_dir is None or not (text == root or text.startswith(root + "/")):
            return Path(text)
        return self.machine_dir / text[len(root) :].lstrip("/")

    # ----------------------------------------------------------------- queries
    def events(self, kind: str) -> list[dict[str, Any]]:
        """Extension events of one type, in order."""
        return [e for e in self.extension_events if e.get("type") == kind]

    def session(self, kind: str) -> list[dict[str, Any]]:
        """Session (RPC) events of one type, in order."""
        return [e for e in self.session_events if e.get("type") == kind]

    def requests(self, kind: RequestKind) -> list[ObservedRequest]:
        return [r for r in self.model_requests if r.kind == kind]

    def entries_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.entries if e.get("type") == kind]

    def user_messages(self) -> list[str]:
        """Texts of the user messages in the session, in order."""
        out = []
        for entry in self.entries_of("message"):
            message = entry.get("message") or {}
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    out.append(content)
                else:
                    out.append("".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict)))
        return out

    def files(self, under: str | Path) -> dict[str, bytes]:
        """Files below a project-relative (or absolute) directory, by relative path."""
        root = Path(under)
        if not root.is_absolute():
            root = self.project_dir / root
        if not root.is_dir():
            return {}
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    def read_json(self, path: str | Path) -> Any:
        target = Path(path)
        if not target.is_absolute():
            target = self.project_dir / target
        return json.loads(target.read_text(encoding="utf-8"))

    def session_file_entries(self) -> list[dict[str, Any]]:
        """Entries as persisted in the session file (empty while Pi holds them in memory)."""
        if self.session_file is None or not self.session_file.exists():
            return []
        lines = jsonl_lines(self.session_file.read_text(encoding="utf-8"))
        return [json.loads(line) for line in lines if line.strip()]


@dataclass(frozen=True)
class CheckedRun:
    """A scenario file played with the system's run checker watching every effect."""

    #: Every invariant the checker knows (a step naming another is a mistake in the feature).
    invariants: frozenset[str]
    #: ``(invariant, what was seen)`` for every violation, in the order they were found.
    violations: tuple[tuple[str, str], ...]
    #: The checker's own failures (never a verdict about the implementation).
    harness_errors: tuple[str, ...]
    #: ``liveness(n)``: why the run made no progress once faults healed before operation ``n``
    #: (None: it did).
    liveness: Callable[[int], str | None]

    def broken(self, invariant: str) -> list[str]:
        """What was seen breaking ``invariant``."""
        return [seen for name, seen in self.violations if name == invariant]


@runtime_checkable
class Target(Protocol):
    """A Pi host the steps can drive: the simulator, or a real Pi process."""

    name: str

    @property
    def implementation(self) -> str: ...

    def capabilities(self) -> frozenset[str]: ...

    def start(self, scenario: Scenario) -> None:
        """Lay out the machine from ``scenario`` (operations ignored) and start Pi; raises
        :class:`TargetStartError` when Pi refuses to start."""

    def perform(self, op: Operation) -> OperationOutcome:
        """Run one operation until Pi is quiet again (``agent_settled`` and nothing pending)."""

    def script(self, kind: RequestKind, replies: Iterable[Reply | SynthesisReply]) -> None:
        """Answer the next requests of ``kind`` with ``replies`` (after those already scripted)."""

    def observe(self) -> Observation: ...

    def project_dir(self) -> Path:
        """The project directory, as :meth:`observe` names it (``Observation.project_dir``),
        usable at once: what a step reads at the start needs no whole observation (a third of a
        simulated scenario's start, issue 16)."""

    def run_checked(self, scenario: Scenario) -> CheckedRun:
        """Start from ``scenario`` and perform all its operations with the system's run checker
        watching (capability ``run-checker``; without it, :class:`TargetUnavailableError`)."""

    def versions(self) -> dict[str, str]:
        """Host and runtime versions, for reports."""

    def close(self) -> None:
        """Stop Pi and every server; keep the files for inspection."""

    def close_deferring_writes(self) -> Callable[[], None] | None:
        """:meth:`close`, but a target may leave its run's own records (the simulator's
        ``trace.jsonl`` and ``requests/*.json``) unwritten and return what writes them, the same
        bytes (None: everything is written). For a scenario whose directory is removed unread
        when the run passes (``--observation-records failed``)."""
