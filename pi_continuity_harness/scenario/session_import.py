"""A real Pi 1.6 session file turned into a scenario that replays it (``import-session``).

A user's failure report comes with a session file; this reads it and writes the scenario that
replays the same conversation on the simulator with *any* implementation: the user's prompts
(``prompt`` operations, in order, with their PNG images; any other image is named in the
description), every model reply with its text, thinking, tool calls, usage
and stop reason (``model.agent``, in order; a tool's recorded output becomes the ``result`` of
a simulated built-in tool), model changes (``set_model``), compactions (``compact`` with Pi's
summarizer scripted to write the recorded summary), the first model and thinking level, and the
session id. The session format is Pi 1.6's (``dist/core/session-manager.js``; reference
pi-host-1.6.md §4): a header line ``{"type":"session","version":3,...}``, then one entry per
line, each ``{type, id, parentId, timestamp, ...}``.

What a session file does not say, the scenario cannot know, so it comes from the caller and
the scenario's ``description`` says what was chosen:

* the models' context windows and output limits (``--context-window``, ``--max-tokens``);
* Pi's settings (``--settings``: the user's ``settings.json``, the scenario's global settings;
  default: Pi's defaults, automatic compaction on, ``reserveTokens`` 16384);
* *why* a compaction happened (Pi writes no reason). With those settings and windows, a
  compaction where the last reply's reported usage is above ``contextWindow - reserveTokens``
  (Pi's strict threshold, ``_checkCompaction``, agent-session.js:2496) is guessed to be one Pi
  makes by itself on replay, so nothing is added for it; any other becomes a ``compact``
  operation (a manual compaction) at its place, after the run around it. Pi's checks have more
  cases than this guess (overflow, recoverable length stops, stale usage after a compaction);
  ``import-session`` therefore replays the scenario on the simulator and inverts the guess for
  a compaction the replay misses or adds (``flip``), then reports whether the replay has the
  recorded entry sequence (:func:`session_shape`).

Entries an extension or the user's UI wrote (``custom``, ``custom_message``, ``label``,
``session_info``, ``branch_summary``, ``context_edit``, ``usage``, messages of roles ``custom``
and ``bashExecution``) are the implementation's own doing, not the host's: they are not
replayed (the implementation under test writes its own) and the note counts them. The
``system`` message Pi persists with the first request (sdk.js) is Pi's, written again on replay.

Tool calls are replayed for real (``simulator/builtin_tools.py``: ``read``, ``write`` and
``edit`` read and write files, ``bash`` runs ``rm``), and a session file records them with the
paths of the machine it was recorded on: Pi resolves a tool's ``path`` against the header's
``cwd`` (``resolveToCwd``, ``dist/core/tools/path-utils.js`` and ``utils/paths.js:100-128``) and
most models send absolute paths. Replayed as written, importing a bug report would read and
write the developer's own files. So every such path is placed in the run (:func:`_replay_path`):
one under the recorded ``cwd`` becomes the same path relative to the scenario's project (the
replay touches the file the recording touched, in its own project); one outside it (absolute
elsewhere, ``~``, escaping with ``..``) is replayed under :data:`OUTSIDE_PROJECT` in the project
(``/tmp/r/x`` as ``outside-project/tmp/r/x``) and the description says so, line by line.

A malformed file is refused with :class:`SessionImportError`, ``<file>: line <n>: <reason>``.
"""

from __future__ import annotations

import json
import posixpath
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.confine import check_scenario_path
from pi_continuity_harness.scenario.document import Scenario, parse_scenario, read_text_file
from pi_continuity_harness.scenario.operations import ImageSpec
from pi_continuity_harness.scenario.session_id import check_session_id

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_TOKENS",
    "IMAGE_NOTE",
    "MAX_SESSION_BYTES",
    "OUTSIDE_NOTE",
    "OUTSIDE_PROJECT",
    "SessionImportError",
    "import_session",
    "import_session_lines",
    "scenario_name",
    "session_shape",
]

#: Defaults for what a session file does not record (the scenario's own defaults).
DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_MAX_TOKENS = 16_384
#: Pi's default ``compaction.reserveTokens`` (settings-manager.js; simulator/settings.py).
DEFAULT_RESERVE_TOKENS = 16_384

#: ``CURRENT_SESSION_VERSION`` (session-manager.js:11). v1 and v2 files are migrated by Pi on
#: load; a report's file from Pi 1.6 is v3.
_VERSION = 3

