"""Host operations as data: what a scenario (or a Gherkin step) asks the host to do.

Each operation is a one-key mapping in YAML (``- prompt: hello``). The same operations
drive the simulated host and a real Pi process: every one of them has an RPC (or process)
equivalent, named in its docstring.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import zlib
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pi_continuity_harness.scenario.confine import check_scenario_path
from pi_continuity_harness.scenario.file_content import (
    BASE64_DESCRIPTION,
    JSON_DESCRIPTION,
    JsonGiven,
    check_base64,
    content_refused,
    decode_base64,
    mark_given_null,
    refuse_second_content,
    settle_given_null,
)
from pi_continuity_harness.scenario.numbers import Int, OptionalInt
from pi_continuity_harness.scenario.regex_check import regex_problem

__all__ = [
    "NO_PREVIOUS_SESSION",
    "TREE_COMMAND",
    "AbortOp",
    "BashOp",
    "BashSpec",
    "ClearQueueOp",
    "CloneOp",
    "CommandOp",
    "CompactOp",
    "CrashOp",
    "CycleModelOp",
    "CycleThinkingLevelOp",
    "DialogAnswer",
    "DialogAnswerMismatchError",
    "EditFileOp",
    "ForkOp",
    "ImageSpec",
    "NewSessionOp",
    "Operation",
    "Operations",
    "PromptOp",
    "ReloadOp",
    "RestartOp",
    "SetAutoCompactionOp",
    "SetAutoRetryOp",
    "SetFollowUpModeOp",
    "SetModelOp",
    "SetSessionNameOp",
    "SetSteeringModeOp",
    "SetThinkingLevelOp",
    "SwitchSessionOp",
    "SwitchSessionSpec",
    "TreeOp",
    "TreeSpec",
    "bash_command_id",
    "no_fork_message",
    "no_such_session_message",
    "no_tree_message",
    "operation_name",
    "pick_answer",
    "pick_fork_message",
    "switch_session_target",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: Pi's resize limits (``dist/utils/image-resize-core.js:9-15``): an image within them is sent
#: as given (``:53-62``); a bigger one is resized by Photon, which the simulator does not model.
#: Pi keeps an image when ``width <= 2000 && height <= 2000 && ceil(bytes / 3) * 4 < 4718592``
#: (``:39, 54``), the size being canonical base64's length, which ``ImageSpec`` requires the data
#: to be. Measured on real Pi 1.6.0's ``processImage`` (5 December 2026): 2000x2000 and a
#: 4,718,588-character image are kept; 2001x1, 1x2001 (re-encoded as JPEG) and a
#: 4,718,592-character image are changed, with a dimension note.
_MAX_IMAGE_SIDE = 2000
_MAX_IMAGE_BASE64 = int(4.5 * 1024 * 1024)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


#: PNG colour types (IHDR byte 9): channels per pixel and the bit depths allowed (PNG spec 11.2.2).
_PNG_COLOUR_TYPES = {
    0: (1, (1, 2, 4, 8, 16)),
    2: (3, (8, 16)),
    3: (1, (1, 2, 4, 8)),
    4: (2, (8, 16)),
    6: (4, (8, 16)),
}

#: Adam7's passes (PNG spec 8.2): first column, first row, column step, row step.
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _png_data_size(header: bytes) -> int:
    """How many bytes the image data of a PNG with IHDR ``header`` inflates to: per row (of each
    Adam7 pass when interlaced) one filter byte and the row's pixels; ValueError when the header
    is not one a decoder reads (a colour type or bit depth PNG has not, a method other than 0)."""
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", header)
    channels, depths = _PNG_COLOUR_TYPES.get(colour, (0, ()))
    if depth not in depths:
        raise ValueError(f"PNG IHDR has bit depth {depth} with colour type {colour}, which PNG has not")
    if compression != 0 or filtering != 0 or interlace not in (0, 1):
        raise ValueError("PNG IHDR names a compression, filter or interlace method PNG has not")

    def rows(columns: int, count: int) -> int:
        return 0 if columns == 0 or count == 0 else count * (1 + (columns * channels * depth + 7) // 8)

    if interlace == 0:
        return rows(width, height)
    return sum(
        rows(max(0, (width - x + dx - 1) // dx), max(0, (height - y + dy - 1) // dy))
        for x, y, dx, dy in _ADAM7
    )


def _check_png(raw: bytes) -> None:
    """A well-formed PNG within Pi's limits, or ValueError saying what is wrong.

    Pi decodes every prompt image (``processImage``, ``dist/utils/image-process.js:41-63``;
    Photon in ``image-resize-core.js:46-62``): a well-formed PNG of at most 2000x2000 pixels
    goes out byte for byte, anything else is converted, resized or replaced by a hint. The
    simulator models only the first case, so a scenario may carry only such an image: the
    signature, every chunk's CRC, IHDR first, IDAT that inflates to exactly the size its IHDR
    declares, IEND last.

    The image data is inflated with that size as the bound: ``zlib.decompress`` inflated it
    whole, so a 4.3 MB scenario whose 1x1 PNG carried 3.2 GB of deflated zeros took 6.6 GB of
    memory before anything was refused. Now at most one byte more than the header declares is
    inflated (at most 32 MB, for 2000x2000 RGBA of 16 bits)."""
    if not raw.startswith(_PNG_SIGNATURE):
        raise ValueError("not a PNG (no PNG signature)")
    position, chunks, idat = len(_PNG_SIGNATURE), [], []
    header = b""
    while position < len(raw):
        if position + 12 > len(raw):
            raise ValueError("truncated PNG chunk")
        (length,) = struct.unpack(">I", raw[position : position + 4])
        kind = raw[position + 4 : position + 8]
        body = raw[position + 8 : position + 8 + length]
        crc_at = position + 8 + length
        if len(body) != length or crc_at + 4 > len(raw):
            raise ValueError("truncated PNG chunk")
        (crc,) = struct.unpack(">I", raw[crc_at : crc_at + 4])
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"PNG chunk {kind.decode('latin-1')} has a bad CRC")
        if kind == b"IHDR" and length == 13:
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        chunks.append(kind)
        position = crc_at + 4
    if not chunks or chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or not idat:
        raise ValueError("a PNG needs IHDR first, IDAT and IEND last")
    width, height = struct.unpack(">II", header[:8]) if header else (0, 0)
    if not (0 < width <= _MAX_IMAGE_SIDE and 0 < height <= _MAX_IMAGE_SIDE):
        raise ValueError(
            f"a {width}x{height} PNG would be resized by Pi (at most "
            f"{_MAX_IMAGE_SIDE}x{_MAX_IMAGE_SIDE}; resizing is not modelled)"
        )
    expected = _png_data_size(header)
    inflater = zlib.decompressobj()
    try:
        size = len(inflater.decompress(b"".join(idat), expected + 1))
    except zlib.error as error:
        raise ValueError(f"PNG image data does not inflate: {error}") from None
    if size > expected:
        raise ValueError(
            f"PNG image data inflates to more than the {expected:,} bytes its IHDR ({width}x{height}) declares"
        )
    if not inflater.eof:
        raise ValueError("PNG image data does not inflate: incomplete or truncated stream")
    if size < expected:
        raise ValueError(
            f"PNG image data inflates to {size:,} bytes, not the {expected:,} its IHDR ({width}x{height}) declares"
        )


class ImageSpec(_Strict):
    """An image attached to a prompt (RPC ``prompt.images[]``: ``{type, data, mimeType}``,
    ``dist/modes/rpc/rpc-mode.js:324-326``): base64 of a PNG of at most 2000x2000 pixels."""

    data: str = Field(description="base64 of a PNG of at most 2000x2000 pixels")
    mime_type: Literal["image/png"] = Field(alias="mimeType")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("data")
    @classmethod
    def _png(cls, value: str) -> str:
        if len(value) >= _MAX_IMAGE_BASE64:
            raise ValueError("larger than Pi's 4.5 MB inline limit (resizing is not modelled)")
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("not base64") from None
        if base64.b64encode(raw).decode("ascii") != value:
            # Pi decodes the data and sends ``Buffer.from(bytes).toString("base64")`` of it
            # (image-resize-core.js:56, image-process.js:78), so base64 whose padding bits are not
            # zero (``gh==`` for ``gg==``) goes out changed even when the image is kept.
            raise ValueError(
                "not canonical base64: Pi re-encodes it, which changes the data (re-encode it, "
                "e.g. base64.b64encode(base64.b64decode(data)))"
            )
        _check_png(raw)
        return value

    def to_content(self) -> dict[str, str]:
        """The image block as Pi stores and sends it (``agent-session.js:1689``)."""
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}


#: The longest prompt ``chars`` may pad to: 10 million characters, about 2.5 million tokens,
#: above any model's context window. A scenario is shared data, and ``chars: 100000000000``
#: ended ``simulate`` in a MemoryError traceback (issue 16's eighth pass).
MAX_PROMPT_CHARS = 10_000_000


class PromptSpec(_Strict):
    """A user prompt. ``text`` may be padded to ``chars`` characters to grow the context;
    ``images`` go with it as RPC ``prompt.images``, queued ones too."""

    text: str = "continue"
    chars: OptionalInt = Field(
        default=None, ge=1, le=MAX_PROMPT_CHARS, description="Pad the prompt with filler to this length"
    )
    streaming_behavior: Literal["steer", "followUp"] | None = None
    images: tuple[ImageSpec, ...] = Field(
        default=(), description="images sent with the prompt (RPC prompt.images)"
    )

    def render(self) -> str:
        if self.chars is None or len(self.text) >= self.chars:
            return self.text
        filler = " lorem ipsum dolor sit amet"
        body = self.text + filler * ((self.chars - len(self.text)) // len(filler) + 1)
        return body[: self.chars]


class PromptOp(_Strict):
    """The user sends a prompt (RPC ``prompt``); the op ends when the run settles."""

    prompt: PromptSpec

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("prompt"), str):
            return {**data, "prompt": {"text": data["prompt"]}}
        return data


class DialogAnswer(_Strict):
    """One scripted answer to an extension dialog.

    Exactly one of ``select`` (an option, or ``/regex/`` matching one), ``input`` (text),
    ``confirm`` (bool) or ``cancel: true`` (the user dismisses the dialog). Without
    ``when``, answers are used in the order the dialogs open. With ``when`` (a
    case-insensitive regex), the answer goes to the first dialog whose title, message or
    options match it, wherever it comes: that is how one script answers any
    implementation's menus ("pick the option about compaction", "the trigger percent is 75").

    ``during`` holds the dialog open: its operations run, in order, while the dialog waits
    for the user, and the answer is given when they have ended, as a held reply's ``during``
    (``scenario/model_script.py``). On real Pi a command line sent meanwhile runs at once: every
    stdin line is handled without waiting for the one before (``dist/modes/rpc/rpc-mode.js:663-665``),
    the RPC ``prompt`` case does not await the extension command it started (``:318-343``), and the
    open dialog's promise waits for its ``extension_ui_response`` (``:52-84``, resolved at
    ``:624-635``).
    """

    select: str | None = None
    input: str | None = None
    confirm: bool | None = None
    cancel: bool | None = None
    when: str | None = Field(default=None, description="Regex over the dialog's title, message and options")
    during: Operations = Field(
        default=(),
        description="Operations run while this dialog is open, before the answer is given",
    )

    @model_validator(mode="after")
    def _one_key(self) -> DialogAnswer:
        given = [k for k in ("select", "input", "confirm", "cancel") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a dialog answer has exactly one of: select, input, confirm, cancel")
        if self.when is not None:
            problem = regex_problem(self.when, re.IGNORECASE)
            if problem is not None:
                raise ValueError(f"when: {self.when!r} is {problem}")
        select = self.select
        if select is not None and len(select) > 1 and select.startswith("/") and select.endswith("/"):
            problem = regex_problem(select[1:-1], re.IGNORECASE)
            if problem is not None:
                raise ValueError(f"select: {select!r} is {problem}")
        return self

    def record(self) -> dict[str, Any]:
        """The answer as a dialog's trace record shows it (the operations of ``during`` are
        recorded as operations of their own)."""
        return self.model_dump(exclude_none=True, exclude={"during"})

    @property
    def method(self) -> str:
        for key in ("select", "input", "confirm", "cancel"):
            if getattr(self, key) is not None:
                return key
        raise AssertionError("validated to have one key")

    def fits(self, method: str) -> bool:
        """Whether this answer can answer a dialog of ``method`` (an editor takes input)."""
        wanted = "input" if method == "editor" else method
        return self.method in (wanted, "cancel")

    def choose(self, options: list[str]) -> str | None:
        """The option a ``select`` answer picks: the exact text, or the first ``/regex/`` match."""
        value = self.select
        if value is None:
            return None
        if len(value) > 1 and value.startswith("/") and value.endswith("/"):
            pattern = re.compile(value[1:-1], re.IGNORECASE)
            return next((o for o in options if pattern.search(o)), None)
        return value if value in options else None


class DialogAnswerMismatchError(BaseException):
    """The next positional answer does not fit the dialog that opened: a scenario error.

    A ``BaseException`` (like ``SimulatedCrash``) so the runner's isolation of extension
    errors (``except Exception`` around every command and handler) cannot turn a broken
    scenario into an ``extension_error``: the operation fails with this message instead.
    """


def pick_answer(
    pending: list[DialogAnswer], method: str, title: str, message: str = "", options: list[str] | None = None
) -> DialogAnswer | None:
    """Take the answer for one dialog out of ``pending`` (``None``: nothing fits, cancel it).

    Targeted answers (``when``) are tried first; otherwise the first positional answer is
    used, and it must fit the dialog's kind.
    """
    haystack = "\n".join([title, message, *(options or [])])
    for index, answer in enumerate(pending):
        targeted = answer.when is not None and answer.fits(method)
        if targeted and re.search(str(answer.when), haystack, re.IGNORECASE):
            return pending.pop(index)
    for index, answer in enumerate(pending):
        if answer.when is None:
            if not answer.fits(method):
                raise DialogAnswerMismatchError(
                    f"dialog {method!r} ({title!r}) opened, but the next scripted answer is {answer.method!r}"
                )
            return pending.pop(index)
    return None


class CommandSpec(_Strict):
    """A command line, its dialog answers, and whether the operation waits for the command.

    ``wait: false`` sends the command and goes on at once, as an RPC client that writes the next
    command line without waiting for the response (Pi answers an extension command's ``prompt``
    only when the handler has returned, ``dist/core/agent-session.js:1713-1718``, and runs the
    next stdin line meanwhile, ``dist/modes/rpc/rpc-mode.js:318-343``). The next operation then
    runs while this command is still held (for example while ``/sh cancel`` waits for the turn
    to settle). The command has started when the next operation runs: it ran up to its first
    wait. Only a held reply's or a dialog answer's ``during`` and a ``faults.inject`` rule may hold
    such a command (at the top level the next operation waits for the host to be quiet anyway),
    and it takes no ``answers`` (they would have no operation to belong to).
    """

    text: str = Field(description="The command line, starting with '/'")
    answers: tuple[DialogAnswer, ...] = ()
    wait: bool = Field(
        default=True,
        strict=True,
        description="false: send the command and run the next operation while it is still running",
    )

    @model_validator(mode="after")
    def _slash(self) -> CommandSpec:
        if not self.text.startswith("/"):
            raise ValueError("a command starts with '/'")
        if not self.wait and self.answers:
            raise ValueError("wait: false takes no answers (no operation waits for its dialogs)")
        return self


class CommandOp(_Strict):
    """The user runs an extension command (RPC ``prompt`` with ``/name args``)."""

    command: CommandSpec

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            rest = {k: v for k, v in data.items() if k != "command"}
            answers = rest.pop("answers", ())
            return {**rest, "command": {"text": data["command"], "answers": answers}}
        return data


class CompactSpec(_Strict):
    custom_instructions: str | None = None


class _ValueOptional(_Strict):
    """An operation whose value may be left out: ``- compact:`` reads as ``- compact: {}``."""

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        key = next(iter(cls.model_fields))
        if isinstance(data, dict) and key in data and data[key] is None:
            return {**data, key: {}}
        return data


class CompactOp(_ValueOptional):
    """Manual compaction (RPC ``compact``, TUI ``/compact``): aborts a running turn first."""

    compact: CompactSpec = CompactSpec()


class _Empty(_Strict):
    pass


class AbortOp(_ValueOptional):
    """Abort the running operation (RPC ``abort``)."""

    abort: _Empty = _Empty()


class ClearQueueOp(_ValueOptional):
    """Drop every queued steering and follow-up message (RPC ``clear_queue``,
    ``dist/modes/rpc/rpc-mode.js:357-359``; ``clearQueue``, ``dist/core/agent-session.js:2055-2063``):
    they never reach the model; a ``queue_update`` with empty lists follows."""

    clear_queue: _Empty = _Empty()


class ReloadOp(_ValueOptional):
    """``/reload`` / ``ctx.reload()``: shutdown(reload), fresh extension instances, start(reload)."""

    reload: _Empty = _Empty()


class RestartOp(_ValueOptional):
    """Quit Pi and start a new process over the same session file (``session_start`` startup)."""

    restart: _Empty = _Empty()


class CrashOp(_ValueOptional):
    """Kill the Pi process now: nothing more happens, files stay as they are."""

    crash: _Empty = _Empty()


class SetModelOp(_Strict):
    """Switch the active model (RPC ``set_model``); emits ``model_select`` when it changes."""

    set_model: str = Field(description="provider/id of a model declared in the scenario")


class SetAutoCompactionOp(_Strict):
    """RPC ``set_auto_compaction {enabled}`` (``dist/modes/rpc/rpc-mode.js:444-447``): Pi sets
    ``compaction.enabled`` in its *global* settings, in memory at once and in
    ``<agentDir>/settings.json`` (``setCompactionEnabled``, ``dist/core/settings-manager.js:646-653``);
    a project file's ``compaction.enabled`` still wins."""

    set_auto_compaction: bool = Field(
        strict=True, description="true turns automatic compaction on, false off"
    )


