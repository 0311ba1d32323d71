"""The suite's own reading of pi-blitz-handoff 2.0: what the agent reference fixes, and nothing more.

The reference document is a "meaning-equivalent derivative": it fixes names (the ``/sh``
command, the tools ``session_handoff_get_template``, ``session_handoff_finish`` and
``blitz_handoff``, the settings keys, the dossier and recovery file names, the widget's phase
lines ``Waiting for Session Handoff``, ``Writing Session Handoff``, ``Session Handoff
Finished``, ``Inputs deferred (N)``, the ``--- Deferred Prompt N of M ---`` boundaries) but
not the wording of any response, instruction or notification. The steps and the blitz
explorer read runs through this module, so an implementation that words things differently
passes, and one that breaks a rule fails:

* a Finish ID is the ID-like token a template response labels "Finish ID" (any case, any
  separator) or puts into a ``session_handoff_finish({ "id": ... })`` example: the only way a
  model can learn it;
* the dossier is ``<cwd>/<CONFIG_DIR_NAME>/handoff_<native session id>.md`` (fixed);
* the receiver is told to delete the dossier when its first prompt says to delete (or remove)
  the dossier's path, not negated; to keep it when it says to leave it unchanged and does not
  say to delete it. Paths are never read as words (a work directory named ``x-delete-y`` says
  nothing);
* the messages the extension sends the source model during a request are told apart by when
  they come, not by their wording (:func:`classify`): the Call instruction is the first one of
  a request, before any successful template response; the emergency instruction is the one
  that directly follows a completed turn at or above 90 % of the window; every other one is a
  reminder. All three are per request: a transcript that holds several is read one request at
  a time, cut where each later request began.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.scenario import ROOT_MARK, expand_root
from pi_continuity_harness.scenario.transcript import content_text

__all__ = [
    "COMMAND",
    "DELETION_MATCH",
    "DOSSIER_MATCH",
    "EMERGENCY_PERCENT",
    "FINISHED",
    "FINISH_ID_MATCH",
    "FINISH_TOOL",
    "GET_TOOL",
    "MANAGED_DIR",
    "RECOVERY_FILE_NAME",
    "STATUS_TOOL",
    "WAITING",
    "WRITING",
    "HandoffMessage",
    "Item",
    "classify",
    "deferred_prompts",
    "dossier_path",
    "drawn_yellow",
    "finish_id_in",
    "inputs_deferred",
    "instructs_deletion",
    "instructs_retention",
    "items_from_entries",
    "mentions",
    "plain",
    "recovery_file_name_re",
    "without_paths",
]

COMMAND = "sh"
GET_TOOL = "session_handoff_get_template"
FINISH_TOOL = "session_handoff_finish"
STATUS_TOOL = "blitz_handoff"
#: ``<getAgentDir()>/pi-blitz-handoff/`` (Managed paths).
MANAGED_DIR = "pi-blitz-handoff"
#: The fixed emergency level (Deferral, reminder and emergency: ">=90% context").
EMERGENCY_PERCENT = 90.0

WAITING = "Waiting for Session Handoff"
WRITING = "Writing Session Handoff"
FINISHED = "Session Handoff Finished"

_ID = r"([A-Za-z0-9][A-Za-z0-9._:-]*\d[A-Za-z0-9._:-]*)"
#: ``{{match:...}}`` for the scripted model: the Finish ID a template response gave (group 1).
FINISH_ID_MATCH = (
    r"(?i)(?:finish[ \t_-]*id\b[^A-Za-z0-9\n]{0,8}|"
    + re.escape(FINISH_TOOL)
    + r"\(\s*\{\s*[\"']?id[\"']?\s*:\s*[\"'])"
    + _ID
)
#: ``{{match:...}}``: the Finish ID a template response gave without its last character (a
#: truncated copy, which only a prefix comparison would accept, H29a).
FINISH_ID_BUT_LAST_MATCH = (
    FINISH_ID_MATCH.removesuffix(_ID) + r"([A-Za-z0-9][A-Za-z0-9._:-]*)[A-Za-z0-9._:-](?![A-Za-z0-9._:-])"
)
# The path patterns below hold no quote character (``\x27`` is ``'``, ``\x22`` is ``"``), so a
# script can put a ``{{match:...}}`` of them in single quotes in a shell command (``rm -f
# '{{match:...}}'``) whether it matches or not, and a path with a space stays one word. Each
# starts with :data:`~pi_continuity_harness.scenario.ROOT_MARK`: a path under the run's
# directory is read whole when that directory has a space (``--workdir "/tmp/my runs"`` on real
# Pi). Without the mark, the path character class stopped at the space and took the rest
# (``/runs/.../handoff_<id>.md``, outside the run): 46 of the 249 blitz scenarios failed there.
_PATH_CHARS = r"[^\s`\x27\x22<>()]"
_PATH = "(" + ROOT_MARK + "/" + _PATH_CHARS + r"+\.md)"
#: ``{{match:...}}``: a dossier path (``.../<CONFIG_DIR_NAME>/handoff_<id>.md``) in a text (group 1).
DOSSIER_MATCH = (
    "(" + ROOT_MARK + "/" + _PATH_CHARS + "*/" + re.escape(CONFIG_DIR_NAME) + r"/handoff_[A-Za-z0-9._-]+\.md)"
)
#: ``{{match:...}}``: the path a first prompt says to delete (or remove), not negated (group 1).
#: A verb followed by ``/`` is a directory of a path (``/tmp/x delete/w/...``), not an
#: instruction: read as one, the path that followed it in the same path was taken for the
#: file to delete, and on real Pi the dossier stayed.
DELETION_MATCH = (
    r"(?im)(?<!not )(?<!never )(?<!n\x27t )(?:^|(?<=\s))(?:delete|remove|rm)\b(?!/)[^\n]{0,160}?" + _PATH
)
_NEGATED = re.compile(r"(?i)\b(?:not|never|n't|without)\s+(?:\w+\s+){0,2}(?:delete|remove)\b")
_RETAIN = re.compile(r"(?i)\b(?:unchanged|leave|retain)\b")
_BOUNDARY = re.compile(r"(?m)^--- Deferred Prompt (\d+) of (\d+) ---$")


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def plain(text: str) -> str:
    """``text`` as a reader sees it: without SGR colour sequences (the reference fixes the lines'
    words; their colours come from the current theme, ``ctx.ui.theme``)."""
    return _SGR.sub("", text)


def drawn_yellow(line: str, text: str) -> bool:
    """``line`` is ``text`` drawn in a yellow foreground ("Yellow `Waiting for Session Handoff`"):
    an SGR sequence right before the text sets ANSI yellow (33, 93, 256-colour 3 or 11, which is
    what Pi 1.6's RPC theme gives its ``warning`` token: ``38;5;3``) or a truecolour yellow, and
    nothing resets it before the text ends."""
    index = line.find(text)
    if index < 0 or plain(line) != text:
        return False
    codes = [m.group(1) for m in _SGR.finditer(line[:index])]
    if not codes:
        return False
    last = codes[-1]
    if last in ("33", "93", "38;5;3", "38;5;11", "1;33", "33;1"):
        return True
    parts = last.split(";")
    if len(parts) == 5 and parts[:2] == ["38", "2"]:
        r, g, b = (int(p) for p in parts[2:])
        return r >= 128 and g >= 128 and b < 0.6 * min(r, g)
    return False


def dossier_path(project_dir: str | Path, session_id: str) -> Path:
    """``<cwd>/<CONFIG_DIR_NAME>/handoff_<native session id>.md`` (Managed paths: "no timestamp/subdir")."""
    return Path(project_dir) / CONFIG_DIR_NAME / f"handoff_{session_id}.md"


@functools.lru_cache(maxsize=1024)
def finish_id_in(text: str) -> str | None:
    """The Finish ID a template response gives, if any (see :data:`FINISH_ID_MATCH`).

    Remembered by text: the explorer's checks after every operation read every template
    response of the run again (three invariants each), and searching a long response for the
    pattern was 2 % of a blitz exploration (issue 16); the answer depends on the text alone."""
    found = _FINISH_ID.search(text)
    return found.group(1) if found else None


_FINISH_ID = re.compile(FINISH_ID_MATCH)


def without_paths(text: str, root: str | Path | None = None) -> str:
    """``text`` with every absolute path replaced by ``<path>``: a path is never read as words.

    ``root``: the run's directory, so a path under it is replaced whole when it has a space (a
    work directory ``/tmp/keep it`` must not say "keep")."""
    pattern = "(" + ROOT_MARK + "/" + _PATH_CHARS + "+)"
    return re.sub(expand_root(pattern, None if root is None else str(root)), "<path>", text)


def instructs_deletion(text: str, path: str | Path) -> bool:
    """The text tells its reader to delete (or remove) exactly ``path``, not negated."""
    wanted = str(path)
    # The path's own directory as the run's: a directory with a space is read whole.
    pattern = expand_root(DELETION_MATCH, os.path.dirname(wanted))
    return any(found.group(1) == wanted for found in re.finditer(pattern, text))


def instructs_retention(text: str, path: str | Path) -> bool:
    """The text names ``path``, says to leave it unchanged, and never says to delete it."""
    if str(path) not in text or instructs_deletion(text, path):
        return False
    words = without_paths(text, Path(path).parent.parent)  # the project directory
    plain = _NEGATED.sub("", words)
    return bool(_RETAIN.search(words) or _NEGATED.search(words)) and not re.search(
        r"(?i)(?:^|\s)(?:delete|remove)\b", plain
    )


def mentions(text: str, *names: str) -> bool:
    return all(name in text for name in names)


def inputs_deferred(count: int) -> str:
    return f"Inputs deferred ({count})"


#: A recovery file name's ``<filesystem-safe UTC timestamp with milliseconds>-`` prefix.
_RECOVERY_STAMP = r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-"
#: Any recovery file's name: the stamp, then a session component of letters, digits and hyphens.
RECOVERY_FILE_NAME = re.compile(_RECOVERY_STAMP + r"[A-Za-z0-9-]+\.md")


def recovery_file_name_re(session_id: str) -> re.Pattern[str]:
    """``<filesystem-safe UTC timestamp with milliseconds>-<session id: letters, digits, hyphens>.md``."""
    component = re.sub(r"[^A-Za-z0-9-]", "-", session_id)
    return re.compile(_RECOVERY_STAMP + re.escape(component) + r"\.md")


def deferred_prompts(text: str) -> list[tuple[int, int, str]] | None:
    """``(n, m, prompt)`` of each ``--- Deferred Prompt N of M ---`` block, or None when the text
    does not start with one. A prompt is what follows its boundary line up to the next boundary,
    without the one line break after the boundary and the blank lines that separate blocks."""
    marks = list(_BOUNDARY.finditer(text))
    if not marks or text[: marks[0].start()].strip():
        return None
    out = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        body = text[mark.end() : end].removeprefix("\n").removesuffix("\n")
        if index + 1 < len(marks):
            body = body.removesuffix("\n")
        out.append((int(mark.group(1)), int(mark.group(2)), body))
    return out


# ============================================================================ the transcript
@dataclass(frozen=True)
class Item:
    """One entry of a transcript, as the handoff reading needs it."""

    index: int
    kind: Literal["user", "extension", "assistant", "tool", "other"]
    text: str
    #: An assistant message's reported total tokens.
    tokens: int | None = None
    stop: str | None = None
    #: A tool result's tool name, and whether it is an error.
    tool: str | None = None
    error: bool = False
    #: An assistant message's tool calls: (tool name, its ``action`` argument or "").
    calls: tuple[tuple[str, str], ...] = ()


def items_from_entries(entries: list[dict[str, Any]], extension_texts: set[str]) -> list[Item]:
    """A session's entries as :class:`Item` s. A user message whose text an extension sent
    (``input`` with ``source: "extension"``) and every custom message are the extension's."""
    out: list[Item] = []
    for index, entry in enumerate(entries):
        kind = entry.get("type")
        if kind == "custom_message":
            out.append(Item(index, "extension", content_text(entry.get("content"))))
            continue
        if kind != "message":
            out.append(Item(index, "other", ""))
            continue
        message = entry.get("message") or {}
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "user":
            out.append(Item(index, "extension" if text in extension_texts else "user", text))
        elif role == "assistant":
            usage = message.get("usage") or {}
            total = usage.get("totalTokens")
            calls = tuple(
                (str(block.get("name")), str((block.get("arguments") or {}).get("action", "")))
                for block in message.get("content") or []
                if isinstance(block, dict) and block.get("type") == "toolCall"
            )
            out.append(
                Item(
                    index,
                    "assistant",
                    text,
                    tokens=int(total) if isinstance(total, (int, float)) else None,
                    stop=message.get("stopReason"),
                    calls=calls,
                )
            )
        elif role == "toolResult":
            out.append(
                Item(
                    index,
                    "tool",
                    text,
                    tool=str(message.get("toolName")),
                    error=bool(message.get("isError")),
                )
            )
        else:
            out.append(Item(index, "other", text))
    return out