#: Pi's split-turn merge (compaction.js:694-703) and file lists (compaction/utils.js:60-75).
_SPLIT_TURN = "\n\n---\n\n**Turn Context (split turn):**\n\n"
_NO_PRIOR_HISTORY = "No prior history."
_FILE_LISTS = re.compile(
    r"(?:\n\n<read-files>\n.*?\n</read-files>)?(?:\n\n<modified-files>\n.*?\n</modified-files>)?\Z",
    re.DOTALL,
)

#: pi-ai's ``errorMessage`` for an HTTP error: ``"<status>: <JSON of the error object>"``.
_HTTP_ERROR = re.compile(r"\A(?P<status>[45]\d\d)(?: status code)?:? (?P<rest>.*)\Z", re.DOTALL)

#: Tools the simulated host runs from a scripted ``result`` (``simulator/builtin_tools.py``).
_SIMULATED_OUTPUT_TOOLS = frozenset({"bash", "read"})

#: Built-in tools whose ``path`` argument Pi resolves against its cwd (read.js, write.js,
#: edit.js: ``resolveToCwd``) and the simulated host reads or writes for real.
_PATH_TOOLS = frozenset({"read", "write", "edit"})
#: Where a tool path outside the recorded project is replayed: this directory of the run's
#: project, followed by the path Pi resolved (``/tmp/r/x``: ``outside-project/tmp/r/x``).
OUTSIDE_PROJECT = "outside-project"
#: The words of the description's note for such a path (the command prints those notes too).
OUTSIDE_NOTE = "is outside the recorded project"
#: The words of the description's note for a prompt image the scenario cannot send (the command
#: prints those notes too).
IMAGE_NOTE = "of the user message is not replayed"
#: ``normalizePath``'s ``normalizeUnicodeSpaces`` (utils/paths.js:6): each becomes a plain space.
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
#: What the simulated bash will not run ``rm`` with (``_bash_rm``), and quoting, which the shell
#: would undo but the simulator would not: such a command's paths cannot be placed word by word.
_RM_UNPLACEABLE = re.compile(r"[;&|`$<>*?'\"\\]")
#: A scenario replaces ``{{match:REGEX}}`` in a tool call's arguments with text of the request
#: (``model_script.resolve_tool_calls``): a recorded argument holding it would be sent changed,
#: and a path made of it would be placed in the run only after the import checked it.
_MATCH_PLACEHOLDER = "{{match:"

_NOT_REPLAYED_TYPES = frozenset(
    {"custom", "custom_message", "label", "session_info", "branch_summary", "context_edit", "usage"}
)
_ENTRY_TYPES = _NOT_REPLAYED_TYPES | {"message", "model_change", "thinking_level_change", "compaction"}
_MODEL_ID = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._:-]+$")


class SessionImportError(ScenarioError):
    """A session file that cannot be imported: ``<file>: line <n>: <reason>``."""


@dataclass
class _Import:
    source: str
    context_window: int = DEFAULT_CONTEXT_WINDOW
    auto_compaction: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    #: The reported context tokens of the last reply since the last compaction.
    last_tokens: int = 0
    #: Compaction lines whose guess (automatic or manual) is to be inverted.
    flip: frozenset[int] = frozenset()
    models: list[str] = field(default_factory=list)
    #: Models a non-off thinking level was recorded on (Pi keeps ``off`` on the others).
    reasoning: set[str] = field(default_factory=set)
    current_model: str | None = None
    active_model: str | None = None
    thinking_level: str = "off"
    session_id: str | None = None
    #: The header's ``cwd``: the project directory Pi ran in, which tool paths are resolved against.
    cwd: Any = None
    agent: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    operations: list[Any] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    previous_summary: str | None = None
    seen_message: bool = False
    #: The role of the last message entry (a compaction after a toolResult happened mid-run).
    last_role: str | None = None

    def above_threshold(self) -> bool:
        """Pi's post-run check would compact now (``tokens > window - reserve``, strict)."""
        return self.auto_compaction and self.last_tokens > self.context_window - self.reserve_tokens

    def fail(self, line: int, reason: str) -> SessionImportError:
        return SessionImportError(f"{self.source}: line {line}: {reason}")

    def model(self, line: int, provider: Any, model_id: Any) -> str:
        if not isinstance(provider, str) or not isinstance(model_id, str):
            raise self.fail(line, "a model needs a string provider and model id")
        name = f"{provider}/{model_id}"
        if not _MODEL_ID.match(name):
            raise self.fail(line, f"model {name!r} is not a provider/id the scenario can declare")
        if name not in self.models:
            self.models.append(name)
        return name