class SetAutoRetryOp(_Strict):
    """RPC ``set_auto_retry {enabled}`` (``dist/modes/rpc/rpc-mode.js:451-454``): ``retry.enabled``
    in Pi's global settings, as ``set_auto_compaction`` (``setRetryEnabled``,
    ``dist/core/settings-manager.js:697-704``)."""

    set_auto_retry: bool = Field(strict=True, description="true turns automatic retry on, false off")


class SetSessionNameOp(_Strict):
    """RPC ``set_session_name {name}`` (``dist/modes/rpc/rpc-mode.js:537-544``): the name trimmed
    as JavaScript's ``trim`` trims (a BOM and no-break spaces too);
    an empty one is Pi's error (``Session name cannot be empty``); else a ``session_info`` entry
    and ``session_info_changed`` (``setSessionName``, ``dist/core/agent-session.js:3350-3355``)."""

    set_session_name: str


class CycleModelOp(_ValueOptional):
    """RPC ``cycle_model`` (``dist/modes/rpc/rpc-mode.js:397-403``; ``cycleModel``,
    ``dist/core/agent-session.js:2157-2209``): the next available model (the first when the
    current one is not available; nothing when it is the only one), with its thinking level,
    a ``model_change`` entry and ``model_select{source: cycle}``."""

    cycle_model: _Empty = _Empty()


