"""Observation records with no tolerance, and the differences between two of them.

A scenario's :class:`~.target.Observation` becomes a plain JSON record
(:func:`normalise_observation`) of everything a client or an extension can observe, whole:

* ``operations``: every operation's outcome (name, ok, error, disposition), and
  ``held_operations``: the outcome of every operation a held model call ran;
* ``session_events``: every session event as Pi's RPC mode writes it, with its payload
  (messages, tool results, compaction results, queue texts, ``entry_appended`` entries, ...);
* ``extension_events``: what the observer extension (or the simulator) records of the events
  only extensions see; ``notifications``, ``statuses``, ``widgets``, ``dialogs``;
* ``model_requests``: each request's kind, index, whether it was aborted, and its body (the
  chat-completions JSON: messages, ``max_tokens``, tools);
* ``entries`` (what ``get_entries`` returns) and ``session_file`` (every line of the session
  file, key order included): summaries, ``firstKeptEntryId``, ``tokensBefore``, stop reasons,
  ``context_edit`` targets, parent links, message texts, field by field;
* ``artifacts``: the implementation's files, by name, with their text.

Only the values the ledger (:data:`~.known_differences.UNCOMPARED`) names are replaced, each by
its placeholder: times (``<ts>``), durations (``<ms>``), random ids (numbered by first
appearance: ``<uuid1>``, ``<id1>``), digests (``<digest>``), the streaming snapshots of
``message_start``/``message_update`` (``<streaming>``), and the run's paths (``$WORK``, ...);
consecutive ``bash_execution_update`` events of one command are joined into one (how the pipe
cut its output is timing), and in real Pi's record a setup failure's message that pi-ai left
untimed gets ``durationMs`` ``<ms>`` (a race of two clock reads; ledger ``setup-failure-timing``).
``seconds`` (the scenario's wall-clock time) is kept for the time ratio and never compared.

:func:`diff_records` compares two records channel by channel; a difference is *explained* only
when a :data:`~.known_differences.KNOWN_DIFFERENCES` neutraliser removes it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.scenario.json_text import dumps_indented
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.targets.target import Observation

__all__ = [
    "CHANNELS",
    "Difference",
    "Normaliser",
    "describe",
    "diff_records",
    "normalise_observation",
    "write_observation_record",
]

#: The record's comparable channels, in report order.
CHANNELS: tuple[str, ...] = (
    "operations",
    "held_operations",
    "session_events",
    "extension_events",
    "notifications",
    "statuses",
    "widgets",
    "dialogs",
    "model_requests",
    "entries",
    "session_file",
    "artifacts",
)

_UUID = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])")
_ENTRY_ID = re.compile(r"(?<![0-9A-Za-z_-])[0-9a-f]{8}(?![0-9A-Za-z_-])")
#: A UUID cut short in its last group (1 to 11 of its 12 digits): blitz's scripted Finish that
#: copies the session's Handoff ID without its last character (H29a's truncated copy). Numbered
#: after the whole UUID it starts (``<uuid2>[:35]``), so a cut of the same length of the same
#: UUID compares alike on both targets and a cut of another length or another UUID does not;
#: left raw, it held each target's own random digits and no seed that cut one ever compared
#: alike (blitz seeds 4, 9, 10, 14 and 16 of 0-30, thirty-sixth session).
_CUT_UUID = re.compile(
    r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{1,11}(?![0-9a-f])"
)
_DIGEST = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{16,64}(?![0-9A-Za-z])")
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(?:[.-]\d{1,3})?Z")
#: A file's modification time to the minute, as blitz's ``/sh recover`` lists recovery files
#: (``reference/blitz/recovery.py``): the simulator's clock is virtual (files included:
#: ``SimHost.stamp_changed_files``), real Pi's the machine's, as for ``_ISO``.
_MINUTE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
#: What every match of ``_DIGEST``, ``_UUID``, ``_ENTRY_ID`` (8 hex digits in a row), ``_ISO`` or
#: ``_MINUTE`` (a date) contains: a text without it is left as it is by all five (one scan
#: instead of five).
_MAYBE_ID = re.compile(r"[0-9a-f]{8}|\d{4}-\d\d-\d\d[T ]")
#: A Brief's frontmatter field that holds an entry id (spec §8: ``branchLeafBefore``, the
#: branch leaf before the handoff). It may name an entry no other part of the record has (the
#: in-memory session before a restart, when Pi wrote no session file), and Pi's random 8-hex
#: id is all digits in (10/16)^8 = 2.3 % of cases, which ``_id_match`` takes for a number: so
#: real Pi's record kept the raw id where the simulator's had ``<id3>``, once in a whole-suite
#: run ("shutting the session down writes, archives and sends nothing"). Learnt from here, it
#: is an id on both targets.
_BRIEF_ENTRY_ID = re.compile(r'^branchLeafBefore: "([0-9a-f]{8})"$', re.MULTILINE)
_PI_PACKAGE_TAIL = "/node_modules/@earendil-works/pi-coding-agent"
_PI_PACKAGE = re.compile(r"[^\s\"'<>]*" + re.escape(_PI_PACKAGE_TAIL))
#: Keys whose values are wall-clock times (ledger ``wall-clock``).
_TIME_KEYS = frozenset({"timestamp", "createdAt", "updatedAt"})
#: Keys whose values are elapsed times (ledger ``durations``).
_DURATION_KEYS = frozenset({"durationMs", "wall_time_seconds"})
_STREAMING = "<streaming>"
#: The keys, in order, of a message pi-ai's ``createSetupErrorMessage`` makes (api/lazy.js:2-21);
#: ``durationMs`` and ``thinkingLevel`` may follow (ledger ``setup-failure-timing``). No other
#: assistant message has ``errorMessage`` before ``timestamp``: a provider's ``output`` gets its
#: ``errorMessage`` after (openai-completions.js:156-172, 486-490).
_SETUP_FAILURE_KEYS = (
    "role",
    "content",
    "api",
    "provider",
    "model",
    "usage",
    "stopReason",
    "errorMessage",
    "timestamp",
)


class Normaliser:
    """Replaces the ledger's values by placeholders, consistently within one record."""

    def __init__(self, paths: dict[str, str], *, untimed_setup_failures: bool = False) -> None:
        #: Whether a setup failure's message without ``durationMs`` is compared as one with it
        #: (ledger ``setup-failure-timing``: real Pi's records only).
        self._untimed_setup_failures = untimed_setup_failures
        # Longest first, so ``$PROJECT`` wins over ``$WORK`` for paths below the project.
        self._paths = sorted(((p, name) for name, p in paths.items() if p), key=lambda x: -len(x[0]))
        self._uuids: dict[str, str] = {}
        self._ids: dict[str, str] = {}
        #: All-digit tokens that are entry ids somewhere in the run (:meth:`know_ids`), numbered
        #: only where they appear.
        self._known_ids: set[str] = set()
        #: Each text already normalised, with its result. A record repeats the same strings many
        #: times (every model request carries the conversation so far, every event its message),
        #: and the result of a text never changes once it has been normalised: its uuids and ids
        #: are numbered by then, and an all-digit token is an id only when ``learn_ids`` learnt
        #: it, which clears this cache.
        self._texts: dict[str, str] = {}
        #: Each list element (an object) already normalised, by its JSON text (``_element``).
        self._objects: dict[str, Any] = {}

    def uuid(self, value: str) -> str:
        return self._uuids.setdefault(value, f"<uuid{len(self._uuids) + 1}>")

    def cut_uuid(self, value: str) -> str:
        """A UUID cut short (``_CUT_UUID``), as the number of the whole UUID it starts and its
        length; one whose whole UUID is not numbered (yet) is numbered as a UUID of its own, by
        first appearance like the others."""
        whole = next(
            (n for uuid, n in self._uuids.items() if len(uuid) == 36 and uuid.startswith(value)), None
        )
        return f"{whole or self.uuid(value)}[:{len(value)}]"

    def entry_id(self, value: str) -> str:
        return self._ids.setdefault(value, f"<id{len(self._ids) + 1}>")

    def learn_ids(self, values: Iterable[Any]) -> None:
        """Number these entry ids first (in this order), so equal sessions get equal numbers."""
        self._texts.clear()
        self._objects.clear()
        for value in values:
            if isinstance(value, str) and _ENTRY_ID.fullmatch(value):
                self.entry_id(value)

    def know_ids(self, values: Iterable[Any]) -> None:
        """Take these as entry ids wherever they appear, without numbering them now: the ids
        of the run's other sessions (a new session or a fork leaves entries behind that events
        and extensions still name). Numbering them here would need an order both targets share,
        and files of one millisecond have none; numbered where they first appear, they are
        numbered alike on both."""
        self._texts.clear()
        self._objects.clear()
        for value in values:
            if isinstance(value, str) and value.isdigit() and _ENTRY_ID.fullmatch(value):
                self._known_ids.add(value)

    def text(self, value: str) -> str:
        done = self._texts.get(value)
        if done is None:
            done = self._texts[value] = self._text(value)
        return done

    def places(self, value: str) -> str:
        """``value`` with the machine's directories named (``$PROJECT``...), nothing numbered."""
        for path, name in self._paths:
            value = value.replace(path, name)
        return value

    def known(self, value: str) -> str:
        """``value`` with the directories named and every id masked, except that a UUID already
        numbered shows its number: what orders artifacts alike on both targets when their masked
        texts tie (see :func:`_artifact_order`). Numbers nothing itself."""
        value = _DIGEST.sub("<digest>", self.places(value))
        value = _UUID.sub(lambda m: self._uuids.get(m.group(0), "<uuid>"), value)
        value = _CUT_UUID.sub("<uuid>[:]", value)
        return _ENTRY_ID.sub("<id>", _MINUTE.sub("<minute>", _ISO.sub("<ts>", value)))

    def _text(self, value: str) -> str:
        value = self.places(value)
        if _PI_PACKAGE_TAIL in value:
            # Guarded: the pattern's leading ``[^\s"'<>]*`` tries every position of a long text.
            value = _PI_PACKAGE.sub("$PI_PACKAGE", value)
        if not _MAYBE_ID.search(value):
            # No run of 8 hex digits and no date: none of the five patterns below can match.
            return value
        # A digest of text that holds run-specific values (ids, paths, times) differs with them.
        value = _DIGEST.sub("<digest>", value)
        value = _UUID.sub(lambda m: self.uuid(m.group(0)), value)
        value = _CUT_UUID.sub(lambda m: self.cut_uuid(m.group(0)), value)
        value = _ISO.sub("<ts>", value)
        value = _MINUTE.sub("<minute>", value)
        return _ENTRY_ID.sub(self._id_match, value)

    def _id_match(self, match: re.Match[str]) -> str:
        token = match.group(0)
        # An all-digit token is an entry id only when a session of the run has it (else it is a
        # number).
        if token in self._ids or token in self._known_ids or not token.isdigit():
            return self.entry_id(token)
        return token

    def value(self, value: Any, key: str | None = None) -> Any:
        if key in _TIME_KEYS and value is not None:
            return "<ts>"
        if key in _DURATION_KEYS and value is not None:
            return "<ms>"
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            if self._untimed_setup_failures and _untimed_setup_failure(value):
                value = _with_placeholder_duration(value)
            return {self.text(k): self.value(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._element(v) for v in value]
        return value

    def _element(self, item: Any) -> Any:
        """``value(item)`` of a list's element; an object equal to one already normalised (the
        same JSON text) gets that result. A record repeats whole objects: every model request
        carries every message of the conversation so far, so the request bodies alone are
        quadratic in its length. The result of an object never changes once it has been
        normalised (see ``_texts``), and it depends on nothing but its JSON text (its keys are
        text; a tuple is written as the list it becomes)."""
        if not isinstance(item, dict):
            return self.value(item)
        try:
            token = json.dumps(item, ensure_ascii=False)
        except (TypeError, ValueError):
            return self.value(item)
        done = self._objects.get(token)
        if done is None:
            done = self._objects[token] = self.value(item)
        return done


def _untimed_setup_failure(message: dict[str, Any]) -> bool:
    """Whether ``message`` is an assistant message ``createSetupErrorMessage`` made that pi-ai's
    event stream left without ``durationMs`` (ledger ``setup-failure-timing``)."""
    if "durationMs" in message or message.get("role") != "assistant" or len(message) < 9:
        return False
    return tuple(message)[:9] == _SETUP_FAILURE_KEYS


def _with_placeholder_duration(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with ``durationMs`` right after its ``timestamp``, where the event stream puts
    it when it times the message (utils/event-stream.js:115-117)."""
    out: dict[str, Any] = {}
    for key, item in message.items():
        out[key] = item
        if key == "timestamp":
            out["durationMs"] = "<ms>"
    return out


def _run_entry_ids(observation: Observation) -> Iterable[Any]:
    """The id of every entry of every session of the run: those of the session files in the
    session directory, and those the RPC events carry (an in-memory session writes no file).
    Before, only the last session's were known, so an all-digit id of an earlier session (2.3 %
    of Pi's random ids) stayed a number on one target and became ``<idN>`` on the other, and
    every later number shifted: differential exploration with new sessions and forks found it
    (seeds 9701-9705)."""
    directory = observation.on_disk(observation.session_dir)
    if directory.is_dir():
        for path in sorted(directory.glob("*.jsonl")):
            for line in jsonl_lines(path.read_text(encoding="utf-8", errors="replace")):
                if '"id"' in line:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict):
                        yield entry.get("id")
    # The entries events name (an appended entry and its parent, a compaction's kept entry and
    # its own entry, a tree navigation's leaves): in an in-memory session that restarted or
    # crashed before the next observation, nothing else names them. The simulator's seeded id
    # 46743741 of the entry a ``session_compact`` carried (agent-session.js:2410-2411) stayed a
    # number where real Pi's random id became ``<id32>`` (seed 18); so did real Pi's 31070483 of
    # a ``session_before_compact``'s ``preparation.firstKeptEntryId`` (seed 30) and the
    # simulator's 48268673, the parent and target an RPC event's entry named (seed 180):
    # differential exploration of the continuity cases, 7 December 2026.
    for events in (observation.rpc_events, observation.session_events, observation.extension_events):
        for event in events:
            if isinstance(event, dict):
                yield from _named_entry_ids(event)


#: Keys whose values are entry ids, at an event's top level or in one of its
#: :data:`_ENTRY_HOLDERS` (Pi's entries and compaction/tree preparations: ``firstKeptEntryId``,
#: ``parentId``, ``targetId``, the tree navigation's ``oldLeafId``/``newLeafId``).
_ENTRY_ID_KEYS = frozenset({"firstKeptEntryId", "parentId", "targetId", "oldLeafId", "newLeafId", "leafId"})
#: Keys whose value is an entry, so its ``id`` is an entry id (``entry_appended``'s,
#: ``session_compact``'s).
_ENTRY_KEYS = frozenset({"compactionEntry", "entry"})
#: The objects of an event that name entries: an entry, or a preparation.
_ENTRY_HOLDERS = _ENTRY_KEYS | {"preparation"}


def _named_entry_ids(event: dict[str, Any]) -> Iterator[Any]:
    """Every entry id ``event`` names at its top level or in an entry or a preparation it
    carries. Not deeper: a walk through every nested message of every event (a streamed
    ``message_update`` carries the partial message) made the suite's median scenario 1.7x
    slower in CPU (8.6 -> 14.5 ms, ``bench_speed --only suite``)."""
    for key, item in event.items():
        if key in _ENTRY_ID_KEYS:
            yield item
        elif key in _ENTRY_HOLDERS and isinstance(item, dict):
            if key in _ENTRY_KEYS:
                yield item.get("id")
            yield from (value for inner, value in item.items() if inner in _ENTRY_ID_KEYS)


def _session_event(event: dict[str, Any]) -> dict[str, Any]:
    """An RPC event with its streaming snapshot replaced (ledger ``streaming-snapshot``)."""
    kind = event.get("type")
    if kind == "message_update" and "usage" in event:
        return {**event, "usage": _STREAMING}
    message = event.get("message")
    if kind == "message_start" and isinstance(message, dict) and message.get("role") == "assistant":
        masked = dict(message)
        for key in ("content", "usage"):
            if key in masked:
                masked[key] = _STREAMING
        return {**event, "message": masked}
    return event


def _joined_bash_updates(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with consecutive ``bash_execution_update`` events of one ``id`` joined into
    one (ledger ``bash-output-chunks``): how a command's output is cut is the pipe's doing."""
    out: list[dict[str, Any]] = []
    for event in events:
        last = out[-1] if out else None
        if (
            event.get("type") == "bash_execution_update"
            and last is not None
            and last.get("type") == "bash_execution_update"
            and last.get("id") == event.get("id")
            and isinstance(last.get("delta"), str)
            and isinstance(event.get("delta"), str)
        ):
            out[-1] = {**last, "delta": last["delta"] + event["delta"]}
        else:
            out.append(event)
    return out


def _request(observed: Any) -> dict[str, Any]:
    request = observed.request
    body = request.body if request.body is not None else request.to_json()
    return {"kind": observed.kind, "index": observed.index, "aborted": observed.aborted, "body": body}


def _masked(text: str) -> str:
    """``text`` with every id, digest and timestamp replaced by its kind."""
    for pattern, token in (
        (_UUID, "<uuid>"),
        (_CUT_UUID, "<uuid>[:]"),
        (_ISO, "<ts>"),
        (_MINUTE, "<minute>"),
        (_DIGEST, "<digest>"),
        (_ENTRY_ID, "<id>"),
    ):
        text = pattern.sub(token, text)
    return text


def _artifact_order(norm: Normaliser) -> Callable[[tuple[str, str | None]], tuple[str, ...]]:
    """Artifacts in an order neither their random ids nor the machine's directories decide: by
    name and text with the directories named and the ids masked, the raw name last. Sorted by
    raw name, two pending Briefs (``<eventId>.md``, a random UUID each) came in either order,
    their ids were numbered by first appearance in that order, and half the runs of "another
    extension cancels the compaction" differed from real Pi. With the directories left in, a
    Brief's ``sessionFile`` (an absolute path under the run's directory) sorted it against a
    planted archive by where the run happened to be (``compare`` in ``/dev/shm``: "an archived
    Brief is never summary or prompt input" differed in order only).

    Artifacts that still tie (two pending Briefs of one session, the same but for their ids) are
    ordered by the numbers their ids got in the channels before the artifacts (a notification
    named each when it was written): sorted by raw name, two Briefs named by random event ids came
    in either order on real Pi ("status shows the path of every stale pending Brief" differed in
    about half its runs). Ties beyond that are identical once numbered, in either order."""

    def key(item: tuple[str, str | None]) -> tuple[str, ...]:
        name, text = item
        return (
            _masked(norm.places(name)),
            _masked(norm.places(text or "")),
            norm.known(name),
            norm.known(text or ""),
            name,
        )

    return key


def normalise_observation(
    observation: Observation,
    *,
    artifacts: Iterable[str] | Mapping[str, bytes] = (),
    seconds: float | None = None,
    scenario: str | None = None,
) -> dict[str, Any]:
    """The scenario's observation as a comparable JSON record (see the module docstring)."""
    project = str(observation.project_dir)
    norm = Normaliser(
        {
            "$WORK": str(observation.project_dir.parent),
            "$PROJECT": project,
            "$AGENT": str(observation.agent_dir),
            "$SESSIONS": str(observation.session_dir),
        },
        untimed_setup_failures=observation.target == "pi",
    )
    if observation.session_id:
        norm.uuid(observation.session_id)
    file_lines = observation.session_file_entries()
    norm.learn_ids(e.get("id") for e in observation.entries)
    norm.learn_ids(e.get("id") for e in file_lines[1:])
    norm.know_ids(_run_entry_ids(observation))
    texts: dict[str, str | None] = (
        {name: data.decode("utf-8", errors="replace") for name, data in artifacts.items()}
        if isinstance(artifacts, Mapping)
        else dict.fromkeys(artifacts)
    )
    files = dict(sorted(texts.items(), key=_artifact_order(norm)))
    norm.learn_ids(found for text in files.values() if text for found in _BRIEF_ENTRY_ID.findall(text))
    record: dict[str, Any] = {
        "scenario": scenario,
        "target": observation.target,
        "seconds": None if seconds is None else round(seconds, 4),
        "session_id": norm.value(observation.session_id),
        "session_file_name": norm.value(observation.session_file.name if observation.session_file else None),
        "operations": [
            norm.value({"name": o.name, "ok": o.ok, "error": o.error, "disposition": o.disposition})
            for o in observation.operations
        ],
        "held_operations": [
            norm.value(
                {
                    "request": h.request,
                    "operation": h.operation,
                    "name": h.outcome.name,
                    "ok": h.outcome.ok,
                    "error": h.outcome.error,
                    "disposition": h.outcome.disposition,
                }
            )
            for h in observation.held_operations
        ],
        "session_events": [
            norm.value(_session_event(e)) for e in _joined_bash_updates(observation.rpc_events)
        ],
        "extension_events": norm.value(observation.extension_events),
        "notifications": [norm.value({"message": m, "type": t}) for m, t in observation.notifications],
        "statuses": norm.value(dict(sorted(observation.statuses.items()))),
        "widgets": norm.value(observation.widgets),
        "dialogs": norm.value(observation.dialogs),
        "model_requests": [norm.value(_request(r)) for r in observation.model_requests],
        "entries": norm.value(observation.entries),
        "session_file": norm.value(file_lines),
    }
    # Last, and ordered again now that the other channels numbered the ids they name.
    files = dict(sorted(files.items(), key=_artifact_order(norm)))
    record["artifacts"] = {
        norm.text(name): None if text is None else norm.text(text) for name, text in files.items()
    }
    return record


def write_observation_record(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_indented(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# ====================================================================== differences
@dataclass
class Difference:
    """One channel that differs between the simulator's and real Pi's record."""

    channel: str
    detail: list[str]
    explained_by: list[str] = field(default_factory=list)
    explained: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "explained": self.explained,
            "explained_by": self.explained_by,
            "detail": self.detail,
        }


#: A known difference's neutraliser: (channel, sim value, real value) -> the two values with
#: the known difference removed.
Neutraliser = Callable[[str, Any, Any], tuple[Any, Any]]


def _lines(value: Any) -> list[str]:
    """One line per leaf: ``path = value`` (keys in order), so a diff names the exact field."""
    out: list[str] = []

    def walk(item: Any, path: str) -> None:
        if isinstance(item, dict):
            if not item:
                out.append(f"{path} = {{}}")
            for key, sub in item.items():
                walk(sub, f"{path}.{key}" if path else str(key))
        elif isinstance(item, list):
            if not item:
                out.append(f"{path} = []")
            for index, sub in enumerate(item):
                walk(sub, f"{path}[{index}]")
        else:
            out.append(f"{path} = {json.dumps(item, ensure_ascii=False)}")

    walk(value, "")
    return out


def describe(sim: Any, real: Any, limit: int = 16) -> list[str]:
    """A short unified diff (``-`` simulator, ``+`` real Pi) of two channel values, one line per
    field (``[3].message.usage.input = 598``)."""
    out = [
        line
        for line in difflib.unified_diff(_lines(sim), _lines(real), "sim", "pi", n=0, lineterm="")
        if not line.startswith(("---", "+++"))
    ]
    if len(out) > limit:
        out = [*out[:limit], f"... ({len(out) - limit} more lines)"]
    return [line if len(line) <= 400 else line[:400] + "…" for line in out]


def diff_records(
    sim: dict[str, Any],
    real: dict[str, Any],
    known: Iterable[tuple[str, Neutraliser]] = (),
) -> list[Difference]:
    """Differences per channel; each is explained when the ``known`` neutralisers remove it."""
    differences: list[Difference] = []
    known = list(known)
    for channel in CHANNELS:
        sim_value, real_value = sim.get(channel), real.get(channel)
        if sim_value == real_value and json.dumps(sim_value) == json.dumps(real_value):
            continue
        raw = describe(sim_value, real_value)
        used: list[str] = []
        for name, neutralise in known:
            new_sim, new_real = neutralise(channel, sim_value, real_value)
            if (new_sim, new_real) != (sim_value, real_value):
                used.append(name)
                sim_value, real_value = new_sim, new_real
        if json.dumps(sim_value) == json.dumps(real_value):
            differences.append(Difference(channel, raw or ["(key order)"], used, explained=True))
        else:
            differences.append(
                Difference(channel, describe(sim_value, real_value) or ["(key order)"], used, explained=False)
            )
    return differences