def _text(content: Any, kind: str, key: str) -> str:
    if isinstance(content, str):
        return content if kind == "text" else ""
    # Content that is neither text nor a list of blocks (a damaged file: ``true``, a number)
    # holds no text, as None does.
    blocks = content if isinstance(content, list) else []
    return "".join(
        str(block.get(key, "")) for block in blocks if isinstance(block, dict) and block.get("type") == kind
    )


def _count(value: Any) -> bool:
    """``value`` is a whole number of tokens: an ``int`` at least 0, never ``true``/``false`` (which
    Python counts as 1 and 0: a usage of ``true`` was imported as one token, and the scenario then
    refused the boolean with no line of the session file)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _usage(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    out = {
        "input": usage.get("input", 0),
        "output": usage.get("output", 0),
        "cache_read": usage.get("cacheRead", 0),
        "cache_write": usage.get("cacheWrite", 0),
    }
    if not all(_count(v) for v in out.values()):
        return None
    return out


def _http_error(message: str) -> dict[str, Any]:
    """The scripted HTTP error that makes Pi write ``message`` again (``format_http_error``)."""
    match = _HTTP_ERROR.match(message)
    if match:
        try:
            body = json.loads(match.group("rest"))
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            error: dict[str, Any] = {"status": int(match.group("status")), "message": body["message"]}
            if isinstance(body.get("type"), str):
                error["type"] = body["type"]
            if isinstance(body.get("code"), str):
                error["code"] = body["code"]
            return error
        return {"status": int(match.group("status")), "message": match.group("rest")}
    return {"status": 500, "message": message}


def _assistant(state: _Import, line: int, message: dict[str, Any]) -> None:
    content = message.get("content")
    if not isinstance(content, list):
        raise state.fail(line, "an assistant message's content is a list of blocks")
    if "provider" in message and "model" in message:
        state.model(line, message["provider"], message["model"])
    stop = message.get("stopReason")
    reply: dict[str, Any] = {}
    if stop == "error":
        error_message = message.get("errorMessage")
        reply["error"] = _http_error(error_message if isinstance(error_message, str) else "error")
        state.agent.append(reply)
        return
    text = _text(content, "text", "text")
    thinking = _text(content, "thinking", "thinking")
    if text:
        reply["text"] = text
    if thinking:
        reply["thinking"] = thinking
    calls = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            name, arguments = block.get("name"), block.get("arguments", {})
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise state.fail(line, "a toolCall block needs a name and an arguments object")
            if _MATCH_PLACEHOLDER in json.dumps(arguments):
                raise state.fail(
                    line,
                    f"the {name} call's arguments hold '{{{{match:', which a scenario replaces with "
                    "text from the model's request (docs/scenario-format.md): the replay would not "
                    "send what was recorded",
                )
            call: dict[str, Any] = {
                "name": name,
                "arguments": _placed_arguments(state, line, name, arguments),
            }
            if isinstance(block.get("id"), str):
                call["id"] = block["id"]
                state.tool_calls[block["id"]] = call
            calls.append(call)
    if calls:
        reply["tool_calls"] = calls
    usage = _usage(message.get("usage"))
    if usage is not None:
        reply["usage"] = usage
        total = message["usage"].get("totalTokens")
        tokens = total if _count(total) and total > 0 else sum(usage.values())
        if stop != "aborted" and tokens > 0:
            state.last_tokens = tokens
    if stop == "length":
        reply["finish"] = "length"
    elif stop == "toolUse" and not calls:
        reply["finish"] = "tool_calls"
    elif stop == "aborted":
        state.notes.append(f"line {line}: an aborted reply is replayed as a complete one")
    elif stop not in ("stop", "toolUse"):
        raise state.fail(line, f"unknown stopReason {stop!r}")
    state.agent.append(reply)


def _pi_resolved(path: str, cwd: str, *, tool: bool) -> str:
    """The absolute, normalized path Pi reaches for ``path`` run in ``cwd``; ``~`` stands for
    the recording machine's home, which the file does not name.

    ``tool``: a tool's ``path`` argument, resolved as Pi's ``resolveToCwd`` does (utils/paths.js:
    100-128): Unicode spaces made plain, one leading ``@`` dropped, ``~`` and ``~/`` the home, a
    ``file://`` URL its path, then ``path.resolve(cwd, path)``. Otherwise a word of a bash
    command, which the shell resolves against the same cwd (``~`` expanded, nothing else).
    """
    if tool:
        path = _UNICODE_SPACES.sub(" ", path)
        path = path.removeprefix("@")
        if path.startswith("file://"):
            path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        home = path == "~" or path.startswith("~/")
    else:
        home = path.startswith("~")
    if home:  # ``~`` or ``~user`` (bash), then the rest normalized: ``~/x``, ``~user/x``
        user, _, rest = path.partition("/")
        rest = posixpath.normpath(rest or ".").lstrip("/")
        return user if rest == "." else f"{user}/{rest}"
    joined = path if path.startswith("/") else f"{cwd}/{path}"
    # normpath keeps a leading ``//`` (POSIX leaves it to the system); Node's resolve does not.
    return "/" + posixpath.normpath(joined).lstrip("/")


def _replay_path(state: _Import, line: int, what: str, path: str, *, tool: bool) -> str:
    """Where the replay puts the file the recording's ``path`` named (see the module doc): the
    same path relative to the project when under the recorded cwd, else under
    :data:`OUTSIDE_PROJECT` with a note. Refused when the result is no path a scenario can name."""
    cwd = state.cwd
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise state.fail(
            line,
            f"{what} {path!r}: the header's cwd {cwd!r} is not an absolute path, so the import "
            "cannot tell whether the path is inside the project Pi ran in",
        )
    base = "/" + posixpath.normpath(cwd).lstrip("/")
    resolved = _pi_resolved(path, base, tool=tool)
    prefix = base.rstrip("/") + "/"
    if resolved == base:
        raise state.fail(
            line, f"{what} {path!r} names the recorded project directory itself, not a file in it"
        )
    inside = resolved.startswith(prefix)
    placed = resolved[len(prefix) :] if inside else f"{OUTSIDE_PROJECT}/{resolved.lstrip('/')}"
    try:
        check_scenario_path(placed)
    except ValueError as error:
        raise state.fail(line, f"{what} {path!r} cannot be replayed inside the run: {error}") from None
    if not inside:
        state.notes.append(
            f"line {line}: {what} {path!r} {OUTSIDE_NOTE} {cwd!r}: replayed as "
            f"{placed!r}, inside the run's project"
        )
    return placed


def _placed_arguments(state: _Import, line: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments with every path the simulated host would touch placed in the run:
    the ``path`` of ``read``/``write``/``edit``, and the paths of a ``bash`` ``rm`` (the one
    command the simulated bash really runs, ``_bash_rm``; any other command prints its recorded
    output). A non-string path is left as recorded (Pi refuses it against the tool's schema; the
    simulator names a relative file with its text)."""
    if name in _PATH_TOOLS and isinstance(arguments.get("path"), str):
        path = arguments["path"]
        placed = _replay_path(state, line, f"the {name} call's path", path, tool=True)
        return arguments if placed == path else {**arguments, "path": placed}
    command = arguments.get("command")
    if name != "bash" or not isinstance(command, str):
        return arguments
    words = command.split()
    if not words or words[0] != "rm":
        return arguments
    if _RM_UNPLACEABLE.search(command):
        raise state.fail(
            line,
            f"the bash command {command!r} removes files the import cannot place inside the run "
            "(quoting, globs, variables or more commands); edit the call in the session file",
        )
    placed_words = ["rm"] + [
        word if word.startswith("-") else _replay_path(state, line, "the bash rm path", word, tool=False)
        for word in words[1:]
    ]
    return arguments if placed_words == words else {**arguments, "command": " ".join(placed_words)}


