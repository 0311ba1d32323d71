"""Normalised observation records, and the differences between two of them.

A scenario's :class:`~.target.Observation` is turned into a plain JSON record
(:func:`normalise_observation`) that holds what both targets can observe, with everything
that legitimately differs between two runs replaced by stable placeholders:

* absolute paths: ``$WORK``, ``$PROJECT``, ``$AGENT``, ``$SESSIONS`` (the scenario's
  directories) and ``$PI_PACKAGE`` (where Pi is installed; the simulator names a fixed path);
* session ids and other UUIDs: ``<uuid1>``, ``<uuid2>``, ... in order of first appearance
  (the session header first); entry ids (8 hex digits): ``<id1>``, ...;
* ISO timestamps (also in file names) and ``timestamp`` fields: ``<ts>``; hex digests (16 to
  64 digits, of texts that hold such values): ``<digest>``.

Model requests keep their kind, index, model, abort flag, tools and, per message, its role and the
length of its normalised text (not the text). Entries keep type, role, custom type and
``fromHook``; the persisted session file keeps each line's type and key order; artifacts
keep their names. ``seconds`` is the scenario's wall-clock time.

:func:`diff_records` compares two records channel by channel and explains what it can with
:mod:`.known_differences`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.targets.target import Observation

__all__ = [
    "CHANNELS",
    "Difference",
    "Normaliser",
    "diff_records",
    "normalise_observation",
    "write_observation_record",
]

#: The record's comparable channels, in report order.
CHANNELS: tuple[str, ...] = (
    "operations",
    "session_events",
    "extension_events",
    "notifications",
    "statuses",
    "dialogs",
    "model_requests",
    "entries",
    "session_file",
    "artifacts",
)

_UUID = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])")
_ENTRY_ID = re.compile(r"(?<![0-9A-Za-z_-])[0-9a-f]{8}(?![0-9A-Za-z_-])")
_DIGEST = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{16,64}(?![0-9A-Za-z])")
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(?:[.-]\d{1,3})?Z")
_PI_PACKAGE = re.compile(r"[^\s\"'<>]*/node_modules/@earendil-works/pi-coding-agent")
_TIMESTAMP_KEYS = frozenset({"timestamp", "createdAt", "updatedAt"})


class Normaliser:
    """Replaces run-specific values by placeholders, consistently within one record."""

    def __init__(self, paths: dict[str, str]) -> None:
        # Longest first, so ``$PROJECT`` wins over ``$WORK`` for paths below the project.
        self._paths = sorted(((p, name) for name, p in paths.items() if p), key=lambda x: -len(x[0]))
        self._uuids: dict[str, str] = {}
        self._ids: dict[str, str] = {}

    def uuid(self, value: str) -> str:
        return self._uuids.setdefault(value, f"<uuid{len(self._uuids) + 1}>")

    def entry_id(self, value: str) -> str:
        return self._ids.setdefault(value, f"<id{len(self._ids) + 1}>")

    def learn_ids(self, values: Iterable[Any]) -> None:
        """Number these entry ids first (in this order), so equal sessions get equal numbers."""
        for value in values:
            if isinstance(value, str) and _ENTRY_ID.fullmatch(value):
                self.entry_id(value)

    def text(self, value: str) -> str:
        for path, name in self._paths:
            value = value.replace(path, name)
        value = _PI_PACKAGE.sub("$PI_PACKAGE", value)
        # A digest of text that holds run-specific values (ids, paths, times) differs with them.
        value = _DIGEST.sub("<digest>", value)
        value = _UUID.sub(lambda m: self.uuid(m.group(0)), value)
        value = _ISO.sub("<ts>", value)
        return _ENTRY_ID.sub(self._id_match, value)

    def _id_match(self, match: re.Match[str]) -> str:
        token = match.group(0)
        # An all-digit token is an entry id only when the session has it (else it is a number).
        if token in self._ids or not token.isdigit():
            return self.entry_id(token)
        return token

    def value(self, value: Any, key: str | None = None) -> Any:
        if key in _TIMESTAMP_KEYS and value is not None:
            return "<ts>"
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "thinking":
            parts.append(str(block.get("thinking", "")))
        elif block.get("type") == "toolCall":
            parts.append(str(block.get("name", "")) + json.dumps(block.get("arguments", {}), sort_keys=True))
    return "".join(parts)


def _entry_summary(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": entry.get("type")}
    message = entry.get("message")
    if isinstance(message, dict):
        out["role"] = message.get("role")
    if entry.get("customType") is not None:
        out["customType"] = entry.get("customType")
    if entry.get("type") == "compaction":
        out["fromHook"] = entry.get("fromHook")
    return out


def normalise_observation(
    observation: Observation,
    *,
    artifacts: Iterable[str] = (),
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
        }
    )
    if observation.session_id:
        norm.uuid(observation.session_id)
    norm.learn_ids(e.get("id") for e in observation.entries)
    file_lines = observation.session_file_entries()
    norm.learn_ids(e.get("id") for e in file_lines[1:])

    requests = []
    for request in observation.model_requests:
        req = request.request
        requests.append(
            {
                "kind": request.kind,
                "index": request.index,
                "model": req.model,
                "aborted": request.aborted,
                "system_chars": len(norm.text(req.system_prompt or "")),
                "tools": list(req.tools),
                "max_tokens": req.max_tokens,
                "messages": [
                    {"role": m.get("role"), "chars": len(norm.text(_content_text(m.get("content"))))}
                    for m in req.messages
                ],
            }
        )
    record: dict[str, Any] = {
        "scenario": scenario,
        "target": observation.target,
        "seconds": None if seconds is None else round(seconds, 4),
        "session_id": norm.value(observation.session_id),
        "session_file": norm.value(observation.session_file.name if observation.session_file else None),
        "operations": [
            norm.value({"name": o.name, "ok": o.ok, "error": o.error, "disposition": o.disposition})
            for o in observation.operations
        ],
        "session_events": norm.value(observation.session_events),
        "extension_events": norm.value(observation.extension_events),
        "notifications": [norm.value({"message": m, "type": t}) for m, t in observation.notifications],
        "statuses": norm.value(dict(sorted(observation.statuses.items()))),
        "dialogs": norm.value(observation.dialogs),
        "model_requests": requests,
        "entries": [norm.value(_entry_summary(e)) for e in observation.entries],
        "session_file_lines": [{"type": line.get("type"), "keys": list(line)} for line in file_lines],
        "artifacts": sorted(norm.text(name) for name in artifacts),
    }
    return record


def write_observation_record(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


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


def _channel_value(record: dict[str, Any], channel: str) -> Any:
    if channel == "session_file":
        return record.get("session_file_lines", [])
    return record.get(channel)


def _lines(value: Any) -> list[str]:
    if isinstance(value, list):
        return [json.dumps(item, sort_keys=True, ensure_ascii=False) for item in value]
    if isinstance(value, dict):
        return [json.dumps({k: v}, sort_keys=True, ensure_ascii=False) for k, v in sorted(value.items())]
    return [json.dumps(value, sort_keys=True, ensure_ascii=False)]


def describe(sim: Any, real: Any, limit: int = 12) -> list[str]:
    """A short unified diff (``-`` simulator, ``+`` real Pi) of two channel values."""
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
        sim_value, real_value = _channel_value(sim, channel), _channel_value(real, channel)
        if sim_value == real_value:
            continue
        raw = describe(sim_value, real_value)
        used: list[str] = []
        for name, neutralise in known:
            new_sim, new_real = neutralise(channel, sim_value, real_value)
            if (new_sim, new_real) != (sim_value, real_value):
                used.append(name)
                sim_value, real_value = new_sim, new_real
        if sim_value == real_value:
            differences.append(Difference(channel, raw, used, explained=True))
        else:
            differences.append(Difference(channel, describe(sim_value, real_value), used, explained=False))
    return differences