class CycleThinkingLevelOp(_ValueOptional):
    """RPC ``cycle_thinking_level`` (``rpc-mode.js:415-421``; ``cycleThinkingLevel``,
    ``agent-session.js:2243-2252``): the model's next thinking level; nothing for a model without
    reasoning."""

    cycle_thinking_level: _Empty = _Empty()


class SetThinkingLevelOp(_Strict):
    """RPC ``set_thinking_level {level}`` (``rpc-mode.js:411-414``; ``setThinkingLevel``,
    ``agent-session.js:2219-2242``): clamped to the model; an entry and
    ``thinking_level_select`` only when the level changes."""

    set_thinking_level: Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]


class SetSteeringModeOp(_Strict):
    """RPC ``set_steering_mode {mode}`` (``dist/modes/rpc/rpc-mode.js:429-432``): the agent's
    steering queue takes one queued message per turn (``one-at-a-time``) or all of them
    (``all``) from now on, and ``steeringMode`` is written to Pi's global settings
    (``setSteeringMode``, ``dist/core/agent-session.js:2295-2298``, settings-manager.js:564-568)."""

    set_steering_mode: Literal["all", "one-at-a-time"]


class SetFollowUpModeOp(_Strict):
    """RPC ``set_follow_up_mode {mode}`` (``dist/modes/rpc/rpc-mode.js:433-436``): as
    ``set_steering_mode`` for the follow-up queue (``followUpMode``)."""

    set_follow_up_mode: Literal["all", "one-at-a-time"]