def _tool_result(state: _Import, line: int, message: dict[str, Any]) -> None:
    call = state.tool_calls.get(str(message.get("toolCallId")))
    if call is None:
        raise state.fail(line, f"a toolResult for an unknown toolCallId {message.get('toolCallId')!r}")
    if call["name"] in _SIMULATED_OUTPUT_TOOLS:
        call["result"] = _text(message.get("content"), "text", "text")


def _images(state: _Import, line: int, content: Any) -> list[dict[str, Any]]:
    """The image blocks of a user message's ``content`` as a prompt's ``images`` (the scenario format
    takes what Pi sends unchanged: a PNG within its inline limits, ``operations.ImageSpec``); any
    other image is left out with a note naming the line and why. Before, every image was left out
    without a word, so the replay sent the text alone."""
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "image":
            continue
        image = {"data": block.get("data"), "mimeType": block.get("mimeType")}
        reason = None
        if image["mimeType"] != "image/png":
            reason = (
                "a scenario's prompt takes PNG images only (Pi converts any other, which is not modelled)"
            )
        else:
            try:
                ImageSpec.model_validate(image)
            except ValidationError as error:
                reason = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
        if reason is not None:
            state.notes.append(f"line {line}: an image ({_short(image['mimeType'])}) {IMAGE_NOTE}: {reason}")
            continue
        out.append(image)
    return out


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(state: _Import, line: int, entry: dict[str, Any]) -> None:
    message = entry.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise state.fail(line, "a message entry needs a message with a role")
    role = message["role"]
    state.last_role = role
    if role == "user":
        if not isinstance(message.get("content"), (str, list)):
            raise state.fail(line, "a user message's content is a string or a list of blocks")
        text = _text(message.get("content"), "text", "text")
        prompt: dict[str, Any] = {"text": text}
        images = _images(state, line, message.get("content"))
        if images:
            prompt["images"] = images
        state.operations.append({"prompt": prompt})
        state.seen_message = True
    elif role == "assistant":
        if not state.seen_message:
            raise state.fail(line, "an assistant message before any user message")
        _assistant(state, line, message)
    elif role == "toolResult":
        _tool_result(state, line, message)
    elif role == "system":
        pass  # Pi writes it with the first request (sdk.js:290-302); the replay writes it again.
    else:
        state.skipped[f"message({role})"] += 1


