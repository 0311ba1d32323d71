"""The state one Gherkin scenario builds up: a scenario draft, then a running target.

Given steps describe the machine (models, settings, files, trust, other extensions, the
model script) into a :class:`ScenarioDraft`. The first step that *does* something starts
the target from the draft; from then on steps perform operations and read observations.
Describing the machine after Pi started is a mistake in the feature and fails loudly.

The world also knows the conventions the suite relies on, in one place:

* the default machine: one model of 200,000 tokens, native compaction
  ``reserveTokens: 50,000`` and ``keepRecentTokens: 2,000``, a trusted project;
* "a turn of work": a prompt and a reply of about 1,000 tokens each, so that compaction
  has something to summarise (Pi skips it silently otherwise, §9.3);
* the artifact directory: ``<project>/<CONFIG_DIR_NAME>/session-continuity`` unless the
  scenario's extension config names another.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.features.oracle import Brief, parse_brief
from pi_continuity_harness.scenario.document import Scenario, parse_scenario, scenario_data
from pi_continuity_harness.scenario.model_script import Reply, RequestKind, SynthesisReply
from pi_continuity_harness.scenario.operations import CommandOp, DialogAnswer, Operation, PromptOp
from pi_continuity_harness.scenario.workspace import path_is_dir, path_of
from pi_continuity_harness.targets import (
    BothRuns,
    CheckedRun,
    Observation,
    ObservedCounts,
    OperationOutcome,
    Target,
    TargetUnavailableError,
    play_both,
)

__all__ = [
    "DEFAULT_KEEP",
    "DEFAULT_RESERVE",
    "DEFAULT_WINDOW",
    "ScenarioDraft",
    "World",
    "project_files",
    "settings_answers",
]

DEFAULT_WINDOW = 200_000
DEFAULT_RESERVE = 50_000
DEFAULT_KEEP = 2_000
TURN_CHARS = 4_000
ARTIFACT_SUBDIR = "session-continuity"


#: A target's other spelling of one of its paths, the same file (``SimTarget.disk_path``).
Spelling = Callable[[str], str]


def project_files(project: Path, on_disk: Spelling | None = None) -> dict[str, bytes]:
    """Every file under the project directory, by project-relative path, in path order: the
    files :func:`_files_below` finds (what ``sorted(project.rglob("*"))`` filtered by
    ``is_file()`` gives), read through their paths. :meth:`World.start` keeps this of every
    scenario; through pathlib's ``rglob`` it was 2 % of a scenario's CPU time on the simulator
    (issue 16). ``on_disk``: the target's disk spelling of its paths (see :func:`_files_below`),
    which the files are read by, each read again by its own path when that fails (so an error
    names it, as before)."""
    root = str(project)
    if on_disk is None:
        return {name: _read_bytes(os.path.join(root, name)) for name in _files_below(project)}
    files: dict[str, bytes] = {}
    for name in _files_below(project, on_disk):
        path = os.path.join(root, name)
        try:
            files[name] = _read_bytes(on_disk(path))
        except OSError:
            files[name] = _read_bytes(path)
    return files


def _settings_file(project: Path) -> Path:
    """The project settings file of the project directory ``project``."""
    return project / CONFIG_DIR_NAME / "settings.json"


def _settings_bytes(settings: Path) -> bytes | None:
    """The project settings file's bytes, None when there is none (``Path.exists``)."""
    return settings.read_bytes() if settings.exists() else None


def _read_bytes(path: str) -> bytes:
    """``Path(path).read_bytes()`` without making a ``Path``."""
    with open(path, "rb") as file:
        return file.read()