@dataclass(frozen=True)
class HandoffMessage:
    """A message the extension sent the source model, and what it is."""

    item: Item
    kind: Literal["call", "emergency", "reminder"]


def calls_start(item: Item) -> bool:
    """Whether ``item`` (an assistant message) calls ``blitz_handoff`` with ``action: start``."""
    return (STATUS_TOOL, "start") in item.calls


def makes_request_known(item: Item, after_start_call: bool) -> bool:
    """Whether a tool result makes a request known (:func:`classify`): a successful template
    retrieval, or a successful ``blitz_handoff`` start the assistant message before it called
    (``after_start_call``, :func:`calls_start`)."""
    return (
        item.kind == "tool"
        and not item.error
        and (item.tool == GET_TOOL or (item.tool == STATUS_TOOL and after_start_call))
    )


def classify(items: list[Item], window: int, *, starts: Iterable[int] = ()) -> list[HandoffMessage]:
    """The extension's messages, told apart by when they come within their request (module docstring).

    A request is known once a Call instruction was sent, the model's ``blitz_handoff start``
    succeeded or a template response succeeded. The emergency is the message that follows a
    completed turn (``stop``/``toolUse``) at or above 90 % of ``window`` (after that turn's tool
    results, before the next assistant message) while a request is known; the Call instruction
    is the first message of a request, before any successful template response, and directs the
    model to ``session_handoff_get_template``; every other message is a reminder.

    All three are per request, so ``items`` are read one request at a time: ``starts`` are the
    transcript positions (:attr:`Item.index`) at which a later request began, and the items from
    each start on are classified as that request's, with nothing of the request before it
    carried over. The reference ends a request at ``/sh cancel`` or the menu's Cancel ("Canonical
    cancel/menu immediately invalidate request, Finish ID, reminder, retrieval", Status,
    cancellation and recovery), at the native cutover (Transfer sequence 6) and when a reload ends
    the memory state; a second request can only begin after that ("One active request; second
    rejects without replacing state", Transfer sequence 1). The transcript shows none of these
    ends, so the caller, which knows where it began the next request, says so. Read as one, a
    second request's Call instruction came after the first request's messages, so it was taken
    for a reminder (or for the emergency, after a turn at 90 %), and the second request's own
    reminder and emergency were each counted against the first. A cut at the start of the next
    request, not at the end of the one before, keeps whatever the first request still sent after
    its end (a reminder after a cancel, H70b) as that request's, where its rules judge it.
    """
    cuts = sorted(set(starts))
    out: list[HandoffMessage] = []
    ours: list[HandoffMessage] = []  # this request's
    known = retrieved = full = starting = False
    for item in items:
        if cuts and item.index >= cuts[0]:
            while cuts and item.index >= cuts[0]:
                cuts.pop(0)
            ours = []
            known = retrieved = full = starting = False
        if item.kind == "assistant":
            full = (
                item.stop in ("stop", "toolUse")
                and item.tokens is not None
                and item.tokens >= EMERGENCY_PERCENT / 100 * window
            )
            starting = calls_start(item)
            continue
        if item.kind == "tool":
            retrieved = retrieved or (not item.error and item.tool == GET_TOOL)
            known = known or makes_request_known(item, starting)
            continue
        if item.kind != "extension":
            continue
        if full and known:
            message = HandoffMessage(item, "emergency")
        elif not ours and not retrieved and mentions(item.text, GET_TOOL):
            message = HandoffMessage(item, "call")
            known = True
        else:
            message = HandoffMessage(item, "reminder")
        ours.append(message)
        out.append(message)
        full = False
    return out
