"""The scripted model: one script format, played by the simulator and by the fake server.

A scenario scripts the model as data. Requests fall in three kinds, told apart the same
way on both targets:

``agent``
    Pi's own requests from the agent loop (they carry tools). Answered from
    ``model.agent`` in order, first come first served; once those are used up a request
    gets :attr:`ModelScript.default_agent` (a default never uses up a scripted reply).
``summary``
    Pi's default summarizer (system prompt "You are a context summarization assistant").
    Answered from ``model.summary``, else ``SUMMARY-<n>`` (unique, so Pi's first-equal-summary
    lookup quirk only bites when a scenario scripts equal summaries on purpose).
``extension``
    Any other call, i.e. an extension's ``model_registry.complete()`` (for Pi Session
    Continuity: Brief synthesis). Answered from ``model.extension`` in order, else by a
    default :class:`SynthesisReply`. The *text* of such a reply is written by an
    :class:`ExtensionReplies` writer chosen for the system under test (the continuity writer,
    ``continuity_replies``, writes Continuity Briefs): the scripted model itself knows nothing
    of any extension's artifacts, only stop reasons, budgets, errors and holds.

:func:`respond` is the pure function both targets call to turn a request and its scripted
reply into an outcome. The simulator turns the outcome into an ``AssistantMessage``; the
fake server streams it as OpenAI chat-completion chunks or returns the HTTP error.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pi_continuity_harness.scenario.identity_memo import IdentityMemo, run_memo
from pi_continuity_harness.scenario.numbers import Int, OptionalInt
from pi_continuity_harness.scenario.operations import AbortOp, Operation, Operations
from pi_continuity_harness.scenario.regex_check import regex_problem

__all__ = [
    "DEFAULT_REASONING_TOKENS",
    "PLAIN_REPLIES",
    "ROOT_MARK",
    "SUMMARIZATION_SYSTEM_PROMPT_PREFIX",
    "ExtensionReplies",
    "HttpError",
    "ModelOutcome",
    "ModelRequest",
    "ModelScript",
    "Reply",
    "RequestKind",
    "ScriptedToolCall",
    "StreamPlan",
    "SynthesisReply",
    "Usage",
    "estimate_request_tokens",
    "expand_root",
    "format_http_error",
    "message_chars",
    "resolve_tool_calls",
    "respond",
    "text_of",
]

RequestKind = Literal["agent", "summary", "extension"]

#: Pi's SUMMARIZATION_SYSTEM_PROMPT starts with this (compaction/utils.js:146).
SUMMARIZATION_SYSTEM_PROMPT_PREFIX = "You are a context summarization assistant."

#: Reasoning tokens the scripted model spends per requested effort before it writes any
#: text. A synthesis call whose ``max_tokens`` leaves less than the body needs is starved
#: (``stopReason: length`` with no text), which is what spec §5 asks an extension to avoid.
DEFAULT_REASONING_TOKENS: dict[str, int] = {
    "off": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 4096,
    "high": 8192,
    "xhigh": 16384,
    "max": 32768,
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Usage(_Strict):
    """Token usage as the provider reports it; ``total`` drives Pi's post-run threshold."""

    input: Int = Field(default=0, ge=0)
    output: Int = Field(default=0, ge=0)
    cache_read: Int = Field(default=0, ge=0)
    cache_write: Int = Field(default=0, ge=0)

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    def to_pi(self) -> dict[str, Any]:
        """The ``usage`` object of a pi-ai ``AssistantMessage``."""
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "totalTokens": self.total,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }


class HttpError(_Strict):
    """An HTTP error from the provider. Pi turns it into ``stopReason: "error"``.

    A 400 whose message matches one of pi-ai's overflow patterns ("exceeds the context
    window") starts overflow recovery; 429/5xx are retried by Pi before any compaction.
    """

    status: Int = Field(ge=400, le=599)
    message: str
    type: str = "invalid_request_error"
    code: str | None = None

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": None, "code": self.code}}