class NewSessionSpec(_Strict):
    parent: bool = Field(default=True, description="Link the new session to the current one")


class NewSessionOp(_ValueOptional):
    """Start a new session (RPC ``new_session``)."""

    new_session: NewSessionSpec = NewSessionSpec()


class ForkSpec(_Strict):
    message: Int = Field(
        default=-1,
        description=(
            "which user message to fork before: 1-based among the messages Pi offers "
            "(RPC get_fork_messages), negative from the end (-1: the last)"
        ),
    )

    @field_validator("message")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("0 names no message (1 is the first, -1 the last)")
        return value


class ForkOp(_ValueOptional):
    """Fork the session before a user message (RPC ``get_fork_messages``, then ``fork`` with that
    message's entry ID, ``dist/modes/rpc/rpc-mode.js:501-516``): ``session_before_fork`` may cancel
    it; otherwise Pi switches to a new session holding the path up to that message's parent."""

    fork: ForkSpec = ForkSpec()


class CloneOp(_ValueOptional):
    """Clone the session at its leaf (RPC ``clone``, ``dist/modes/rpc/rpc-mode.js:505-512``): a fork
    at the current entry (``AgentSessionRuntime.fork(leafId, {position: "at"})``,
    ``dist/core/agent-session-runtime.js:193-262``). ``session_before_fork{entryId, position:
    at}`` may cancel it; otherwise Pi switches to a new session holding the whole current branch,
    its header linking the source file. A session with no leaf (``Cannot clone session: no
    current entry selected``) or whose file Pi has not written yet (``This session has not been
    saved yet...``, before its first assistant message) is refused with Pi's error."""

    clone: _Empty = _Empty()