def _filler(label: str, chars: int) -> str:
    text = f"{label}: "
    word = "work "
    return (text + word * (chars // len(word) + 1))[:chars]


def settings_answers(trigger: str, keep: str, confirm: bool) -> list[DialogAnswer]:
    """How the suite drives any ``/continuity settings`` menu (documented in
    docs/running-the-suite.md), in steps and in explored scenarios alike.

    It picks the menu option about native compaction, answers the input whose prompt
    mentions the trigger with the trigger percent and the one that mentions keeping recent
    context with the keep percent, then confirms (or declines) the preview.
    """
    return [
        DialogAnswer(select="/compaction/", when=r"compaction"),
        DialogAnswer(input=trigger, when=r"trigger"),
        DialogAnswer(input=keep, when=r"keep"),
        DialogAnswer(confirm=confirm, when=r"."),
    ]


@dataclass
class ScenarioDraft:
    """A scenario being described by Given steps (plain data, validated on build)."""

    name: str
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.data:
            self.data = {
                "name": self.name,
                "models": [{"id": "fake/fake-model", "context_window": DEFAULT_WINDOW, "max_tokens": 16_384}],
                "settings": {
                    "global": {},
                    "project": {
                        "compaction": {
                            "enabled": True,
                            "reserveTokens": DEFAULT_RESERVE,
                            "keepRecentTokens": DEFAULT_KEEP,
                        }
                    },
                },
                "model": {"agent": [], "summary": [], "extension": []},
                "extensions": [{"implementation": True}],
                "files": {},
                "faults": {"fs": [], "crash": [], "inject": [], "tamper": []},
            }

    # ----------------------------------------------------------------- models
    def active_model(self) -> dict[str, Any]:
        active = self.data.get("active_model")
        return next((m for m in self.data["models"] if m["id"] == active), self.data["models"][0])

    def set_active_window(self, window: int) -> None:
        self.active_model()["context_window"] = window

    def add_model(
        self, model_id: str, window: int, *, max_tokens: int = 16_384, reasoning: bool = False
    ) -> None:
        existing = next((m for m in self.data["models"] if m["id"] == model_id), None)
        spec = {"id": model_id, "context_window": window, "max_tokens": max_tokens, "reasoning": reasoning}
        if existing is None:
            self.data["models"].append(spec)
        else:
            existing.update(spec)

    # ----------------------------------------------------------------- settings and files
    @property
    def project_settings(self) -> dict[str, Any] | None:
        value = self.data["settings"].get("project")
        return value if value is None else dict(value)

    def set_project_settings(self, value: dict[str, Any] | None) -> None:
        self.data["settings"]["project"] = value

    def native(self) -> dict[str, Any]:
        """The effective native compaction settings as the draft will write them."""
        merged: dict[str, Any] = {"enabled": True, "reserveTokens": 16_384, "keepRecentTokens": 20_000}
        for scope in ("global", "project"):
            settings = self.data["settings"].get(scope) or {}
            merged.update(settings.get("compaction") or {})
        return merged

    def set_native(self, **values: Any) -> None:
        project = self.data["settings"].get("project")
        if project is None:
            project = {}
            self.data["settings"]["project"] = project
        compaction = project.setdefault("compaction", {})
        compaction.update(values)

    def set_file(self, path: str, *, text: str | None = None, json_value: Any = None) -> None:
        self.data["files"][path] = {"text": text} if text is not None else {"json": json_value}

    def extension_config(self) -> dict[str, Any]:
        spec = self.data["files"].get(f"{CONFIG_DIR_NAME}/session-continuity.json")
        if spec and isinstance(spec.get("json"), dict):
            return dict(spec["json"])
        return {}

    # ----------------------------------------------------------------- model script
    def script(self, kind: RequestKind, reply: Reply | SynthesisReply) -> None:
        self.data["model"][kind].append(scenario_data(reply))

    def build(self) -> Scenario:
        data = _copy_data(self.data)
        data["name"] = (
            "".join(c if c.isalnum() or c in "._-" else "-" for c in self.name).strip("-") or "scenario"
        )
        return parse_scenario(data, f"feature scenario {self.name!r}")


#: The types of the draft's leaves, which a copy shares: none of them can change.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def _copy_data(value: Any) -> Any:
    """``copy.deepcopy(value)`` of the draft's data (its dicts, lists and leaves), sharing
    nothing mutable with it: :meth:`ScenarioDraft.build` hands the copy to the scenario, and the
    draft is read again after Pi started (:meth:`World.current_window`). ``deepcopy`` keeps a
    memo of every object it copied, each entry an ``id()`` call the file-system monitor's audit
    hook sees, and was a fifth of ``build`` (issue 16). A dict is copied whole and only its
    containers replaced by their copies (as ``simulator/json_copy.py`` does). Anything else (a
    tuple, a set, an object, a key that is not a leaf, a cycle) goes to ``deepcopy`` whole,
    which gives what it always gave; the drafts the steps build hold none of these, nor one
    container twice (whose two places ``deepcopy`` would keep one object)."""
    try:
        return _copy_plain(value)
    except (_NotPlainError, RecursionError):
        return copy.deepcopy(value)


class _NotPlainError(Exception):
    """The value holds something :func:`_copy_plain` does not copy as ``deepcopy`` would."""


def _copy_plain(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        out = value.copy()
        for key, item in value.items():
            if type(key) not in _LEAVES:
                raise _NotPlainError
            if type(item) not in _LEAVES:
                out[key] = _copy_plain(item)
        return out
    if kind is list:
        return [item if type(item) in _LEAVES else _copy_plain(item) for item in value]
    if kind in _LEAVES:
        return value
    raise _NotPlainError


def _kind_files(directory: Path) -> dict[str, bytes]:
    """The files directly in ``directory`` (an artifact kind's directory), by name, in name order."""
    if not directory.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _files_below(root: Path, on_disk: Spelling | None = None) -> list[str]:
    """Every file below ``root``, as paths relative to it sorted component by component (none
    when it is not there): what ``sorted(root.rglob("*"))`` filtered by ``is_file()`` gives,
    symbolic links to files counted and linked directories not entered, through ``os.scandir``
    (pathlib's ``rglob`` was three quarters of this, at the end of every scenario: issue 16).

    ``on_disk``: the target's other spelling of its paths, the same files (the simulator's
    machine below its virtual root is reached through ``/proc/self/fd``, 3 to 10 us more per
    lookup, issue 16): the tree is walked by it, which gives the same relative paths; whether
    ``root`` is a directory is asked of ``root`` itself when the other spelling cannot tell."""
    found: list[tuple[str, ...]] = []

    def walk(directory: str, parts: tuple[str, ...]) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            where = (*parts, entry.name)
            try:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, where)
                elif entry.is_file():
                    found.append(where)
            except OSError:
                continue

    text = str(root)
    top = text if on_disk is None else on_disk(text)
    if top == text:
        is_dir = path_is_dir(text)
    else:
        try:
            is_dir = path_is_dir(top)
        except OSError:
            is_dir = root.is_dir()  # its error, naming it
    if is_dir:
        walk(top, ())
    return ["/".join(parts) for parts in sorted(found)]


@functools.lru_cache(maxsize=64)
def _below_config_dir(project_dir: Path, path: Path) -> Path:
    """``project_dir / CONFIG_DIR_NAME / path``, the one made before for the same two: a
    function of the two paths alone (nothing on disk is asked). The simulator's project
    directory is the same ``Path`` in every scenario (its fixed virtual root)."""
    return project_dir / CONFIG_DIR_NAME / path


@dataclass
class World:
    """Everything one scenario has done and seen."""

    name: str
    make_target: Callable[[], Target]
    #: ``(target name, work directory) -> Target``: a target of either kind, for the steps that
    #: play a scenario file on both (None: this world cannot).
    make_named_target: Callable[[str, Path], Target] | None = None
    work_root: Path | None = None
    draft: ScenarioDraft = field(init=False)
    target: Target | None = None
    turns: int = 0
    remembered: dict[str, Any] = field(default_factory=dict)
    _observation: Observation | None = None

    def __post_init__(self) -> None:
        self.draft = ScenarioDraft(self.name)

    # ----------------------------------------------------------------- lifecycle
    @property
    def started(self) -> bool:
        return self.target is not None

    def require_setup(self, what: str) -> ScenarioDraft:
        if self.started:
            raise AssertionError(f"feature error: {what!r} describes the machine, but Pi has already started")
        return self.draft

    def start(self) -> Target:
        if self.target is None:
            target = self.make_target()
            target.start(self.draft.build())
            self.target = target
            project = target.project_dir()
            try:
                files = project_files(project, getattr(target, "disk_path", None))
            except BaseException:
                _settings_bytes(_settings_file(project))  # its error first, as when it was read first
                raise
            # The project's settings file is one of the project's files when it is a file (or a
            # link to one): the bytes just read, not read again (a ``stat`` and a read through
            # the virtual root's ``/proc`` path per scenario, issue 16). Anything else (none, a
            # directory, a link into a linked directory ``project_files`` does not enter) is
            # read as before. Its ``Path`` is made only then (two ``/`` per scenario, issue 16).
            known = files.get(f"{CONFIG_DIR_NAME}/settings.json")
            self.remembered["settings_at_start"] = (
                known if known is not None else _settings_bytes(_settings_file(project))
            )
            self.remembered["project_at_start"] = files
        return self.target

    def close(self) -> None:
        if self.target is not None:
            self.target.close()

    def close_deferring_writes(self) -> Callable[[], None] | None:
        """Close; a simulated target leaves its ``trace.jsonl`` and ``requests/*.json`` unwritten
        and returns what writes them (``Target.close_deferring_writes``)."""
        return None if self.target is None else self.target.close_deferring_writes()

    def run_checked(self, scenario: Scenario) -> CheckedRun | None:
        """Play ``scenario`` (a scenario file) on a fresh target with the system's run checker
        watching (the simulator: every effect, capability ``run-checker``; real Pi: what it lets be
        observed after every operation, capability ``observed-checker``); None when it has neither."""
        if self.started:
            raise AssertionError(
                "feature error: a scenario file is played on a fresh target, but Pi has started"
            )
        target = self.make_target()
        if not {"run-checker", "observed-checker"} & target.capabilities():
            return None
        self.target = target
        return target.run_checked(scenario)

    def play_both(self, scenario: Scenario) -> BothRuns | None:
        """Play ``scenario`` on the simulator and on real Pi and compare them (None: real Pi is
        not available here)."""
        if self.make_named_target is None or self.work_root is None:
            return None
        try:
            return play_both(scenario, self.work_root / "both", make=self.make_named_target)
        except TargetUnavailableError:
            return None

    # ----------------------------------------------------------------- doing
    def script(self, kind: RequestKind, *replies: Reply | SynthesisReply) -> None:
        if self.target is None:
            for reply in replies:
                self.draft.script(kind, reply)
        else:
            self.target.script(kind, replies)

    def perform(self, op: Operation) -> OperationOutcome:
        outcome = self.start().perform(op)
        self._observation = None
        return outcome

    def prompt(self, text: str, *, chars: int | None = None) -> OperationOutcome:
        data: dict[str, Any] = {"text": text}
        if chars is not None:
            data["chars"] = chars
        return self.perform(PromptOp.model_validate({"prompt": data}))

    def command(
        self, text: str, answers: list[DialogAnswer] | tuple[DialogAnswer, ...] = ()
    ) -> OperationOutcome:
        """Run a slash command. A command the implementation never registered does not run: Pi
        sends the text to the model as an ordinary prompt (disposition ``started``/``queued``
        instead of ``handled``), and the step that ran it fails saying so, never silently."""
        outcome = self.perform(
            CommandOp.model_validate({"command": {"text": text, "answers": list(answers)}})
        )
        if outcome.disposition in ("started", "queued"):
            name = text.split(maxsplit=1)[0]
            raise AssertionError(
                f"the implementation registered no {name} command: Pi sent {text!r} to the model as a prompt "
                f"(disposition {outcome.disposition!r})"
            )
        return outcome

    def work_turns(
        self, count: int, *, context_tokens: int | None = None, prompt_chars: int = TURN_CHARS
    ) -> None:
        """``count`` ordinary turns (below any threshold): prompts of ``prompt_chars`` characters
        (about 1,000 tokens by default) and replies of about 1,000 tokens."""
        for _ in range(count):
            self.turns += 1
            tokens = context_tokens if context_tokens is not None else 5_000 * self.turns
            self.script(
                "agent", Reply(text=_filler(f"reply {self.turns}", TURN_CHARS), context_tokens=tokens)
            )
            outcome = self.prompt(_filler(f"task step {self.turns}", prompt_chars))
            assert outcome.ok, f"an ordinary turn failed: {outcome.error}"

    def ensure_history(self, turns: int = 2) -> None:
        """Make sure compaction has something to summarise (a few ordinary turns)."""
        if self.turns < turns:
            self.work_turns(turns - self.turns)

    def threshold_tokens(self) -> int:
        """``contextWindow - reserveTokens`` for the active model and the draft's settings."""
        native = self.draft.native()
        return int(self.current_window()) - int(native["reserveTokens"])

    def current_window(self) -> int:
        model_id = self.remembered.get("active_model") or self.draft.active_model()["id"]
        model = next(m for m in self.draft.data["models"] if m["id"] == model_id)
        return int(model["context_window"])

    def cross_threshold(
        self, tokens: int | None = None, *, text: str = "continue the task"
    ) -> OperationOutcome:
        """A prompt whose reply reports ``tokens`` context tokens (default: one above the threshold)."""
        self.ensure_history()
        reported = tokens if tokens is not None else self.threshold_tokens() + 1
        self.turns += 1
        self.script("agent", Reply(text=_filler(f"reply {self.turns}", TURN_CHARS), context_tokens=reported))
        return self.prompt(_filler(text, TURN_CHARS))

    # ----------------------------------------------------------------- seeing
    def observe(self) -> Observation:
        if self._observation is None:
            self._observation = self.start().observe()
        return self._observation

    def observed_counts(self) -> ObservedCounts:
        """How much :meth:`observe` holds now (a step's mark before its action): the kept
        observation's counts, else the target's own count when it has one (the simulator's,
        ``SimTarget.observed_counts``: the action's operation would make an observation made
        for the mark stale at once), else a new observation's (kept, as :meth:`observe` keeps it)."""
        if self._observation is None:
            count = getattr(self.start(), "observed_counts", None)
            counts = count() if count is not None else None
            if counts is not None:
                return ObservedCounts(*counts)
        return ObservedCounts.of(self.observe())

    def artifact_dir(self) -> Path:
        path = path_of(str(self.draft.extension_config().get("artifactDirectory", ARTIFACT_SUBDIR)))
        if path.is_absolute():
            return path
        return _below_config_dir(self.observe().project_dir, path)

    def session_artifacts(self, kind: str, session_id: str | None = None) -> dict[str, bytes]:
        """Artifact files of one kind (pending/archive/failed) for a session (default: current)."""
        observation = self.observe()
        sid = session_id or observation.session_id or ""
        root = self.artifact_dir()
        if not sid or not root.is_dir():
            return {}
        exact = root / sid
        if exact.is_dir():
            return _kind_files(exact / kind)
        # A sanitised directory name (a hostile id, spec §7) keeps a prefix of the id. uuidv7 ids
        # of sessions started within about a minute share their first 8 characters, so a prefix
        # alone could pick another session's directory (and ``iterdir`` has no fixed order): of
        # the candidates, in name order, the first whose files name this session (a Brief's
        # ``sessionId``, a failure record's session line) is this session's.
        for candidate in sorted(root.iterdir()):
            if candidate.is_dir() and candidate.name.startswith(sid[:8]):
                files = _kind_files(candidate / kind)
                if any(sid.encode() in data for data in files.values()):
                    return files
        return {}

    def all_project_files(self) -> dict[str, bytes]:
        """Every file of the project, by project-relative path (for failure messages)."""
        return project_files(self.observe().project_dir)

    def all_artifacts(self) -> dict[str, bytes]:
        root = self.artifact_dir()
        return {name: (root / name).read_bytes() for name in _files_below(root)}

    def artifact_names(self) -> list[str]:
        """The artifact files' paths below the artifact directory, sorted (their bytes unread:
        the run report lists them for every scenario, issue 16)."""
        directory = self.artifact_dir()
        return _files_below(directory, getattr(self.target, "disk_path", None))

    def compactions(self) -> list[dict[str, Any]]:
        return self.observe().entries_of("compaction")

    def latest_compaction(self) -> dict[str, Any]:
        entries = self.compactions()
        assert entries, "no compaction entry was persisted"
        return entries[-1]

    def latest_summary_brief(self) -> Brief:
        summary = self.latest_compaction().get("summary", "")
        brief = parse_brief(summary)
        assert brief is not None, f"the compaction summary is not a Continuity Brief: {summary[:200]!r}"
        return brief