def format_http_error(error: HttpError) -> str:
    """Pi 1.6's ``errorMessage`` for an HTTP error: ``"<status>: <JSON of the error object>"``.

    Observed live (pi-host-1.6-verified.md, E4): a 503 became
    ``503: {"message":"Service Unavailable","type":"server_error","param":null,"code":null}``.
    """
    return f"{error.status}: " + json.dumps(error.body()["error"], separators=(",", ":"))


class ScriptedToolCall(_Strict):
    """A tool call of a scripted reply.

    A ``{{match:REGEX}}`` inside a string argument (anywhere in ``arguments``, nested too) is
    replaced by what the model read in its request: group 1 (else the whole match) of the
    first match of ``REGEX`` in the text of the request's messages, newest first. That is how a script
    passes on a value only the run knows (an ID or a path a tool returned, a path named in
    a prompt). Without a match the placeholder is sent as written.
    """

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    result: str | None = Field(
        default=None,
        description=(
            "Output of the simulated bash tool (read, write and edit act on the run's files). Real "
            "Pi runs the tool, so this must be what the command really prints, e.g. 'hi\\n' for 'echo hi'."
        ),
    )

    @field_validator("arguments")
    @classmethod
    def _placeholders_compile(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Every ``{{match:REGEX}}`` holds a regular expression. Before, one that does not compile
        loaded, and the ``re.error`` of the reply that used it became a provider error Pi retried
        (``errorMessage: "unterminated character set at position 1"``): a run of a reply the script
        did not write."""
        problem = _bad_placeholder(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class _Held(_Strict):
    latency_ms: Int = Field(default=1, ge=0, description="Virtual time the call takes")
    during: Operations = Field(
        default=(),
        description="Operations run while this call is held open (abort, commands, prompts)",
    )


class StreamPlan(_Strict):
    """Stream part of a reply first, then hold, abort, drop the connection or fail.

    ``upto`` characters are streamed (after the response headers and the role chunk): the
    thinking first, then the text, then each tool call's arguments JSON, in that order; 0
    streams the role chunk only. Then:

    ``hold``
        the reply's ``during`` operations run (after Pi has read the partial reply); the rest
        then streams, unless an operation aborted the request: pi-ai then persists what was
        streamed with ``stopReason: "aborted"`` and ``errorMessage: "Request was aborted"``
        (``openai-completions.js:462-466``, with ``responseId`` set);
    ``abort``
        ``hold`` with an ``abort`` appended to ``during``;
    ``drop``
        the connection closes without a finish reason: pi-ai ends the reply with
        ``stopReason: "error"``, ``errorMessage: "Stream ended without finish_reason"``
        (``openai-completions.js:471-476``), which Pi's auto-retry treats as retryable;
    ``error``
        an SSE ``{"error": {"message": error}}`` object: ``errorMessage`` is that message.

    Both targets cut the stream at the same point: the fake server sends the chunks up to
    ``upto``; the simulated model feeds the same chunks through its port of pi-ai's stream
    handling (``simulator/provider.py``).
    """

    upto: Int = Field(default=0, ge=0, description="Characters streamed before the hold or failure")
    then: Literal["hold", "abort", "drop", "error"] = "hold"
    error: str = Field(default="upstream error", description="The SSE error message (then: error)")


class Reply(_Held):
    """One scripted reply to an ``agent`` (or ``summary``) request."""

    text: str = ""
    thinking: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    usage: Usage | None = Field(
        default=None, description="Reported usage; default: the request's chars/4 estimate"
    )
    context_tokens: OptionalInt = Field(
        default=None,
        ge=0,
        description="Shorthand: report this many total tokens (input = N - output)",
    )
    finish: Literal["stop", "length", "tool_calls"] | None = None
    error: HttpError | None = None
    stream: StreamPlan | None = Field(
        default=None, description="Stream part of the reply, then hold, abort, drop or fail"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Reply:
        if self.usage is not None and self.context_tokens is not None:
            raise ValueError("give usage or context_tokens, not both")
        if self.error is not None and (self.text or self.tool_calls):
            raise ValueError("an error reply has no text or tool calls")
        if self.stream is not None:
            if self.error is not None:
                raise ValueError("an HTTP error reply streams nothing: give error or stream, not both")
            size = streamed_chars(self.text, self.thinking, self.tool_calls)
            if self.stream.upto > size:
                raise ValueError(f"stream.upto {self.stream.upto} is more than the reply's {size} characters")
            before_calls = len(self.thinking or "") + len(self.text)
            boundaries = {before_calls}
            for call in self.tool_calls:
                boundaries.add(max(boundaries) + len(tool_arguments_json(call.arguments)))
            if (
                self.stream.upto > before_calls
                and self.stream.upto not in boundaries
                and self.stream.then != "error"
            ):
                raise ValueError(
                    "stream.upto stops inside a tool call's arguments: only then: error can end there "
                    "(the finished block would carry V8's own JSON.parse message, which is not modelled)"
                )
            if self.stream.then in ("drop", "error") and self.during:
                raise ValueError(
                    f"stream.then {self.stream.then!r} ends the reply: it holds nothing (no during)"
                )
        return self


#: A Markdown heading line: ``copy_recovery_to`` names the section a reply writes into.
_HEADING_RE = re.compile(r"#{1,6} \S[^\n]*")


class SynthesisReply(_Held):
    """One scripted reply to an ``extension`` request (for Pi Session Continuity: Brief synthesis).

    ``kind`` names the outcome: a ``valid`` body (the default), a body ``missing_heading``
    (``heading``), ``empty`` text, ``reasoning_only`` (the effort eats the whole budget:
    ``stopReason: length``, no text), a ``length`` stop with a partial body, ``length_whole`` (every
    section written, the last one cut short by the output limit: ``stopReason: length``), an HTTP
    ``error``, ``abort`` (the user aborts while the call is in flight; it resolves with
    ``stopReason: aborted``), ``raw`` text, or ``unquoted_directive`` (a valid body that
    promotes a directive-looking line from the transcript to an unquoted instruction, which
    the authority-boundary rule of the continuity spec §14 forbids); ``thinking`` adds a reasoning
    text (a thinking block before the text): ``kind: empty`` with ``thinking`` is a reply of
    reasoning only, empty text and ``stopReason: stop``; ``out_of_order`` (the
    section ``heading``, default Next Actions, moved to the top), ``fenced_heading`` (``heading``
    only inside a code fence), ``inline_heading`` (``heading`` only inside a sentence),
    ``tool_use`` (a body, then a tool call: ``stopReason: toolUse``) and ``error_after_body`` (a
    mid-stream error: the whole valid body streams, thinking first, then an SSE error object
    ``{"error": {"message": error_message}}`` instead of the finish reason; pi-ai's catch keeps
    what was streamed and ends the reply ``stopReason: "error"``, ``errorMessage`` that message,
    ``openai-completions.js:480-500`` of pi-ai 1.6, so the reply carries a whole Brief's text and
    still failed; both targets play it as the stream plan ``then: error`` of an agent reply,
    :class:`StreamPlan`). ``sections`` replaces the
    text of some sections of the body (``{"## Next Actions": "..."}``); ``copy_recovery_to`` writes
    the Recovery Instructions of the last Brief the request quotes under another section (a
    model copying an earlier Brief's event-freshness rule, P78). The bodies are written
    by the system's :class:`ExtensionReplies` writer; this model only decides stop reasons,
    budgets and usage.
    """

    kind: Literal[
        "valid",
        "missing_heading",
        "empty",
        "reasoning_only",
        "length",
        "length_whole",
        "error",
        "abort",
        "raw",
        "unquoted_directive",
        "out_of_order",
        "fenced_heading",
        "inline_heading",
        "tool_use",
        "error_after_body",
    ] = "valid"
    heading: str | None = None
    text: str | None = None
    #: Section heading -> the text the writer puts under it instead of its own.
    sections: dict[str, str] = Field(default_factory=dict)
    copy_recovery_to: str | None = Field(
        default=None,
        description=(
            "A section heading: the reply writes the Recovery Instructions of the last Brief the "
            "request's messages quote (an earlier compaction summary) under it, as a model that "
            "copies an earlier Brief would; with none in the request, the writer's own text"
        ),
    )
    error: HttpError | None = None
    error_message: str = Field(
        default="upstream error",
        description="The SSE error message that ends the stream (kind error_after_body)",
    )
    reasoning_tokens: OptionalInt = Field(default=None, ge=0)
    usage: Usage | None = None
    thinking: str | None = Field(
        default=None,
        description=(
            "The reasoning the reply carries (a thinking block before any text). With kind "
            "empty: a reply of reasoning only, no text, stopReason stop"
        ),
    )

    @model_validator(mode="after")
    def _consistent(self) -> SynthesisReply:
        if self.thinking is not None and self.kind in ("error", "abort"):
            raise ValueError(f"kind {self.kind} carries no thinking")
        if self.kind in ("missing_heading", "fenced_heading", "inline_heading") and not self.heading:
            raise ValueError(f"kind {self.kind} needs heading")
        if self.kind == "raw" and self.text is None:
            raise ValueError("kind raw needs text")
        if self.copy_recovery_to is not None and not _HEADING_RE.fullmatch(self.copy_recovery_to):
            raise ValueError(f"copy_recovery_to names no Markdown heading: {self.copy_recovery_to!r}")
        if self.kind == "error" and self.error is None:
            raise ValueError("kind error needs error")
        if "error_message" in self.model_fields_set and self.kind != "error_after_body":
            raise ValueError(f"error_message is for kind error_after_body, not kind {self.kind}")
        if self.kind == "error_after_body" and self.during:
            raise ValueError(
                "kind error_after_body ends the reply with its error: it holds nothing (no during)"
            )
        return self


class ModelScript(_Strict):
    """The whole model script of a scenario."""

    agent: tuple[Reply, ...] = ()
    summary: tuple[Reply, ...] = ()
    extension: tuple[SynthesisReply, ...] = ()
    default_agent: Reply = Reply(text="ok")
    reasoning_tokens: dict[str, Int] = Field(default_factory=lambda: dict(DEFAULT_REASONING_TOKENS))


@dataclass(frozen=True)
class ModelRequest:
    """A model request as both targets see it, in pi-ai's message shapes."""

    kind: RequestKind
    index: int
    model: str
    system_prompt: str | None
    messages: list[dict[str, Any]]
    tools: list[str] = field(default_factory=list)
    max_tokens: int | None = None
    reasoning: str | None = None
    #: :func:`estimate_request_tokens`, when the caller already counted it (not part of the request).
    estimated_input_tokens: int | None = field(default=None, compare=False, repr=False)
    #: The chat-completions body the request was parsed from (``scenario.chat_wire``), when known.
    body: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "index": self.index,
            "model": self.model,
            "systemPrompt": self.system_prompt,
            "messages": self.messages,
            "tools": self.tools,
            "maxTokens": self.max_tokens,
            "reasoning": self.reasoning,
        }


@dataclass(frozen=True)
class ModelOutcome:
    """What the scripted model answers, before either target encodes it."""

    text: str
    thinking: str | None
    tool_calls: tuple[ScriptedToolCall, ...]
    stop_reason: Literal["stop", "length", "toolUse", "error", "aborted"]
    usage: Usage
    error: HttpError | None
    latency_ms: int
    during: tuple[Operation, ...]
    #: The user aborts while the call is held (``SynthesisReply(kind="abort")``).
    abort_while_held: bool = False
    #: Stream part of the reply before holding or failing (None: hold before the headers).
    stream: StreamPlan | None = None

    @property
    def held(self) -> bool:
        """Whether the call is held open while operations run (before the headers, or after
        a partial stream)."""
        if self.stream is not None and self.stream.then in ("drop", "error"):
            return False
        return bool(self.during) or self.abort_while_held or self.stream is not None

    def hold_operations(self) -> tuple[Operation, ...]:
        """What runs while the call is held: ``during``, then an abort the reply asks for."""
        ops = tuple(self.during)
        if self.abort_while_held or (self.stream is not None and self.stream.then == "abort"):
            ops = (*ops, AbortOp())
        return ops


class ExtensionReplies(Protocol):
    """Writes the text of a reply to an ``extension`` request: what the system's extensions ask
    their model for (a Continuity Brief, for Pi Session Continuity).

    :func:`respond` asks it for the body of every :class:`SynthesisReply` that has one
    (``valid``, ``missing_heading``, ``unquoted_directive``, ``length``, ``abort``, and
    ``reasoning_only``, whose body the budget then starves); a writer may ignore the kinds that
    mean nothing for its system. Both targets call the same writer, so the fake server and the
    simulated model answer with the same bytes.
    """

    def body(self, request: ModelRequest, reply: SynthesisReply) -> str: ...


@dataclass(frozen=True)
class _PlainReplies:
    """A writer for systems whose extensions make no model calls of their own: a short text
    naming the request, unique per request (like the default summaries ``SUMMARY-<n>``)."""

    def body(self, request: ModelRequest, reply: SynthesisReply) -> str:
        return f"EXTENSION-REPLY-{request.index + 1}\n"


#: The writer of a system without extension model calls of its own.
PLAIN_REPLIES: ExtensionReplies = _PlainReplies()


def text_of(content: Any) -> str:
    """The characters of a message content the estimates count: text, tool calls, thinking."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "toolCall":
                    parts.append(str(block.get("name", "")) + json.dumps(block.get("arguments", {})))
                elif block.get("type") == "thinking":
                    parts.append(str(block.get("thinking", "")))
    return "".join(parts)


def message_chars(message: dict[str, Any]) -> int:
    """The characters one request message adds to :func:`estimate_request_tokens`."""
    return len(text_of(message.get("content")))


def estimate_request_tokens(request: ModelRequest) -> int:
    """chars/4 of everything the request carries, rounded up: the default reported input."""
    if request.estimated_input_tokens is not None:
        return request.estimated_input_tokens
    chars = len(request.system_prompt or "")
    for message in request.messages:
        chars += _MESSAGE_CHARS.get(message, functools.partial(message_chars, message))
    return math.ceil(chars / 4)


def streamed_chars(text: str, thinking: str | None, tool_calls: tuple[ScriptedToolCall, ...]) -> int:
    """The characters a reply streams, in the order :class:`StreamPlan` counts them: the
    thinking, the text, then each tool call's arguments as the fake server encodes them."""
    return len(thinking or "") + len(text) + sum(len(tool_arguments_json(c.arguments)) for c in tool_calls)


def tool_arguments_json(arguments: dict[str, Any]) -> str:
    """A tool call's arguments as the fake server streams them (Python's ``json.dumps``)."""
    return json.dumps(arguments)


def _output_tokens(text: str, thinking: str | None, tool_calls: tuple[ScriptedToolCall, ...]) -> int:
    chars = len(text) + len(thinking or "")
    for call in tool_calls:
        chars += len(call.name) + len(json.dumps(call.arguments))
    return max(1, math.ceil(chars / 4))


@functools.lru_cache(maxsize=4096, typed=True)
def _usage(input_tokens: int, output: int) -> Usage:
    """``Usage(input=input_tokens, output=output)``, one object per pair (a frozen model of two
    whole numbers): a new one for every reply was pydantic's validation each time, about
    14,000 instructions, issue 16."""
    return Usage(input=input_tokens, output=output)


def _usage_for(
    reply_usage: Usage | None, context_tokens: int | None, request: ModelRequest, output: int
) -> Usage:
    if reply_usage is not None:
        return reply_usage
    if context_tokens is not None:
        return _usage(max(0, context_tokens - output), min(output, context_tokens))
    return _usage(estimate_request_tokens(request), output)


def _reasoning_budget(script: ModelScript, request: ModelRequest, override: int | None) -> int:
    if override is not None:
        return override
    if not request.reasoning:
        return 0
    return script.reasoning_tokens.get(request.reasoning, 0)


def respond(
    script: ModelScript,
    request: ModelRequest,
    reply: Reply | SynthesisReply | None,
    replies: ExtensionReplies,
    *,
    root: str | None = None,
) -> ModelOutcome:
    """Turn a request and its scripted reply (None: the default) into an outcome; ``replies``
    writes the body of an ``extension`` reply; ``root`` is the run's directory as the host shows
    it, for a ``{{match:...}}`` that holds :data:`ROOT_MARK`."""
    if request.kind == "summary" and reply is None:
        reply = Reply(text=f"SUMMARY-{request.index + 1}")
    if request.kind == "agent" and reply is None:
        reply = script.default_agent
    if request.kind == "extension" and reply is None:
        reply = SynthesisReply()
    assert reply is not None
    if isinstance(reply, Reply):
        return _respond_reply(request, reply, root)
    return _respond_synthesis(script, request, reply, replies)


_MATCH = re.compile(r"\{\{match:(?P<pattern>.+?)\}\}", re.DOTALL)

#: In a ``{{match:REGEX}}``, where a path may begin with the run's directory: the regex comment
#: becomes ``(?:<the run's directory>)?``, so a path under a directory with a space is read whole
#: (``/tmp/my runs/...``), where a path pattern without spaces took the part after the space.
#: It is a comment, so the pattern compiles and means the same without a run (validation, a
#: session file's import) and, for a directory without whitespace or quotes, with one: the path
#: pattern that follows already reads the directory as part of the path.
ROOT_MARK = "(?#root)"


def expand_root(pattern: str, root: str | None) -> str:
    """``pattern`` with every :data:`ROOT_MARK` made the optional run directory ``root``."""
    if root is None or ROOT_MARK not in pattern:
        return pattern
    return pattern.replace(ROOT_MARK, "(?:" + re.escape(root) + ")?")


#: How many messages (and message-and-pattern searches) :data:`_MESSAGE_TEXTS` and
#: :data:`_SEARCHES` keep within a run (the oldest entry goes first); a run's start empties them
#: (:func:`~pi_continuity_harness.scenario.identity_memo.forget_runs`).
_MEMO_LIMIT = 20_000

#: :func:`text_of` of a request's message, remembered by the message's identity: a request's
#: messages are the simulated model's recorded ones, shared from one request to the next and
#: never changed (``ScriptedModelService._shared``).
_MESSAGE_TEXTS: IdentityMemo[str] = run_memo(_MEMO_LIMIT)

#: Whether a ``{{match:REGEX}}`` pattern is found in a message's text, and what it reads there,
#: remembered by the message's identity and the compiled pattern: every request re-sends the
#: conversation, and each lookup searched (and first made) the text of every message newer
#: than the one that holds the answer, again for every request; a blitz receiver's replies
#: look their Finish ID and dossier path up so at each turn, 4.5 % of a blitz exploration
#: (issue 16). A pure function of the text and the pattern.
_SEARCHES: IdentityMemo[tuple[bool, Any]] = run_memo(_MEMO_LIMIT)

#: :func:`message_chars` of a request's message, remembered by the message's identity as
#: :data:`_MESSAGE_TEXTS` is: :func:`estimate_request_tokens` counted every message of the
#: conversation again for every request (a tool call's arguments encoded as JSON each time), 1 %
#: of a blitz exploration (issue 16).
_MESSAGE_CHARS: IdentityMemo[int] = run_memo(_MEMO_LIMIT)


def _message_text(message: dict[str, Any]) -> str:
    return text_of(message.get("content"))


def _search(pattern: re.Pattern[str], message: dict[str, Any]) -> tuple[bool, Any]:
    """``(True, what the pattern reads)`` when ``pattern`` is found in the message's text (its
    first group, or the whole match without one), else ``(False, None)``."""
    text = _MESSAGE_TEXTS.get(message, functools.partial(_message_text, message))
    hit = pattern.search(text)
    if hit is None:
        return False, None
    return True, hit.group(1) if pattern.groups else hit.group(0)


def _bad_placeholder(value: Any, where: str = "") -> str | None:
    """``"<key>: '{{match:...}}' is not a regular expression: <why>"`` for the first placeholder of
    ``value`` (a call's arguments, nested too) that does not compile, or None."""
    if isinstance(value, str):
        for found in _MATCH.finditer(value):
            problem = regex_problem(found.group("pattern"))
            if problem is not None:
                return f"{where or '(arguments)'}: {found.group(0)!r} is {problem}"
        return None
    items: Iterable[tuple[Any, Any]] = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    for key, item in items:
        step = f"[{key}]" if isinstance(key, int) else (f".{key}" if where else str(key))
        problem = _bad_placeholder(item, f"{where}{step}")
        if problem is not None:
            return problem
    return None


def _holds_match(value: Any) -> bool:
    """Whether a ``{{match:`` is in a string of ``value`` (arguments: strings, numbers, lists and
    mappings). Looked for in the strings themselves: encoding every call's arguments as JSON to
    search the text (a dossier written by a ``write`` call, at every reply) was 3.5 % of a blitz
    exploration (issue 16)."""
    if isinstance(value, str):
        return "{{match:" in value
    if isinstance(value, dict):
        return any(_holds_match(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_match(item) for item in value)
    return False


def _resolve_value(value: Any, messages: list[dict[str, Any]], root: str | None) -> Any:
    """``value`` with each ``{{match:REGEX}}`` replaced from the first of ``messages``, newest
    first, whose text (:func:`text_of` of its content) holds the pattern."""
    if isinstance(value, str):

        def lookup(found: re.Match[str]) -> str:
            pattern = re.compile(expand_root(found.group("pattern"), root))
            for message in reversed(messages):
                hit, read = _SEARCHES.get(message, functools.partial(_search, pattern, message), pattern)
                if hit:
                    return read  # type: ignore[no-any-return]
            return found.group(0)

        return _MATCH.sub(lookup, value)
    if isinstance(value, dict):
        return {k: _resolve_value(v, messages, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_value(v, messages, root) for v in value]
    return value


def resolve_tool_calls(
    request: ModelRequest, calls: tuple[ScriptedToolCall, ...], *, root: str | None = None
) -> tuple[ScriptedToolCall, ...]:
    """The calls with every ``{{match:REGEX}}`` argument replaced from the request's texts
    (``root``: the run's directory, for :data:`ROOT_MARK`)."""
    if not any(_holds_match(c.arguments) for c in calls):
        return calls
    messages = request.messages
    return tuple(
        c.model_copy(update={"arguments": _resolve_value(c.arguments, messages, root)}) for c in calls
    )


def _respond_reply(request: ModelRequest, reply: Reply, root: str | None = None) -> ModelOutcome:
    if reply.tool_calls:
        resolved = resolve_tool_calls(request, reply.tool_calls, root=root)
        if resolved is not reply.tool_calls:
            # (calls without a ``{{match:`` are the reply's own: no copy of the reply for them)
            reply = reply.model_copy(update={"tool_calls": resolved})
    if reply.error is not None:
        return ModelOutcome(
            text="",
            thinking=None,
            tool_calls=(),
            stop_reason="error",
            usage=Usage(),
            error=reply.error,
            latency_ms=reply.latency_ms,
            during=reply.during,
        )
    output = _output_tokens(reply.text, reply.thinking, reply.tool_calls)
    if reply.usage is not None:
        output = reply.usage.output
    usage = _usage_for(reply.usage, reply.context_tokens, request, output)
    if reply.finish == "length":
        stop: Literal["stop", "length", "toolUse"] = "length"
    elif reply.tool_calls or reply.finish == "tool_calls":
        stop = "toolUse"
    else:
        stop = "stop"
    return ModelOutcome(
        text=reply.text,
        thinking=reply.thinking,
        tool_calls=reply.tool_calls,
        stop_reason=stop,
        usage=usage,
        error=None,
        latency_ms=reply.latency_ms,
        during=reply.during,
        stream=reply.stream,
    )


def _respond_synthesis(
    script: ModelScript, request: ModelRequest, reply: SynthesisReply, replies: ExtensionReplies
) -> ModelOutcome:
    def outcome(
        text: str,
        stop: Literal["stop", "length", "error"],
        *,
        thinking: str | None = None,
        output: int | None = None,
        error: HttpError | None = None,
    ) -> ModelOutcome:
        if reply.thinking is not None and stop != "error":
            # A scripted reasoning text replaces the budget's placeholder and counts as output.
            if output is None or output == 0:
                output = _output_tokens(text, reply.thinking, ())
            thinking = reply.thinking
        out_tokens = output if output is not None else _output_tokens(text, None, ())
        usage = reply.usage or _usage(estimate_request_tokens(request), out_tokens)
        return ModelOutcome(
            text=text,
            thinking=thinking,
            tool_calls=(),
            stop_reason=stop,
            usage=usage if stop != "error" else Usage(),
            error=error,
            latency_ms=reply.latency_ms,
            during=reply.during,
            abort_while_held=reply.kind == "abort",
        )

    if reply.kind == "error":
        return outcome("", "error", error=reply.error)
    if reply.kind == "empty":
        return outcome("", "stop", output=0)
    if reply.kind == "raw":
        assert reply.text is not None
        return outcome(reply.text, "stop")
    reasoning = _reasoning_budget(script, request, reply.reasoning_tokens)
    body = replies.body(request, reply)
    if reply.kind == "reasoning_only":
        budget = request.max_tokens or max(reasoning, 1)
        return outcome("", "length", thinking="(reasoning)", output=budget)
    if reply.kind == "length":
        half = body[: len(body) // 2]
        return outcome(half, "length", output=math.ceil(len(half) / 4) + reasoning)
    if reply.kind == "length_whole":
        # Every heading is there; the limit cut the last sentence (spec §14: still a failure).
        cut = body.rstrip("\n")
        cut = cut[: max(cut.rfind(" "), len(cut) - 12)]
        return outcome(cut, "length", output=math.ceil(len(cut) / 4) + reasoning)
    if reply.kind == "error_after_body":
        # The whole body streams (budget or not: the error comes before any finish reason).
        whole = outcome(
            body,
            "stop",
            thinking="(reasoning)" if reasoning else None,
            output=reasoning + math.ceil(len(body) / 4),
        )
        plan = StreamPlan(
            upto=streamed_chars(whole.text, whole.thinking, ()), then="error", error=reply.error_message
        )
        return dataclasses.replace(whole, stream=plan)
    if reply.kind == "tool_use":
        call = ScriptedToolCall(name="read", arguments={"path": "NOTES.md"}, id="call_synthesis_tool")
        return ModelOutcome(
            text=body,
            thinking=None,
            tool_calls=(call,),
            stop_reason="toolUse",
            usage=reply.usage or _usage(estimate_request_tokens(request), math.ceil(len(body) / 4)),
            error=None,
            latency_ms=reply.latency_ms,
            during=reply.during,
        )
    # valid, missing_heading, abort...: a body, unless the output budget starves it.
    body_tokens = math.ceil(len(body) / 4)
    if request.max_tokens is not None and reasoning + body_tokens > request.max_tokens:
        room_chars = max(0, (request.max_tokens - reasoning) * 4)
        partial = body[:room_chars]
        thinking = "(reasoning)" if reasoning else None
        return outcome(partial, "length", thinking=thinking, output=request.max_tokens)
    return outcome(
        body, "stop", thinking="(reasoning)" if reasoning else None, output=reasoning + body_tokens
    )