class SwitchSessionSpec(_Strict):
    to: Literal["previous"] | Annotated[Int, Field(ge=1)] = Field(
        default="previous",
        description=(
            "which session to resume: previous, the session file Pi named as previousSessionFile "
            "in the last session_start of this process that named one (after a new_session, "
            "fork, clone or switch_session, the session the run was in before); or N >= 1, the "
            "run's Nth session file in the order its session_start first named it, across "
            "restarts (1: the session the run started in)"
        ),
    )


class SwitchSessionOp(_ValueOptional):
    """Resume another session of the run (RPC ``switch_session {sessionPath}``,
    ``dist/modes/rpc/rpc-mode.js:497-500``; TUI ``/resume``): ``AgentSessionRuntime.switchSession``
    (``dist/core/agent-session-runtime.js:147-165``) emits ``session_before_switch{resume,
    targetSessionFile}`` (an extension may cancel), settles the running turn,
    ``session_shutdown{resume}``, opens the file (``SessionManager.open``, its directory the
    file's own) and starts a new runtime with ``session_start{resume, previousSessionFile}``.
    With no previous session in this process (none yet, or only a restart since), or fewer than
    N session files in the run (``to: N``), the outcome's error says so and nothing is sent.
    ``to: N`` resumes a session after a restart too (the new process has no previous one), by
    its place in the run: session file paths differ between the targets (Pi names them by time
    and a random id), their order does not."""

    switch_session: SwitchSessionSpec = SwitchSessionSpec()


class TreeSpec(_Strict):
    """Where to move the leaf, and whether the operation waits (see :class:`TreeOp`)."""

    to: Int = Field(
        default=-1,
        description=(
            "which user message to navigate to, numbered as fork numbers them: 1-based among the "
            "messages Pi offers (RPC get_fork_messages), negative from the end (-1: the last). "
            "Pi puts the leaf on that message's parent (at the root: no leaf)"
        ),
    )
    wait: bool = Field(
        default=True,
        strict=True,
        description=(
            "false: send the navigation and run the next operation while it is still pending "
            "(as command.wait: false; for a held reply's during)"
        ),
    )

    @field_validator("to")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("0 names no message (1 is the first, -1 the last)")
        return value


class TreeOp(_ValueOptional):
    """Navigate the session tree to a user message (``AgentSession.navigateTree``,
    ``dist/core/agent-session.js:3370-3535``), without a branch summary.

    Pi 1.6's RPC has no tree command, so the operation is a *command*: the real-Pi target runs
    the observer extension's ``/harness-tree <entryId>`` (``ctx.navigateTree``), the simulator
    the same command of its host; both go through ``prompt()`` like any RPC prompt of a command,
    so one sent while ``agent_settled`` handlers run is deferred until they end
    (agent-session.js:1705-1708). The entry is chosen when the operation is sent, from RPC
    ``get_fork_messages`` as ``fork`` chooses it. What the navigation did is recorded as the
    extension event ``tree_navigation`` (``targetId``, ``oldLeafId``, ``newLeafId``,
    ``cancelled``, or ``error`` with Pi's message). An awaited navigation fails
    with ``cancelled`` when an extension cancelled it, or with Pi's message when Pi threw."""

    tree: TreeSpec = TreeSpec()


#: The content fields validated before each field that checks ``kind`` (declaration order).
_EARLIER_CONTENT: dict[str, tuple[str, ...]] = {
    "text": (),
    "json_value": ("text",),
    "merge_json": ("text", "json_value", "base64_value"),
}