def _compaction(state: _Import, line: int, entry: dict[str, Any]) -> None:
    summary = entry.get("summary")
    if not isinstance(summary, str):
        raise state.fail(line, "a compaction entry needs a summary string")
    if not state.seen_message:
        raise state.fail(line, "a compaction before any message")
    body = _FILE_LISTS.sub("", summary) if summary else summary
    usage = _usage(entry.get("usage"))
    replies: list[dict[str, Any]] = []
    if _SPLIT_TURN in body:
        history, _, prefix = body.partition(_SPLIT_TURN)
        if history not in (_NO_PRIOR_HISTORY, state.previous_summary):
            replies.append({"text": history, "usage": {"input": 0, "output": 0}})
        replies.append({"text": prefix})
    else:
        replies.append({"text": body})
    if usage is not None:
        replies[-1]["usage"] = usage
    state.summary.extend(replies)
    if entry.get("fromHook") is True:
        state.notes.append(
            f"line {line}: this compaction's summary came from an extension; the implementation "
            "under test writes its own (Pi's summarizer is scripted with the recorded text)"
        )
    guess = state.above_threshold()
    automatic = guess != (line in state.flip)
    if line in state.flip:
        way = "an automatic" if automatic else "a manual"
        state.notes.append(
            f"line {line}: replayed as {way} compaction: the replay check found the threshold "
            f"guess (last usage {state.last_tokens}, threshold {state.context_window} - "
            f"{state.reserve_tokens}) did not reproduce it"
        )
    elif automatic:
        state.notes.append(
            f"line {line}: an automatic compaction (last usage {state.last_tokens}, threshold "
            f"{state.context_window} - {state.reserve_tokens}); the replay compacts there by itself"
        )
    if not automatic:
        if state.last_role == "toolResult":
            state.notes.append(
                f"line {line}: a compaction inside a run (after a tool result) is replayed after that run"
            )
        state.operations.append("compact")
    state.previous_summary = summary
    state.last_tokens = 0


def _model_change(state: _Import, line: int, entry: dict[str, Any]) -> None:
    name = state.model(line, entry.get("provider"), entry.get("modelId"))
    state.current_model = name
    if not state.seen_message and not state.operations:
        state.active_model = name
    else:
        state.operations.append({"set_model": name})


def _thinking(state: _Import, line: int, entry: dict[str, Any]) -> None:
    level = entry.get("thinkingLevel")
    if level not in ("off", "minimal", "low", "medium", "high", "xhigh"):
        raise state.fail(line, f"unknown thinkingLevel {level!r}")
    if level != "off" and state.current_model is not None:
        state.reasoning.add(state.current_model)
    if not state.seen_message and not state.operations:
        state.thinking_level = str(level)
    elif level != state.thinking_level:
        state.notes.append(f"line {line}: thinking level {level} set during the session is not replayed")


