"""Pi's SessionManager: an append-only entry tree in a JSONL file (session-manager.js).

The file format is Pi's, byte for byte in shape: a v3 header line, then one compact JSON
object per entry, keys in Pi's order, ``undefined`` fields left out. Modelled quirks:

* **Lazy persistence** (§9.12): nothing is written until the session holds a user or
  assistant message; then every buffered entry is written at once (``open(..., "x")``)
  and later entries are appended one line each. ``get_session_file()`` names a path that
  may not exist yet.
* **Ids** (§9.13): 8 hex characters, re-drawn on collision; session ids are UUIDv7; the
  file is ``<ISO timestamp with ':' and '.' as '-'>_<sessionId>.jsonl``.
* **``fromHook``** (§9.8): compaction entries store the event's ``fromExtension`` under the
  legacy key ``fromHook``; a Pi-generated summary writes an explicit ``false``.
* **``firstKeptEntryId``** (§9.7): ``None`` becomes the entry's own id (keeps nothing).

Unlike Pi, the branch path and the context projection are maintained incrementally, so a
long session costs time linear in its length (Pi recomputes them from the root).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.scenario.session_id import check_session_id
from pi_continuity_harness.simulator.determinism import SeededRandom, VirtualClock, iso_from_ms
from pi_continuity_harness.simulator.messages import (
    UNDEFINED,
    Message,
    _Undefined,
    compaction_summary_message,
    current_system_message,
    custom_message,
)

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ProjectedEntry",
    "SessionFileError",
    "SessionManager",
    "SessionProjection",
    "dumps_entry",
    "entry_to_context_messages",
    "js_trim_end",
    "load_entries",
]

CURRENT_SESSION_VERSION = 3
Entry = dict[str, Any]

#: What JavaScript's ``String.prototype.trim`` removes (ECMAScript WhiteSpace and
#: LineTerminator): not Python's ``str.strip()`` set, which also takes U+001C-U+001F and U+0085
#: but leaves U+FEFF.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LINE_BREAKS = re.compile(r"[\r\n]+")


def js_trim(text: str) -> str:
    """JavaScript's ``text.trim()``."""
    return text.strip(_JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    """JavaScript's ``text.trimEnd()``."""
    return text.rstrip(_JS_WHITESPACE)


class SessionFileError(SimulatorError, RuntimeError):
    """A session file that is not a Pi session."""


#: ``json.dumps``'s encoder for :func:`dumps_entry`, made once: ``json.dumps`` with arguments
#: makes a new ``JSONEncoder`` at every call (about 1 us; every entry Pi appends is encoded).
_ENTRY_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps_entry(entry: Entry) -> str:
    """``JSON.stringify(entry)``: compact, non-ASCII kept, a lone surrogate escaped, and a
    number that is not finite written as ``null``.

    ``JSON.stringify`` writes ``NaN`` and the infinities as ``null`` (ECMA-262
    SerializeJSONProperty: a non-finite Number serialises as ``"null"``); Python's ``json``
    writes ``NaN``/``Infinity``, which ``JSON.parse`` refuses, so Pi would skip the whole line
    when it reads the file back (``parseSessionEntryLine``). A compaction's ``tokensBefore`` is
    ``NaN`` when a kept user message's text is a number (``messages.estimate_tokens``); the entry
    in memory keeps the float, as Pi's keeps its ``NaN``, and the file holds ``null``, as Pi's."""
    try:
        text = _ENTRY_ENCODER.encode(entry)
    except ValueError as error:
        if not str(error).startswith("Out of range float values"):
            raise
        text = json.dumps(_finite_or_null(entry), ensure_ascii=False, separators=(",", ":"))
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _escape_lone_surrogates(text)


def _finite_or_null(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by ``None`` (containers copied)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_null(item) for item in value]
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def _escape_lone_surrogates(text: str) -> str:
    """``JSON.stringify`` is well-formed (ECMA-262 QuoteJSONString): a surrogate pair is the
    character it makes, written as it is, and a lone surrogate is the escape ``\\udXXX``
    (lowercase hex), so Pi's session file is UTF-8 even when an entry holds one (a Python
    extension's string, which the bridge carries as such). Python's ``json.dumps`` left the
    surrogate raw, and writing the line raised ``UnicodeEncodeError``."""
    text = _PAIR.sub(lambda m: chr(0x10000 + ((ord(m[1]) - 0xD800) << 10) + ord(m[2]) - 0xDC00), text)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def load_entries(path: str) -> list[Entry]:
    """Parse a session file, skipping malformed lines as Pi does (parseSessionEntryLine)."""
    entries: list[Entry] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                entries.append(value)
    return entries


def ms_of_iso(iso: str) -> int:
    """Milliseconds of a JavaScript ISO timestamp (``...Z``)."""
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _tree_time(timestamp: Any) -> float:
    """``new Date(timestamp).getTime()`` for ``getTree``'s sort (session-manager.js:1168). An
    entry without a parsable timestamp sorts first here; Pi's comparator answers ``NaN`` for it,
    which its sort takes as equal (no entry the harness writes has one)."""
    try:
        return float(ms_of_iso(str(timestamp)))
    except ValueError:
        return -math.inf


def entry_to_context_messages(entry: Entry) -> list[Message]:
    """``sessionEntryToContextMessages``: what one entry contributes to model context."""
    kind = entry.get("type")
    if kind == "message":
        message = entry["message"]
        if message.get("role") == "system" and message.get("content") is None:
            return [{**message, "content": ""}]
        if message.get("role") in ("user", "assistant", "toolResult") and message.get("content") is None:
            return [{**message, "content": []}]
        return [message]
    if kind == "custom_message":
        return [
            custom_message(
                entry.get("customType", UNDEFINED),
                entry.get("content") if entry.get("content") is not None else [],
                entry.get("display", UNDEFINED),
                entry.get("details", UNDEFINED),
                ms_of_iso(entry["timestamp"]),
            )
        ]
    if kind == "branch_summary" and entry.get("summary"):
        return [
            {
                "role": "branchSummary",
                "summary": entry["summary"],
                "fromId": entry.get("fromId"),
                "timestamp": ms_of_iso(entry["timestamp"]),
            }
        ]
    if kind == "compaction":
        summary = compaction_summary_message(
            entry["summary"], entry["tokensBefore"], ms_of_iso(entry["timestamp"])
        )
        return [entry["systemMessage"], summary] if entry.get("systemMessage") else [summary]
    return []


def _project_entry(entry: Entry, edit: Entry | None) -> list[Message]:
    """``projectContextEntry``: apply the latest context edit of an entry."""
    messages = entry_to_context_messages(entry)
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return []
    out: list[Message] = []
    for message in messages:
        if message.get("role") not in ("user", "assistant", "toolResult", "custom"):
            out.append(message)
            continue
        content = replacement.get("content")
        if message.get("role") in ("assistant", "toolResult") and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.append({**message, "content": content})
    return out


@dataclass(frozen=True)
class ProjectedEntry:
    source: Entry
    messages: list[Message]


@dataclass(frozen=True)
class SessionProjection:
    entries: list[ProjectedEntry]
    messages: list[Message]
    thinking_level: str
    model: tuple[str, str] | None


@functools.lru_cache(maxsize=64)
def _directory_text(directory: str) -> str:
    """``str(Path(directory))``: the directory as ``pathlib`` spells it (normalised)."""
    return str(Path(directory))


def _file_in(directory: str, name: str) -> str:
    """``str(Path(directory) / name)`` for ``name``, one path component (a session file's name:
    a timestamp and an id of ``[A-Za-z0-9._-]``, ``session_id.py``), without parsing the
    directory into a ``Path`` at every new session (issue 16)."""
    base = _directory_text(directory)
    if base == ".":
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


class SessionManager:
    """One session's entries, leaf pointer and (lazily created) file."""

    def __init__(
        self,
        *,
        cwd: str,
        session_dir: str,
        clock: VirtualClock,
        rng: SeededRandom,
        persist: bool = True,
        write_line: Callable[[str, str, str], None] | None = None,
        on_append: Callable[[Entry, bool], None] | None = None,
    ) -> None:
        self._cwd = cwd
        self._session_dir = session_dir
        self._clock = clock
        self._rng = rng
        self._persist = persist
        self._write = write_line or _default_write_line
        self._on_append = on_append
        self._session_id = ""
        self._session_file: str | None = None
        self._entries: list[Entry] = []  # header first, like Pi's fileEntries
        self._by_id: dict[str, Entry] = {}
        self._leaf_id: str | None = None
        self._flushed = False
        self._version = 0
        self._path: list[Entry] = []
        self._path_pos: dict[str, int] = {}
        self._path_compaction: int = -1
        self._path_invalidating: int = -1
        self._path_model: tuple[str, str] | None = None
        #: The level of the branch's last ``thinking_level_change`` (None: the branch has none;
        #: the projection's level is then ``off``).
        self._path_thinking_entry: str | None = None
        self._projection_cache: tuple[int, SessionProjection] | None = None

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(
        cls,
        *,
        cwd: str,
        session_dir: str,
        clock: VirtualClock,
        rng: SeededRandom,
        session_id: str | None = None,
        parent_session: str | None = None,
        persist: bool = True,
        write_line: Callable[[str, str, str], None] | None = None,
        on_append: Callable[[Entry, bool], None] | None = None,
    ) -> SessionManager:
        manager = cls(
            cwd=cwd,
            session_dir=session_dir,
            clock=clock,
            rng=rng,
            persist=persist,
            write_line=write_line,
            on_append=on_append,
        )
        manager.new_session(session_id=session_id, parent_session=parent_session)
        return manager

    @classmethod
    def open(
        cls,
        path: str,
        *,
        cwd: str,
        session_dir: str,
        clock: VirtualClock,
        rng: SeededRandom,
        write_line: Callable[[str, str, str], None] | None = None,
        on_append: Callable[[Entry, bool], None] | None = None,
    ) -> SessionManager:
        """``--session <path>``: load an existing file, or keep the explicit path for a new one."""
        manager = cls(
            cwd=cwd, session_dir=session_dir, clock=clock, rng=rng, write_line=write_line, on_append=on_append
        )
        manager._session_file = path
        if os.path.exists(path):
            entries = load_entries(path)
            if not entries:
                if os.path.getsize(path) > 0:
                    raise SessionFileError(f"Session file is not a valid pi session: {path}")
                manager.new_session()
                manager._session_file = path
                manager._rewrite_file()
                manager._flushed = True
                return manager
            manager._load(entries)
            manager._session_file = path
            manager._flushed = True
        else:
            manager.new_session()
            manager._session_file = path
        return manager

    def branch_preview(self) -> SessionManager:
        """``SessionManager.inMemory(cwd, undefined, [header, ...getBranch()])``
        (agent-session.js:665-672): the current branch in a manager that writes nothing, for
        applying drafts to see what they would make (its ids and timestamps come from the same
        seeded source and clock)."""
        header = self.get_header()
        if header is None:
            raise ValueError("Session header is missing")
        preview = SessionManager(
            cwd=self._cwd, session_dir=self._session_dir, clock=self._clock, rng=self._rng, persist=False
        )
        preview._load([header, *self.get_branch()])
        return preview

    def new_session(self, *, session_id: str | None = None, parent_session: str | None = None) -> str | None:
        if session_id is not None:
            # ``assertValidSessionId`` (session-manager.js:708-709): an id never names a path.
            check_session_id(session_id)
        header = self._begin(session_id, parent_session)
        self._entries = [header]
        self._by_id = {}
        self._leaf_id = None
        self._flushed = False
        self._rebuild_path()
        return self._session_file

    def _begin(self, session_id: str | None, parent_session: str | None) -> Entry:
        """A new session's id, header and (persisted) file name, as ``newSession`` and
        ``createBranchedSession`` both make them (session-manager.js): the file is
        ``<timestamp with ':' and '.' as '-'>_<id>.jsonl`` in the session directory."""
        self._session_id = session_id or self._rng.uuid7(self._clock.now_ms() + 0)
        timestamp = iso_from_ms(self._clock.now_ms())
        header: Entry = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": self._session_id,
            "timestamp": timestamp,
            "cwd": self._cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        if self._persist:
            file_ts = timestamp.replace(":", "-").replace(".", "-")
            self._session_file = _file_in(self._session_dir, f"{file_ts}_{self._session_id}.jsonl")
        return header

    def create_branched_session(self, leaf_id: str) -> str | None:
        """``createBranchedSession(leafId)`` (session-manager.js:1226-1330): a new session whose
        entries are the path from the root to ``leaf_id``, its header linking the previous file.

        Persisted: a new file, written at once when the path has a conversation (else at the
        first append, as ``_persist``); in memory: the entries are replaced in place. The path's
        ``label`` entries are dropped and the rest re-chained (the first entry's ``parentId``
        null, each next one's its kept predecessor; a compaction's ``firstKeptEntryId`` that
        named a dropped label names the next kept entry, :1232-1258); then the session's current
        labels of the kept entries (``labelsById`` in its order, with ``labelTimestampsById``)
        are written after them as new ``label`` entries, chained (:1270-1320).
        """
        previous_file = self._session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise SessionFileError(f"Entry {leaf_id} not found")
        labels = self._current_labels()
        copied: list[Entry] = []
        replacement: dict[Any, str] = {}
        pending: list[str] = []
        parent: str | None = None
        for entry in path:
            if entry.get("type") == "label":
                pending.append(entry["id"])
                continue
            for label_id in pending:
                replacement[label_id] = entry["id"]
            pending.clear()
            kept = {**entry, "parentId": parent}
            if entry.get("type") == "compaction" and entry.get("firstKeptEntryId") != entry["id"]:
                first = entry.get("firstKeptEntryId")
                kept["firstKeptEntryId"] = replacement.get(first, first)
            copied.append(kept)
            parent = entry["id"]
        # The new session's id first, then the labels' ids, in Pi's order (:1259, :1285).
        header = self._begin(None, previous_file if self._persist else None)
        kept_ids = {e["id"] for e in copied}
        for target_id, (label, label_timestamp) in labels.items():
            if target_id not in kept_ids:
                continue
            new_id = self._rng.entry_id(lambda candidate: candidate in kept_ids)
            copied.append(
                {
                    "type": "label",
                    "id": new_id,
                    "parentId": parent,
                    "timestamp": label_timestamp,
                    "targetId": target_id,
                    "label": label,
                }
            )
            kept_ids.add(new_id)
            parent = new_id
        self._entries = [header, *copied]
        self._by_id = {e["id"]: e for e in copied}
        self._leaf_id = copied[-1]["id"] if copied else None
        self._rebuild_path()
        if not self._persist:
            return None
        if self._has_conversation():
            self._rewrite_file()
            self._flushed = True
        else:
            self._flushed = False
        return self._session_file

    def _load(self, entries: list[Entry]) -> None:
        header = next((e for e in entries if e.get("type") == "session"), None)
        if header is None:
            raise SessionFileError("session file has no header")
        migrated = _migrate(entries)
        self._entries = entries
        self._session_id = header["id"]
        self._by_id = {}
        self._leaf_id = None
        for entry in entries:
            if entry.get("type") == "session":
                continue
            self._by_id[entry["id"]] = entry
            self._leaf_id = entry["id"]
        self._rebuild_path()
        if migrated:
            self._rewrite_file()

    # ------------------------------------------------------------------ persistence
    def _rewrite_file(self) -> None:
        if not self._persist or not self._session_file:
            return
        text = "".join(dumps_entry(e) + "\n" for e in self._entries)
        self._write(self._session_file, text, "w")

    def _has_conversation(self) -> bool:
        """``_hasConversation()``: derived from the entries, so a rolled-back append does not count."""
        return any(
            e.get("type") == "message" and e["message"].get("role") in ("user", "assistant")
            for e in self._entries
        )

    def _persist_entry(self, entry: Entry) -> bool:
        session_file = self._session_file
        if not self._persist or not session_file:
            return False
        if self._flushed:  # every append after the first write: one line
            self._write(session_file, dumps_entry(entry) + "\n", "a")
            return True
        if not self._has_conversation():
            return False
        text = "".join([dumps_entry(e) + "\n" for e in self._entries])
        self._write(session_file, text, "x")
        self._flushed = True
        return True

    def _append_entry(self, entry: Entry) -> str:
        previous_leaf = self._leaf_id
        self._entries.append(entry)
        self._by_id[entry["id"]] = entry
        self._leaf_id = entry["id"]
        try:
            persisted = self._persist_entry(entry)
        except Exception:
            self._entries.pop()
            del self._by_id[entry["id"]]
            self._leaf_id = previous_leaf
            raise
        self._extend_path(entry)
        if self._on_append is not None:
            self._on_append(entry, persisted)
        return str(entry["id"])

    def _base(self, kind: str) -> Entry:
        return {
            "type": kind,
            # The id index's own membership test, not a lambda around it (every entry).
            "id": self._rng.entry_id(self._by_id.__contains__),
            "parentId": self._leaf_id,
            "timestamp": self._clock.now_iso(),
        }

    # ------------------------------------------------------------------ appends
    def append_message(self, message: Message) -> str:
        entry = self._base("message")
        entry["message"] = message
        return self._append_entry(entry)

    def append_thinking_level_change(self, level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = level
        return self._append_entry(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self._append_entry(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any,
        from_hook: bool,
        usage: Any = UNDEFINED,
    ) -> str:
        """``appendCompaction`` (session-manager.js:901-920): ``details`` and ``usage`` as given,
        :data:`UNDEFINED` no key (a draft without them; the simulator's own "none"), ``None``
        JSON's ``null`` (a boundary draft's explicit ``null``)."""
        ms = self._clock.now_ms()
        system = current_system_message(self.build_session_projection().messages)
        entry_id = self._rng.entry_id(self._by_id.__contains__)
        entry: Entry = {
            "type": "compaction",
            "id": entry_id,
            "parentId": self._leaf_id,
            "timestamp": iso_from_ms(ms),
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id if first_kept_entry_id is not None else entry_id,
            "tokensBefore": tokens_before,
        }
        if details is not UNDEFINED:
            entry["details"] = details
        if usage is not UNDEFINED:
            entry["usage"] = usage
        entry["fromHook"] = from_hook
        if system is not None:
            entry["systemMessage"] = {**system, "timestamp": ms}
        return self._append_entry(entry)

    def append_custom_entry(self, custom_type: str, data: Any = UNDEFINED) -> str:
        """``appendCustomEntry`` (session-manager.js:921-932): ``data`` as given, :data:`UNDEFINED`
        (a boundary draft without it; the default) no key, ``None`` JSON's ``null``."""
        entry: Entry = {"type": "custom", "customType": custom_type}
        if data is not UNDEFINED:
            entry["data"] = data
        base = self._base("custom")
        entry.update({"id": base["id"], "parentId": base["parentId"], "timestamp": base["timestamp"]})
        return self._append_entry(entry)

    def append_custom_message_entry(
        self,
        custom_type: str | _Undefined,
        content: Any,
        display: bool | _Undefined,
        details: Any = UNDEFINED,
    ) -> str:
        """``appendCustomMessageEntry`` (session-manager.js:968-981): ``{type, customType, content,
        display, details, id, parentId, timestamp}``, where a key whose value is ``undefined``
        (:data:`UNDEFINED`; a boundary draft without it) is no key, as ``JSON.stringify`` writes
        it; ``None`` is JSON's ``null``, written as Pi writes a draft's explicit ``"details": null``
        (the simulator's own callers pass :data:`UNDEFINED` for a message without details)."""
        entry: Entry = {"type": "custom_message"}
        if custom_type is not UNDEFINED:
            entry["customType"] = custom_type
        if content is not UNDEFINED:
            entry["content"] = content
        if display is not UNDEFINED:
            entry["display"] = display
        if details is not UNDEFINED:
            entry["details"] = details
        base = self._base("custom_message")
        entry.update({"id": base["id"], "parentId": base["parentId"], "timestamp": base["timestamp"]})
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        """``appendSessionInfo`` (session-manager.js:935-946): ``name.replace(/[\\r\\n]+/g, " ")
        .trim()``: a run of line breaks (``"\\r\\n"``, ``"\\n\\n"``) is one space, and only what
        JavaScript's ``trim`` takes is trimmed (U+001F stays)."""
        entry = self._base("session_info")
        entry["name"] = js_trim(_LINE_BREAKS.sub(" ", name))
        return self._append_entry(entry)

    def append_context_edit(self, target_id: str, replacement: Any) -> str:
        """``appendContextEdit`` (session-manager.js:985-1019): ``null`` or an object with string
        or array ``content``; a string replacing an assistant or tool result becomes a text
        block."""
        if replacement is not None and (
            not isinstance(replacement, dict) or not isinstance(replacement.get("content"), str | list)
        ):
            raise ValueError("Context edit replacement must be null or contain string/array content")
        target = self._by_id.get(target_id)
        if target is None:
            raise ValueError(f"Entry {target_id} not found")
        if target_id not in self._path_pos:
            raise ValueError(f"Entry {target_id} is not on the active branch")
        editable = target.get("type") == "custom_message" or (
            target.get("type") == "message"
            and target["message"].get("role") in ("user", "assistant", "toolResult")
        )
        if not editable:
            raise ValueError(f"Entry {target_id} does not contribute editable model content")
        role = target["message"].get("role") if target.get("type") == "message" else "custom"
        if (
            replacement is not None
            and role in ("assistant", "toolResult")
            and isinstance(replacement["content"], str)
        ):
            replacement = {"content": [{"type": "text", "text": replacement["content"]}]}
        entry = self._base("context_edit")
        entry["targetId"] = target_id
        entry["replacement"] = replacement
        return self._append_entry(entry)

    # ------------------------------------------------------------------ reading
    def get_session_id(self) -> str:
        return self._session_id

    def get_session_file(self) -> str | None:
        return self._session_file

    def get_session_dir(self) -> str:
        return self._session_dir

    def get_cwd(self) -> str:
        return self._cwd

    def is_persisted(self) -> bool:
        return self._persist

    def is_flushed(self) -> bool:
        return self._flushed

    def get_header(self) -> Entry | None:
        return next((e for e in self._entries if e.get("type") == "session"), None)

    def get_entries(self) -> list[Entry]:
        return [e for e in self._entries if e.get("type") != "session"]

    def get_entry(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> Entry | None:
        return self._by_id.get(self._leaf_id) if self._leaf_id else None

    def _path_thinking(self) -> str:
        """The branch's thinking level for its projection: ``off`` without a level change."""
        return "off" if self._path_thinking_entry is None else self._path_thinking_entry

    def branch_thinking_entry(self) -> str | None:
        """The level the branch's last ``thinking_level_change`` records, None when the branch
        has none (``getBranch().findLast(...)``, agent-session.js:357; sdk.js:86)."""
        return self._path_thinking_entry

    def get_branch(self, from_id: str | None = None) -> list[Entry]:
        if from_id is None or from_id == self._leaf_id:
            return list(self._path)
        path: list[Entry] = []
        current = self._by_id.get(from_id)
        while current is not None:
            path.append(current)
            parent = current.get("parentId")
            current = self._by_id.get(parent) if parent else None
        path.reverse()
        return path

    def branch_view(self) -> list[Entry]:
        """The current path without a copy (host-internal; do not mutate)."""
        return self._path

    def branch_position(self, entry_id: str) -> int:
        return self._path_pos.get(entry_id, -1)

    def latest_invalidating_position(self) -> int:
        """Path index of the newest ``context_edit`` or ``compaction``, or -1."""
        return self._path_invalidating

    def latest_compaction(self) -> Entry | None:
        return self._path[self._path_compaction] if self._path_compaction >= 0 else None

    def get_session_name(self) -> str | None:
        for entry in reversed(self._entries):
            if entry.get("type") == "session_info":
                # ``entry.name?.trim() || undefined`` (session-manager.js:948-958)
                name = js_trim(entry.get("name") or "")
                return name or None
        return None

    def entry_count(self) -> int:
        return len(self._entries) - 1

    # ------------------------------------------------------------------ branch/projection
    def _rebuild_path(self) -> None:
        self._path = []
        self._path_pos = {}
        self._path_compaction = -1
        self._path_invalidating = -1
        self._path_model = None
        self._path_thinking_entry = None
        current = self._by_id.get(self._leaf_id) if self._leaf_id else None
        chain: list[Entry] = []
        while current is not None:
            chain.append(current)
            parent = current.get("parentId")
            current = self._by_id.get(parent) if parent else None
        chain.reverse()
        for entry in chain:
            self._add_to_path(entry)
        self._version += 1

    def _extend_path(self, entry: Entry) -> None:
        path = self._path
        parent = entry.get("parentId")
        if (path[-1]["id"] != parent) if path else (parent is not None):
            self._rebuild_path()
            return
        self._add_to_path(entry)
        self._version += 1
        self._extend_projection(entry)

    def _extend_projection(self, entry: Entry) -> None:
        """Extend a cached projection by one appended entry instead of rebuilding it.

        An entry appended at the leaf goes to the end of the context entries, and no
        context edit can target it yet, so the projection grows by exactly that entry.
        A ``compaction`` or ``context_edit`` changes earlier entries: those rebuild.
        This keeps a long session linear (Pi rebuilds from the root every time).
        """
        cached = self._projection_cache
        if cached is None or cached[0] != self._version - 1:
            return
        if entry.get("type") in ("compaction", "context_edit"):
            return
        old = cached[1]
        messages = _project_entry(entry, None)
        projection = SessionProjection(
            [*old.entries, ProjectedEntry(entry, messages)],
            [*old.messages, *messages],
            self._path_thinking(),
            self._path_model,
        )
        self._projection_cache = (self._version, projection)

    def _add_to_path(self, entry: Entry) -> None:
        index = len(self._path)
        self._path.append(entry)
        self._path_pos[entry["id"]] = index
        kind = entry.get("type")
        if kind == "compaction":
            self._path_compaction = index
            self._path_invalidating = index
        elif kind == "context_edit":
            self._path_invalidating = index
        elif kind == "thinking_level_change":
            self._path_thinking_entry = entry.get("thinkingLevel", "off")
        elif kind == "model_change":
            self._path_model = (entry["provider"], entry["modelId"])
        elif kind == "message" and entry["message"].get("role") == "assistant":
            self._path_model = (entry["message"].get("provider"), entry["message"].get("model"))

    def branch(self, entry_id: str) -> None:
        if entry_id not in self._by_id:
            raise ValueError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id
        self._rebuild_path()

    def reset_leaf(self) -> None:
        """``resetLeaf`` (session-manager.js:1193-1195): the next append starts a new root."""
        self._leaf_id = None
        self._rebuild_path()

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """``appendLabelChange`` (session-manager.js:1055-1075): a ``label`` entry at the leaf."""
        if target_id not in self._by_id:
            raise ValueError(f"Entry {target_id} not found")
        entry = self._base("label")
        entry["targetId"] = target_id
        if label is not None:
            # ``undefined`` (a Python ``None``): JSON has no ``label`` key.
            entry["label"] = label
        return self._append_entry(entry)

    def get_label(self, entry_id: str) -> str | None:
        """``getLabel`` (session-manager.js:1047-1049): ``labelsById``, which every ``label``
        entry of the session sets (a non-empty label) or clears, in file order, whatever the
        branch (``_buildIndex``, :752-760; ``appendLabelChange``, :1068-1074). Read from the
        entries at each call: only an extension asks."""
        found: str | None = None
        for entry in self._entries:
            if entry.get("type") == "label" and entry.get("targetId") == entry_id:
                label = entry.get("label")
                found = label if label else None
        return found

    def _current_labels(self) -> dict[Any, tuple[Any, Any]]:
        """``labelsById`` with ``labelTimestampsById`` (``_buildIndex``, session-manager.js:752-760;
        ``appendLabelChange``, :1068-1074): every ``label`` entry of the session, in file order,
        sets its target's label (a non-empty one) or deletes it. A dict keeps a ``Map``'s order:
        a set of a present key stays in place, a delete and a later set move it to the end (the
        order ``createBranchedSession`` writes labels in, :1274)."""
        labels: dict[Any, tuple[Any, Any]] = {}
        for entry in self._entries:
            if entry.get("type") == "label":
                if entry.get("label"):
                    labels[entry.get("targetId")] = (entry["label"], entry.get("timestamp"))
                else:
                    labels.pop(entry.get("targetId"), None)
        return labels

    def get_tree(self) -> list[dict[str, Any]]:
        """``getTree`` (session-manager.js:1136-1172): a node per entry (header left out), with
        the entry's current label and its label entry's timestamp (``labelsById``,
        ``labelTimestampsById``: set by a non-empty label, removed by an empty one, in file
        order); roots are entries whose ``parentId`` is null, their own id or unknown; children
        are in file order, then sorted by ``new Date(timestamp)`` (a stable sort). The nodes
        hold the entries themselves, as Pi's do; the extension's view copies them."""
        labels = self._current_labels()
        nodes: dict[Any, dict[str, Any]] = {}
        order: list[dict[str, Any]] = []
        for entry in self.get_entries():
            node: dict[str, Any] = {"entry": entry, "children": []}
            if entry["id"] in labels:
                node["label"], node["labelTimestamp"] = labels[entry["id"]]
            nodes[entry["id"]] = node
            order.append(node)
        roots: list[dict[str, Any]] = []
        for node in order:
            parent_id = node["entry"].get("parentId")
            parent = None if parent_id is None or parent_id == node["entry"]["id"] else nodes.get(parent_id)
            (roots if parent is None else parent["children"]).append(node)
        for node in order:
            node["children"].sort(key=lambda child: _tree_time(child["entry"].get("timestamp")))
        return roots

    def build_context_entries(self) -> list[Entry]:
        """``buildContextEntries``: newest compaction, its kept range, then what follows it."""
        if self._path_compaction < 0:
            return list(self._path)
        compaction = self._path[self._path_compaction]
        kept_from = self._path_pos.get(compaction["firstKeptEntryId"], -1)
        out: list[Entry] = [compaction]
        if 0 <= kept_from < self._path_compaction:
            for entry in self._path[kept_from : self._path_compaction]:
                if entry.get("type") == "message" and entry["message"].get("role") == "system":
                    continue
                out.append(entry)
        out.extend(self._path[self._path_compaction + 1 :])
        return out

    def build_session_projection(self) -> SessionProjection:
        """``buildSessionProjection``: compaction-aware context with provenance (cached)."""
        cached = self._projection_cache
        if cached is not None and cached[0] == self._version:
            return cached[1]
        context_entries = self.build_context_entries()
        edits: dict[str, Entry] = {}
        for entry in context_entries:
            if entry.get("type") == "context_edit":
                edits[entry["targetId"]] = entry
        projected: list[ProjectedEntry] = []
        messages: list[Message] = []
        for index, source in enumerate(context_entries):
            if source.get("type") == "compaction" and index > 0:
                projected_messages: list[Message] = []
            else:
                projected_messages = _project_entry(source, edits.get(source["id"]))
            projected.append(ProjectedEntry(source, projected_messages))
            messages.extend(projected_messages)
        projection = SessionProjection(projected, messages, self._path_thinking(), self._path_model)
        self._projection_cache = (self._version, projection)
        return projection


def _default_write_line(path: str, text: str, mode: str) -> None:
    """Write ``text`` with ``mode``: ``x`` (first flush, exclusive), ``a`` (append), ``w``."""
    with open(path, mode, encoding="utf-8") as handle:
        handle.write(text)


def _migrate(entries: list[Entry]) -> bool:
    """v1 → v2 (ids and parent links) → v3 (``hookMessage`` role renamed ``custom``)."""
    header = next((e for e in entries if e.get("type") == "session"), None)
    version = header.get("version", 1) if header else 1
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        previous: str | None = None
        for index, entry in enumerate(entries):
            if entry.get("type") == "session":
                entry["version"] = 2
                continue
            entry["id"] = f"{index:08x}"
            entry["parentId"] = previous
            previous = entry["id"]
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 3
        elif entry.get("type") == "message" and entry.get("message", {}).get("role") == "hookMessage":
            entry["message"]["role"] = "custom"
    return True