class EditFileSpec(JsonGiven, _Strict):
    """Write, replace or remove a file under the workspace, as a user or a fault would.

    ``path`` is relative to the project directory (``$PROJECT``) unless it starts with
    ``$AGENT/`` (the agent directory). ``kind: directory`` creates a directory at the path
    (for example a directory where a file should be), ``kind: file`` a file (one of ``text``,
    ``json`` or ``base64``), ``kind: absent`` removes whatever is there, ``kind: symlink`` puts a symbolic
    link to ``target`` there (whatever was there is removed first).

    A link's ``target`` is a scenario path like ``path`` (checked by the same
    ``confine.check_scenario_path``: no absolute path, no ``..``), and the link is written
    relative to its own directory, so it holds the same bytes on both targets and in any run
    directory. Why a link at all: pi-blitz-handoff's Finish must refuse a dossier that is a
    symbolic link (H34b, "nonempty-regular-file check") and its managed directories may be
    "deliberate directory symlinks" (H109); no scenario could plant one before.

    ``base64`` writes exact bytes (``kind: file`` only, instead of ``text`` or ``json``): a file
    that is not UTF-8 text. Why: pi-blitz-handoff's ``/sh recover`` must report an unreadable
    recovery file and keep it (H86, "unreadable reported/retained") and Inspect must show the
    "entire unchanged contents" (H82; reference: Status, cancellation and recovery), so a
    recovery file that does not decode must be reported, not shown with replacement characters;
    ``text`` is written as UTF-8, so no scenario could plant such a file before.
    """

    path: str = Field(description="Relative to the project, or under $PROJECT/, $AGENT/ or $SESSIONS/")
    kind: Literal["file", "directory", "absent", "symlink"] = "file"
    text: str | None = None
    json_value: Any = Field(default=None, alias="json", description=f"kind file: {JSON_DESCRIPTION}")
    base64_value: str | None = Field(
        default=None,
        alias="base64",
        description=f"kind file: {BASE64_DESCRIPTION}",
        json_schema_extra={"contentEncoding": "base64"},
    )
    merge_json: bool = Field(default=False, description="Deep-merge json into an existing JSON file")
    target: str | None = Field(
        default=None,
        validate_default=True,
        description="kind symlink: what the link points to, a path inside the run named as `path` is "
        "(relative to the project, or under $PROJECT/, $AGENT/ or $SESSIONS/); written relative to "
        "the link's directory",
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        check_scenario_path(value)
        return value

    @field_validator("json_value", mode="before")
    @classmethod
    def _null_is_content(cls, value: Any) -> Any:
        """``json: null`` given is the JSON ``null`` (:data:`~.file_content.GIVEN_NULL` until
        every field is valid): before, it counted as no ``json`` and wrote an empty file."""
        return mark_given_null(value)

    @field_validator("text", "json_value", "merge_json")
    @classmethod
    def _content_for_a_file(cls, value: Any, info: ValidationInfo) -> Any:
        """``text`` and ``json`` are a file's content, for ``kind: file`` only (as ``base64`` is).
        A link has no content of its own: with ``kind: symlink`` they would be written nowhere
        (or through the link, which is ``kind: file`` on the target's path); ``kind: directory``
        and ``kind: absent`` write no file, so the content was silently dropped. ``merge_json``
        (how ``json`` is written) is refused with a link too.

        ``json`` given is content whatever its value (``null``, ``false`` and ``0`` too: before,
        ``false`` and ``0`` passed with a link, being equal to ``False``); ``text: null`` and
        ``merge_json: false`` give nothing. One mistake, one line: when an earlier content field
        was refused already (``text`` and ``json`` with a link), the later ones are not refused
        again."""
        if value is None or (info.field_name == "merge_json" and not value):
            return value
        if content_refused(info.data, _EARLIER_CONTENT[str(info.field_name)]):
            return value
        kind = info.data.get("kind")
        if kind == "symlink":
            raise ValueError("kind symlink takes a target, not file content")
        if kind in ("directory", "absent") and info.field_name != "merge_json":
            field = "json" if info.field_name == "json_value" else str(info.field_name)
            raise ValueError(f"{field} is a file's content, for kind file, not kind {kind}")
        return value

    @field_validator("json_value")
    @classmethod
    def _one_content(cls, value: Any, info: ValidationInfo) -> Any:
        """``text`` and ``json`` both give the file's content: which would it hold? Before, the
        file was written from ``json`` and the ``text`` silently dropped."""
        if value is not None:
            refuse_second_content("json", info.data, {"text": "text"})
        return value

    @field_validator("base64_value")
    @classmethod
    def _exact_bytes(cls, value: str | None, info: ValidationInfo) -> str | None:
        """``base64`` is a file's whole content, so it is for ``kind: file`` only and excludes
        ``text`` and ``json`` (which of them would the file hold?); it must decode strictly
        (``validate=True``: a character outside the alphabet or a bad padding is refused, not
        skipped, so the bytes written are the bytes meant)."""
        if value is None or content_refused(info.data, ("text", "json_value")):
            return value  # an earlier content field was refused: one mistake, one line
        kind = info.data.get("kind")
        if kind is not None and kind != "file":
            raise ValueError(f"base64 is a file's content, for kind file, not kind {kind}")
        refuse_second_content("base64", info.data, {"text": "text", "json": "json_value"})
        return check_base64(value)

    @property
    def content_bytes(self) -> bytes | None:
        """The exact bytes ``base64`` gives (None: the edit gives none)."""
        return decode_base64(self.base64_value)

    @field_validator("target")
    @classmethod
    def _link_target(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Only a link has a ``target`` and a link needs one, a path inside the run
        (``check_scenario_path``: refused when absolute or with ``..``, so a link never points
        out of the run it is planted in). A link to itself would be a loop every later path
        check stops at (``ELOOP``)."""
        kind = info.data.get("kind")
        if kind is None:
            return value  # kind itself was refused
        if kind != "symlink":
            if value is not None:
                raise ValueError(f"target is for kind symlink, not kind {kind}")
            return value
        if value is None:
            raise ValueError("kind symlink needs a target: the path the link points to")
        check_scenario_path(value)
        path = info.data.get("path")
        if path is not None and _same_scenario_path(value, path):
            raise ValueError(f"{value!r}: a link to itself is a loop")
        return value

    @model_validator(mode="after")
    def _mergeable(self) -> EditFileSpec:
        """``merge_json`` deep-merges an object into the file's object (``workspace.deep_merge``,
        Pi's ``deepMergeObjects``): anything else to merge is a mistake in the scenario. First
        a given ``json: null`` becomes ``None`` again (:func:`~.file_content.settle_given_null`)."""
        settle_given_null(self)
        if self.merge_json and not isinstance(self.json_value, dict):
            if not self.json_given:
                given = "no json"
            else:
                given = "json is " + ("null" if self.json_value is None else type(self.json_value).__name__)
            raise ValueError(f"merge_json merges a JSON object into the file's object, but {given}")
        return self


def _same_scenario_path(a: str, b: str) -> bool:
    """Whether two scenario paths name the same file (``$PROJECT/x`` is ``x``)."""
    prefix = "$PROJECT/"
    return (a[len(prefix) :] if a.startswith(prefix) else a) == (
        b[len(prefix) :] if b.startswith(prefix) else b
    )


class EditFileOp(_Strict):
    """A filesystem change made from outside Pi (never hot-reloaded by Pi)."""

    edit_file: EditFileSpec


#: What Pi's bash executor removes from a command's output (``sanitizeBinaryOutput``,
#: ``dist/utils/shell.js:165-168``, after ``stripAnsi`` and ``\r`` removal,
#: ``dist/core/bash-executor.js:38-40``): an output holding one would differ between the targets.
_PI_STRIPS = re.compile(r"[\x00-\x08\x0b-\x1f\ufff9-\ufffb]")
#: ``truncateTail``'s limits (``dist/core/tools/truncate.js:10-11, 123-135``): a longer output is
#: cut and written to a temporary file, which the simulator does not model.
_MAX_OUTPUT_LINES = 2000
_MAX_OUTPUT_BYTES = 50 * 1024


class BashSpec(_Strict):
    """A user's shell command (RPC ``bash``), its output and exit code on the simulator.

    Real Pi (``dist/modes/rpc/rpc-mode.js:462-481``) first emits ``user_bash`` to the
    extensions; a handler's ``{result}`` is recorded as the command's outcome, otherwise Pi runs
    the command in the project directory. The simulator's shell runs nothing, so ``output`` and
    ``exit_code`` say what the command prints and returns on real Pi (as a scripted tool call's
    ``result`` does); on real Pi they are unused. Since the command really runs on real Pi, it is
    held to the rule of a scripted ``bash`` tool call (``tool_confinement.real_pi_command_problem``:
    only programs that act on the paths they are given, no path outside the project), here, at
    load, for both targets."""

    command: str = Field(description="The command line, run in the project directory on real Pi")
    output: str = Field(
        default="",
        description="What the command prints (stdout and stderr as one text); the simulator's shell runs nothing",
    )
    exit_code: Int = Field(default=0, ge=0, le=255, description="The command's exit code on the simulator")
    exclude_from_context: bool | None = Field(
        default=None,
        strict=True,
        description="RPC excludeFromContext: true keeps the record out of the model's context",
    )

    @field_validator("command")
    @classmethod
    def _confined(cls, value: str) -> str:
        # Imported here: tool_confinement reads the model script, which imports this module.
        from pi_continuity_harness.scenario.tool_confinement import real_pi_command_problem  # noqa: PLC0415

        if "{{match:" in value:
            raise ValueError(
                "{{match:...}} is for a scripted tool call; an operation's command is sent as written"
            )
        problem = real_pi_command_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("output")
    @classmethod
    def _as_pi_keeps_it(cls, value: str) -> str:
        found = _PI_STRIPS.search(value)
        if found is not None:
            raise ValueError(
                f"holds {found.group()!r}, which Pi removes from a command's output (control characters, "
                "ANSI escapes and '\\r' are not modelled)"
            )
        lines = value.split("\n")
        count = len(lines) - 1 if value.endswith("\n") else len(lines) if value else 0
        size = len(value.encode("utf-8", "surrogatepass"))
        if count > _MAX_OUTPUT_LINES or size > _MAX_OUTPUT_BYTES:
            raise ValueError(
                f"{count:,} lines, {size:,} bytes: Pi truncates an output of more than {_MAX_OUTPUT_LINES:,} lines "
                f"or {_MAX_OUTPUT_BYTES:,} bytes (truncation is not modelled)"
            )
        return value


def bash_command_id(count: int) -> str:
    """The RPC ``id`` of the ``count``-th (1-based) ``bash`` operation a target sends in a run.

    Real Pi puts the command's id in every ``bash_execution_update`` it streams
    (agent-session.js:3277: ``{type, id: options.id, delta}``; rpc-mode.js:475 passes the RPC
    id), so the id is part of what a run records. The real-Pi client numbers its commands
    (``h<n>``, counting every command it sends) and the simulator has no RPC ids; both targets
    send this one instead, so the same scenario records the same ids on both."""
    return f"bash-{count}"


class BashOp(_Strict):
    """The user runs a shell command (RPC ``bash``); the op ends with Pi's response."""

    bash: BashSpec

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("bash"), str):
            return {**data, "bash": {"command": data["bash"]}}
        return data


_OPERATION_KEYS = (
    "prompt",
    "command",
    "compact",
    "abort",
    "clear_queue",
    "reload",
    "restart",
    "crash",
    "set_model",
    "set_auto_compaction",
    "set_auto_retry",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_session_name",
    "cycle_model",
    "set_thinking_level",
    "cycle_thinking_level",
    "new_session",
    "edit_file",
    "fork",
    "clone",
    "switch_session",
    "tree",
    "bash",
)


#: The key :func:`_operation_key` found for an operation model, per class (see there).
_KEY_OF_CLASS: dict[type, str | None] = {}


def _operation_key(value: Any) -> str | None:
    """The operation key of ``value``: a mapping's one key, a bare word, or the first key a model
    has as an attribute.

    For a model, the attributes looked for before its own are refused by pydantic's
    ``__getattr__`` with an exception each: 12 us for a ``command``, more for the keys further
    down, twice per operation the simulator runs (issue 16). So the answer is kept per class of
    the operations below, which forbid extra fields: an instance has its class's attributes and
    the fields set on it, so the keys before its own are missing from every instance alike; the
    kept key stands for an instance that has it set (``__dict__`` holds the fields, one
    ``model_construct`` may leave out), any other is asked as before."""
    if isinstance(value, dict):
        keys = [k for k in value if k in _OPERATION_KEYS]
        return keys[0] if len(keys) == 1 else None
    if isinstance(value, str) and value in _OPERATION_KEYS:
        return value
    kind = type(value)
    kept = _KEY_OF_CLASS.get(kind)
    if kept is not None and kept in getattr(value, "__dict__", ()):
        return kept
    for key in _OPERATION_KEYS:
        if hasattr(value, key) and isinstance(value, BaseModel):
            if kind in _OPERATION_CLASSES and key in value.__dict__:
                _KEY_OF_CLASS[kind] = key
            return key
    return None


#: The operation models (each forbids extra fields: :func:`_operation_key` keeps their keys).
_OPERATION_CLASSES: frozenset[type[BaseModel]] = frozenset(
    {
        PromptOp,
        CommandOp,
        CompactOp,
        AbortOp,
        ClearQueueOp,
        ReloadOp,
        RestartOp,
        CrashOp,
        SetModelOp,
        SetAutoCompactionOp,
        SetAutoRetryOp,
        SetSteeringModeOp,
        SetFollowUpModeOp,
        SetSessionNameOp,
        CycleModelOp,
        SetThinkingLevelOp,
        CycleThinkingLevelOp,
        NewSessionOp,
        EditFileOp,
        ForkOp,
        CloneOp,
        SwitchSessionOp,
        TreeOp,
        BashOp,
    }
)
assert all(cls.model_config.get("extra") == "forbid" for cls in _OPERATION_CLASSES)

Operation = Annotated[
    Annotated[PromptOp, Tag("prompt")]
    | Annotated[CommandOp, Tag("command")]
    | Annotated[CompactOp, Tag("compact")]
    | Annotated[AbortOp, Tag("abort")]
    | Annotated[ClearQueueOp, Tag("clear_queue")]
    | Annotated[ReloadOp, Tag("reload")]
    | Annotated[RestartOp, Tag("restart")]
    | Annotated[CrashOp, Tag("crash")]
    | Annotated[SetModelOp, Tag("set_model")]
    | Annotated[SetAutoCompactionOp, Tag("set_auto_compaction")]
    | Annotated[SetAutoRetryOp, Tag("set_auto_retry")]
    | Annotated[SetSteeringModeOp, Tag("set_steering_mode")]
    | Annotated[SetFollowUpModeOp, Tag("set_follow_up_mode")]
    | Annotated[SetSessionNameOp, Tag("set_session_name")]
    | Annotated[CycleModelOp, Tag("cycle_model")]
    | Annotated[SetThinkingLevelOp, Tag("set_thinking_level")]
    | Annotated[CycleThinkingLevelOp, Tag("cycle_thinking_level")]
    | Annotated[NewSessionOp, Tag("new_session")]
    | Annotated[EditFileOp, Tag("edit_file")]
    | Annotated[ForkOp, Tag("fork")]
    | Annotated[CloneOp, Tag("clone")]
    | Annotated[SwitchSessionOp, Tag("switch_session")]
    | Annotated[TreeOp, Tag("tree")]
    | Annotated[BashOp, Tag("bash")],
    Discriminator(
        _operation_key,
        custom_error_type="operation",
        custom_error_message="an operation is a mapping with exactly one of: " + ", ".join(_OPERATION_KEYS),
    ),
]


def operation_name(op: Operation) -> str:
    """The key that names ``op`` in a scenario (``prompt``, ``compact``, ...)."""
    key = _operation_key(op)
    if key is None:
        raise ValueError(f"not an operation: {op!r}")
    return key


def normalise_operation_input(value: Any) -> Any:
    """Accept the bare-word forms ``- abort`` / ``- reload`` in YAML."""
    if isinstance(value, str) and value in (
        "abort",
        "clear_queue",
        "reload",
        "restart",
        "crash",
        "compact",
        "new_session",
        "fork",
        "clone",
        "switch_session",
        "cycle_model",
        "cycle_thinking_level",
        "tree",
    ):
        return {value: None}
    return value


def _bare_words(value: Any) -> Any:
    if isinstance(value, list):
        return [normalise_operation_input(v) for v in value]
    return value


#: A list of operations, in which a bare word (``- abort``) stands for an operation without a value.
Operations = Annotated[tuple[Operation, ...], BeforeValidator(_bare_words)]


def pick_fork_message(messages: list[dict[str, str]], position: int) -> str | None:
    """The entry ID of the ``position``-th message of RPC ``get_fork_messages`` (1-based,
    negative from the end), or None when there is no such message."""
    index = position - 1 if position > 0 else len(messages) + position
    if not 0 <= index < len(messages):
        return None
    return str(messages[index]["entryId"])


def no_fork_message(messages: list[dict[str, str]], position: int) -> str:
    return f"fork: no user message {position} to fork before ({len(messages)} offered)"


#: The outcome's error of a ``switch_session`` with no previous session in the process (both targets).
NO_PREVIOUS_SESSION = "switch_session: no previous session in this process"


def no_such_session_message(wanted: int, sessions: int) -> str:
    """The outcome's error of ``switch_session: {to: N}`` when the run has had fewer than N
    session files (both targets; nothing is sent to Pi)."""
    return f"switch_session: no session {wanted}; the run has had {sessions} session file(s)"


def switch_session_target(
    to: Literal["previous"] | int, previous: str | None, run_files: list[str]
) -> tuple[str | None, str | None]:
    """The session file ``switch_session`` resumes, and None; or None and the outcome's error.
    ``previous``: the last ``previousSessionFile`` of the process; ``run_files``: the run's session
    files in order (each target keeps both its own way)."""
    if to == "previous":
        return (previous, None) if previous is not None else (None, NO_PREVIOUS_SESSION)
    if to > len(run_files):
        return None, no_such_session_message(to, len(run_files))
    return run_files[to - 1], None


def no_tree_message(messages: list[dict[str, str]], position: int) -> str:
    return f"tree: no user message {position} to navigate to ({len(messages)} offered)"


#: The command that navigates the tree (the real-Pi observer's; the simulator's host has the same).
TREE_COMMAND = "harness-tree"


# ``DialogAnswer.during`` names ``Operations``, defined after the operations that hold answers.
DialogAnswer.model_rebuild()
CommandSpec.model_rebuild()
CommandOp.model_rebuild()