def _header(state: _Import, value: Any) -> None:
    if not isinstance(value, dict) or value.get("type") != "session":
        raise state.fail(1, 'the first line is the session header {"type":"session",...}')
    if value.get("version") != _VERSION:
        raise state.fail(1, f"session version {value.get('version')!r}: Pi 1.6 writes version {_VERSION}")
    state.cwd = value.get("cwd")
    session_id = value.get("id")
    if not isinstance(session_id, str):
        raise state.fail(1, "the header has no session id")
    try:
        state.session_id = check_session_id(session_id)
    except ValueError as error:
        state.notes.append(f"line 1: the session id is not replayed ({error})")


_HANDLERS = {"message": _message, "compaction": _compaction, "model_change": _model_change}


def import_session_lines(
    lines: list[str],
    *,
    source: str,
    name: str,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    settings: dict[str, Any] | None = None,
    flip: frozenset[int] = frozenset(),
) -> Scenario:
    """The scenario replaying the session whose JSONL lines are ``lines`` (see the module doc);
    ``flip``: compaction lines to replay the other way than the threshold guess says."""
    settings = dict(settings or {})
    given = settings.get("compaction")
    compaction: dict[str, Any] = given if isinstance(given, dict) else {}
    reserve = compaction.get("reserveTokens", DEFAULT_RESERVE_TOKENS)
    state = _Import(
        source,
        context_window=context_window,
        auto_compaction=compaction.get("enabled", True) is not False,
        reserve_tokens=reserve if _count(reserve) else DEFAULT_RESERVE_TOKENS,
        flip=flip,
    )
    if not lines or not lines[0].strip():
        raise state.fail(1, "empty file: a session file starts with its header line")
    ids: set[str] = set()
    previous: str | None = None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            raise state.fail(number, "an empty line (a session file has one JSON object per line)")
        try:
            value = json.loads(text)
        except ValueError as error:
            raise state.fail(number, f"not JSON: {error}") from None
        except RecursionError:  # json's C decoder recurses per level: 100,000 ``[`` end it
            raise state.fail(number, "not JSON: nested too deeply to read") from None
        if number == 1:
            _header(state, value)
            continue
        if not isinstance(value, dict):
            raise state.fail(number, "an entry is a JSON object")
        kind = value.get("type")
        if not isinstance(kind, str) or kind not in _ENTRY_TYPES:
            raise state.fail(number, f"unknown entry type {kind!r}")
        entry_id, parent = value.get("id"), value.get("parentId", "missing")
        if not isinstance(entry_id, str) or not entry_id:
            raise state.fail(number, "an entry needs a string id")
        if entry_id in ids:
            raise state.fail(number, f"duplicate entry id {entry_id!r}")
        if parent is not None and not isinstance(parent, str):
            raise state.fail(number, "an entry's parentId is a string or null")
        if parent != previous:
            if parent is not None and parent not in ids:
                raise state.fail(number, f"parentId {parent!r} names no earlier entry")
            raise state.fail(
                number,
                f"parentId {parent!r} is not the previous entry {previous!r}: a branched session "
                "(fork or tree navigation) cannot be replayed as one conversation",
            )
        ids.add(entry_id)
        previous = entry_id
        if kind == "thinking_level_change":
            _thinking(state, number, value)
        elif kind in _HANDLERS:
            _HANDLERS[kind](state, number, value)
        else:
            state.skipped[str(kind)] += 1
    return _scenario(state, name, context_window, max_tokens, settings)


def _scenario(
    state: _Import, name: str, context_window: int, max_tokens: int, settings: dict[str, Any]
) -> Scenario:
    if not state.models:
        raise SessionImportError(
            f"{state.source}: no model_change entry and no assistant message names a model"
        )
    notes = [f"Imported from {Path(state.source).name} by pi-continuity-harness import-session."]
    notes.append(
        f"Models: context window {context_window}, max tokens {max_tokens}. A compaction below the "
        "threshold is replayed as a manual compaction (a session file records no reason)."
    )
    if state.skipped:
        counted = ", ".join(f"{count} {kind}" for kind, count in sorted(state.skipped.items()))
        notes.append(f"Not replayed (written by extensions or the UI): {counted}.")
    notes.extend(state.notes)
    global_settings = dict(settings)
    data: dict[str, Any] = {
        "name": name,
        "description": "\n".join(notes),
        "models": [
            {
                "id": m,
                "context_window": context_window,
                "max_tokens": max_tokens,
                "reasoning": m in state.reasoning,
            }
            for m in state.models
        ],
        "active_model": state.active_model or state.models[0],
        "thinking_level": state.thinking_level,
        "settings": {"global": global_settings},
        "model": {"agent": state.agent, "summary": state.summary},
        "operations": state.operations,
    }
    if state.session_id is not None:
        data["session_id"] = state.session_id
    return parse_scenario(data, source=f"{state.source} (imported scenario)")


def scenario_name(path: Path) -> str:
    """A scenario name from the file name (``[A-Za-z0-9][A-Za-z0-9._-]*``)."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", path.stem).lstrip("._-")
    return ("imported-" + stem)[:120] if stem else "imported-session"


#: The largest session file read: 256 MiB. Pi appends every message, tool result and image of a
#: session to it, so a long one is large, but a file bigger than this is no session a failure is
#: reproduced from (its scenario would be refused by ``simulate``, which reads at most
#: :data:`~pi_continuity_harness.scenario.document.MAX_SCENARIO_BYTES`, long before).
MAX_SESSION_BYTES = 256 * 1024 * 1024


def import_session(
    path: str | Path,
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    settings: dict[str, Any] | None = None,
    flip: frozenset[int] = frozenset(),
) -> Scenario:
    """Read a Pi 1.6 session file and return the scenario that replays it (``flip``: see
    :func:`import_session_lines`)."""
    source = str(path)
    text = read_text_file(path, "session file", SessionImportError, MAX_SESSION_BYTES)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return import_session_lines(
        lines,
        source=source,
        name=scenario_name(Path(path)),
        context_window=context_window,
        max_tokens=max_tokens,
        settings=settings,
        flip=flip,
    )


def session_shape(path: str | Path) -> list[tuple[Any, ...]]:
    """What a replay must reproduce of a session file, free of ids and clocks: per entry its type,
    message role and parent (as the index of the parent entry); for a compaction its summary,
    first kept entry (index), ``tokensBefore``, ``fromHook`` and details; for an assistant message
    its stop reason, usage (input, output) and content block types. Two sessions with equal
    shapes have the same entries in the same order with the same parent links.

    The file is one the import accepted (or the simulator wrote), read as Pi reads it: lines
    split on ``"\\n"`` only (``loadEntriesFromFile``, session-manager.js:326-350; JSON may hold a
    raw U+2028, which ``str.splitlines`` would split), and a field of the wrong type read as Pi's
    JavaScript reads it: a ``usage`` that is no object has no ``input``/``output``, a
    ``firstKeptEntryId`` that is no string names no entry (Pi compares it with ``===``,
    ``buildContextEntries``), content that is no list has no blocks. The replay then differs
    there, and the check names the entry, rather than failing with a traceback."""
    text = Path(path).read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.split("\n") if line.strip()]
    index: dict[str, int] = {}
    shape: list[tuple[Any, ...]] = []
    for number, entry in enumerate(lines[1:]):
        index[entry["id"]] = number
        message = entry.get("message") if entry["type"] == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        item: tuple[Any, ...] = (entry["type"], role, _index_of(index, entry.get("parentId")))
        if entry["type"] == "compaction":
            item += (
                entry.get("summary"),
                _index_of(index, entry.get("firstKeptEntryId")),
                entry.get("tokensBefore"),
                entry.get("fromHook"),
                json.dumps(entry.get("details"), sort_keys=True),
            )
        if isinstance(message, dict) and role == "assistant":
            usage = message.get("usage")
            usage = usage if isinstance(usage, dict) else {}
            content = message.get("content")
            blocks = tuple(
                b.get("type") for b in (content if isinstance(content, list) else []) if isinstance(b, dict)
            )
            stop = message.get("stopReason")
            item += (stop, message.get("errorMessage"), usage.get("input"), usage.get("output"), blocks)
        shape.append(item)
    return shape


def _index_of(index: dict[str, int], entry_id: Any) -> int | None:
    """The index of the entry ``entry_id`` names; None for no id, an unknown one, or a value that
    is no string (Pi compares ids with ``===``, so such a value names no entry)."""
    return index.get(entry_id) if isinstance(entry_id, str) else None
