"""Scenario files: everything a run needs, as YAML validated by pydantic.

A scenario holds the models and their windows, global and project settings, trust, files
to place in the project, the extensions (the implementation under test, and competitors,
in load order), the model script, faults, operations and the seed. It names no
implementation: that is chosen when the scenario runs, so one file checks any
implementation. The JSON Schema is published at ``docs/schema/scenario.schema.json``.

A malformed file is refused with the file, the field and the reason::

    bad.yaml: operations[2].prompt.chars: Input should be greater than or equal to 1
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME, Model
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.budget import Budget
from pi_continuity_harness.scenario.competitors import CompetitorBehaviour
from pi_continuity_harness.scenario.confine import check_scenario_path
from pi_continuity_harness.scenario.faults import FaultPlan
from pi_continuity_harness.scenario.field_path import field_path
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
from pi_continuity_harness.scenario.model_script import ModelScript
from pi_continuity_harness.scenario.numbers import Int
from pi_continuity_harness.scenario.operations import (
    _OPERATION_KEYS,
    CommandOp,
    Operations,
    SetModelOp,
    TreeOp,
)
from pi_continuity_harness.scenario.session_id import check_session_id
from pi_continuity_harness.scenario.tool_confinement import tool_calls_outside
from pi_continuity_harness.scenario.yaml_text import expansion_problem, json_data_problem, safe_load

__all__ = [
    "MAX_SCENARIO_BYTES",
    "ExtensionRef",
    "FileSpec",
    "ModelSpec",
    "Scenario",
    "ScenarioError",
    "SettingsSpec",
    "dump_scenario",
    "format_validation_error",
    "load_scenario",
    "parse_scenario",
    "read_text_file",
    "scenario_json_schema",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelSpec(_Strict):
    id: str = Field(description="provider/id", pattern=r"^[A-Za-z0-9._-]+/[A-Za-z0-9._:-]+$")
    context_window: Int = Field(gt=0)
    max_tokens: Int = Field(default=16384, gt=0)
    reasoning: bool = False
    auth: bool = Field(default=True, description="False: the provider has no API key configured")
    images: bool = Field(
        default=False,
        description='the model takes images (models.json input ["text", "image"]); false: ["text"]',
    )

    @property
    def input(self) -> tuple[str, ...]:
        """pi-ai ``Model.input``: what ``downgradeUnsupportedImages`` reads
        (``@earendil-works/pi-ai`` ``dist/api/transform-messages.js:37-40``)."""
        return ("text", "image") if self.images else ("text",)

    def to_model(self) -> Model:
        provider, _, model_id = self.id.partition("/")
        return Model(
            provider=provider,
            id=model_id,
            context_window=self.context_window,
            max_tokens=self.max_tokens,
            name=model_id,
            reasoning=self.reasoning,
            input=self.input,
        )


class SettingsSpec(_Strict):
    global_: dict[str, Any] = Field(
        default_factory=dict, alias="global", description="<agentDir>/settings.json"
    )
    project: dict[str, Any] | None = Field(
        default=None, description="<project>/<CONFIG_DIR_NAME>/settings.json; omitted: no file"
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FileSpec(JsonGiven, _Strict):
    """A file placed before the run: ``text``, ``json`` or ``base64`` content, or a ``directory``.

    ``base64`` plants exact bytes, a file that need not be UTF-8 (``text`` is written as
    UTF-8), checked and decoded as ``edit_file``'s is (``scenario/file_content.py``: strictly,
    and not with another content field). Why: a file that does not decode could be planted only
    by an ``edit_file`` once the run had begun, not before Pi starts (an unreadable recovery or
    config file an extension must meet at startup)."""

    text: str | None = None
    json_value: Any = Field(default=None, alias="json", description=JSON_DESCRIPTION)
    directory: bool = False
    base64_value: str | None = Field(
        default=None,
        alias="base64",
        description=BASE64_DESCRIPTION,
        json_schema_extra={"contentEncoding": "base64"},
    )

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("json_value", mode="before")
    @classmethod
    def _null_is_content(cls, value: Any) -> Any:
        """``json: null`` given is a file holding the JSON ``null``
        (:data:`~.file_content.GIVEN_NULL` until every field is valid): before, it counted as
        no content and the file was refused (a file has exactly one of ...)."""
        return mark_given_null(value)

    @field_validator("json_value")
    @classmethod
    def _one_content(cls, value: Any, info: ValidationInfo) -> Any:
        """``text`` and ``json`` both give the file's content: refused naming ``json``, as
        ``edit_file``'s are (before, the error named no field: ``files.<path>: a file has
        exactly one of: ...``)."""
        if value is not None:
            refuse_second_content("json", info.data, {"text": "text"})
        return value

    @field_validator("directory")
    @classmethod
    def _no_content_for_a_directory(cls, value: bool, info: ValidationInfo) -> bool:
        """A directory has no content: ``directory: true`` beside ``text`` or ``json`` is
        refused naming ``directory`` (``base64`` names itself, being validated after it)."""
        if not value or content_refused(info.data, ("text", "json_value")):
            return value
        given = [
            name for name, key in (("text", "text"), ("json", "json_value")) if info.data.get(key) is not None
        ]
        if given:
            raise ValueError(
                f"directory: true and {given[0]} both given: a directory has no content, give one"
            )
        return value

    @field_validator("base64_value")
    @classmethod
    def _exact_bytes(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or content_refused(info.data, ("text", "json_value", "directory")):
            return value  # an earlier field was refused: one mistake, one line
        refuse_second_content("base64", info.data, {"text": "text", "json": "json_value"})
        if info.data.get("directory"):
            raise ValueError("base64 is a file's content, not for directory: true")
        return check_base64(value)

    @property
    def content_bytes(self) -> bytes | None:
        """The exact bytes ``base64`` gives (None: the file gives none)."""
        return decode_base64(self.base64_value)

    @model_validator(mode="after")
    def _one(self) -> FileSpec:
        settle_given_null(self)  # a given json: null is None again, and json_given says it was
        given = sum(
            x
            for x in (
                self.text is not None,
                self.json_given,
                self.base64_value is not None,
                self.directory,
            )
        )
        if given != 1:  # two are refused above, naming the field: this is none
            raise ValueError("a file has exactly one of: text, json, base64, directory: true")
        return self


class ExtensionRef(_Strict):
    """One extension in load order: the implementation under test, a competitor, or a module."""

    implementation: bool | None = None
    competitor: CompetitorBehaviour | None = None
    module: str | None = Field(default=None, description="module:factory of another Python extension")

    @model_validator(mode="after")
    def _one(self) -> ExtensionRef:
        given = [
            k for k in ("implementation", "competitor", "module") if getattr(self, k) not in (None, False)
        ]
        if len(given) != 1:
            raise ValueError(
                "an extension entry has exactly one of: implementation: true, competitor, module"
            )
        return self


class Scenario(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    description: str = ""
    seed: Int = Field(default=0, ge=0, description="seed of the run (default 0); --seed overrides it")
    mode: Literal["rpc", "tui", "json", "print"] = "rpc"
    models: tuple[ModelSpec, ...] = Field(
        default=(ModelSpec(id="fake/fake-model", context_window=200_000, max_tokens=16384),),
        description="the fake provider's models (at least one); the first is the default",
    )
    active_model: str | None = Field(default=None, description="provider/id; default: the first model")
    thinking_level: Literal["off", "minimal", "low", "medium", "high", "xhigh"] = "off"
    session_id: str | None = Field(
        default=None,
        description=(
            "The first session's id (Pi's --session-id); any id Pi 1.6 accepts. Default: a seeded uuidv7"
        ),
    )
    trust: Literal["always", "ask", "never"] = Field(
        default="always", description="defaultProjectTrust in the agent settings (ask: Pi's default)"
    )
    approve: bool | None = Field(default=None, description="--approve (true) / --no-approve (false)")
    saved_trust: bool | None = Field(
        default=None,
        description="a trust decision saved for the project directory in <agentDir>/trust.json, as Pi "
        "writes it when the user answers its trust prompt (null: none)",
    )
    session: Literal["file", "memory"] = Field(
        default="file",
        description="memory: --no-session (SessionManager.inMemory: no session file, new sessions in memory too)",
    )
    settings: SettingsSpec = SettingsSpec()
    files: dict[str, FileSpec] = Field(
        default_factory=dict,
        description="path (project-relative, or under $PROJECT/, $AGENT/, $SESSIONS/) -> content",
    )
    extensions: tuple[ExtensionRef, ...] = (ExtensionRef(implementation=True),)
    model: ModelScript = ModelScript()
    faults: FaultPlan = FaultPlan()
    budget: Budget = Field(
        default=Budget(), description="how much the run may do before it is stopped as a runaway"
    )
    operations: Operations = ()

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        if not self.models:
            # Checked here, not with ``min_length``: a list whose only model is invalid would get
            # a second error line for the same mistake.
            raise ValueError("models: at least one model is needed (the first is the default)")
        ids = [m.id for m in self.models]
        if len(set(ids)) != len(ids):
            raise ValueError("models: duplicate model id")
        if self.active_model is not None and self.active_model not in ids:
            raise ValueError(f"active_model: {self.active_model!r} is not one of the models {ids}")
        # By type, not ``getattr(op, "set_model", None)``: the operation models forbid extra
        # fields, so only a SetModelOp (CommandOp, TreeOp) has the attribute, and a pydantic model
        # answers a missing one through its ``__getattr__`` raising AttributeError, about 10 us a
        # miss: 2 ms of every explored case's scenario (issue 16).
        for where, op in self._nested_operations():
            if isinstance(op, SetModelOp) and op.set_model not in ids:
                raise ValueError(f"{where}.set_model: {op.set_model!r} is not one of the models {ids}")
        for index, op in enumerate(self.operations):
            if isinstance(op, CommandOp) and not op.command.wait:
                raise ValueError(
                    f"operations[{index}].command.wait: false is for a command run while a reply is held"
                    " (a reply's or a dialog answer's during, or faults.inject); at the top level the next"
                    " operation waits for the host to be quiet"
                )
            if isinstance(op, TreeOp) and not op.tree.wait:
                raise ValueError(
                    f"operations[{index}].tree.wait: false is for a navigation sent while a reply is held"
                    " (a reply's or a dialog answer's during, or faults.inject); at the top level the next"
                    " operation waits for the host to be quiet"
                )
        if sum(1 for e in self.extensions if e.implementation) > 1:
            raise ValueError("extensions: the implementation under test appears more than once")
        if self.session_id is not None:
            try:
                check_session_id(self.session_id)
            except ValueError as error:
                raise ValueError(f"session_id: {error}") from None
        for path in self.files:
            try:
                check_scenario_path(path)
            except ValueError as error:
                raise ValueError(f"files: {error}") from None
        problem = _files_conflict(self.files)
        if problem is not None:
            raise ValueError(f"files: {problem}")
        return self

    def _nested_operations(self) -> list[tuple[str, Any]]:
        """Every operation with its field path: the top-level ones, those a scripted reply runs
        while it is held (``during``), those a fault rule injects and those a dialog answer runs
        while its dialog is open. A ``set_model`` to a model the
        scenario does not declare was refused only at the top level: in a ``during`` or
        ``faults.inject`` it loaded, and the run went on with that operation failing ``Model not
        found`` in the trace alone."""
        # A reply without ``during`` adds nothing: its field path is not made (an explored case
        # pads its script with hundreds of replies).
        found: list[tuple[str, Any]] = [(f"operations[{i}]", op) for i, op in enumerate(self.operations)]
        replies: list[tuple[str, Any]] = [("model.default_agent", self.model.default_agent)]
        for kind in ("agent", "summary", "extension"):
            replies += [
                (f"model.{kind}[{i}]", reply)
                for i, reply in enumerate(getattr(self.model, kind))
                if reply.during
            ]
        for where, reply in replies:
            found += [(f"{where}.during[{i}]", op) for i, op in enumerate(reply.during)]
        for index, rule in enumerate(self.faults.inject):
            found += [(f"faults.inject[{index}].operations[{i}]", op) for i, op in enumerate(rule.operations)]
        # Those a dialog answer runs while its dialog is open (``answers[j].during``), at any depth.
        position = 0
        while position < len(found):
            where, op = found[position]
            for j, answer in enumerate(op.command.answers if isinstance(op, CommandOp) else ()):
                found += [
                    (f"{where}.command.answers[{j}].during[{i}]", inner)
                    for i, inner in enumerate(answer.during)
                ]
            position += 1
        return found

    @property
    def active(self) -> ModelSpec:
        if self.active_model is None:
            return self.models[0]
        return next(m for m in self.models if m.id == self.active_model)


#: Files the harness itself writes into a machine before Pi starts, on either target
#: (``workspace.prepare_files``; real Pi's ``agent/models.json``, ``targets/realpi/environment.py``):
#: a scenario may replace one with text, JSON or bytes of its own, but not make it a directory or put
#: anything below it.
_HARNESS_FILES = (
    "$AGENT/settings.json",
    "$AGENT/models.json",
    "$AGENT/trust.json",
    f"$PROJECT/{CONFIG_DIR_NAME}/settings.json",
)


def _files_conflict(files: dict[str, FileSpec]) -> str | None:
    """Why ``files`` cannot all be laid out (``"<path>: <reason>"``), or None: a file with a
    path below it (``a.txt`` and ``a.txt/b``), or a directory at (or a path below) a file the
    harness writes. Found when the run laid the machine out, such a scenario ended in a
    ``FileExistsError`` traceback (issue 16's eighth pass)."""

    def placed(path: str) -> str:
        return path if path.startswith("$") else f"$PROJECT/{path}"

    plain = {placed(path): (path, spec) for path, spec in files.items()}
    for path in sorted(plain):
        written, spec = plain[path]
        for parent in _parents(path):
            found = plain.get(parent)
            if found is not None and not found[1].directory:
                return f"{written!r}: {found[0]!r} is a file of this scenario, so nothing can be below it"
            if parent in _HARNESS_FILES:
                return f"{written!r}: the harness writes {parent!r} as a file, so nothing can be below it"
        if path in _HARNESS_FILES and spec.directory:
            return f"{written!r}: the harness writes it as a file; give it text, json or base64, not directory: true"
    return None


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(2, len(parts))]


_loc = field_path


_PATH_IN_MESSAGE = re.compile(r"^([A-Za-z_][\w.\[\]]*): (.+)$", re.DOTALL)

#: A step pydantic puts into an error location to name a union member
#: (``function-after[_one(), FileSpec]``, ``list[int]``). Only these are dropped: a user's
#: key (``files: {src/function[1].py: ...}``) is part of the path.
_PYDANTIC_STEP = re.compile(r"^(?:function-[a-z]+|list|dict|tuple|set|frozenset|tagged-union|union)\[")


def _without_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """Drop the discriminator tag pydantic puts before a tagged union member's fields.

    An operation's location reads ``("operations", 2, "prompt", "prompt", "chars")``: the
    first ``prompt`` is the union tag, the second the field. The user's path is
    ``operations[2].prompt.chars``.
    """
    out: list[int | str] = []
    for index, part in enumerate(loc):
        is_tag = (
            isinstance(part, str)
            and index > 0
            and isinstance(loc[index - 1], int)
            and index + 1 < len(loc)
            and loc[index + 1] == part
        )
        if not is_tag:
            out.append(part)
    return tuple(out)


def format_validation_error(source: str, error: ValidationError) -> str:
    """One line per problem: ``<source>: <field path>: <reason>``.

    Cross-field checks of the whole scenario name their field at the start of the message
    (``operations[3].set_model: ...``); that path is used instead of ``(top level)``.
    """
    lines = []
    for item in error.errors():
        loc = tuple(p for p in item["loc"] if not (isinstance(p, str) and _PYDANTIC_STEP.match(p)))
        where = _loc(_without_tags(loc)) or "(top level)"
        message = str(item["msg"]).removeprefix("Value error, ")
        if where == "(top level)":
            match = _PATH_IN_MESSAGE.match(message)
            if match:
                where, message = match.group(1), match.group(2)
        lines.append(f"{source}: {where}: {message}")
    return "\n".join(lines)


def _refused(source: str, at: tuple[Any, ...], reason: str) -> ScenarioError:
    """The error for a value found unusable before validation (``at``: its keys and indexes)."""
    field = _loc(tuple(p if isinstance(p, int | str) else str(p) for p in at)) or "(top level)"
    return ScenarioError(f"{source}: {field}: {reason}")


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate scenario data (as a file, an imported session or a feature gives it).

    The data must be JSON data (:func:`~pi_continuity_harness.scenario.yaml_text.json_data_problem`):
    the harness writes settings and files as JSON when the run has begun, so a YAML date or set
    is refused here, naming the field, before anything is written."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: (top level): a scenario is a mapping, got {type(data).__name__}")
    problem = json_data_problem(data)
    if problem is not None:
        raise _refused(source, *problem)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(format_validation_error(source, error)) from None
    outside = [f"{source}: {_loc(where)}: {why}" for where, why in tool_calls_outside(scenario)]
    if outside:
        raise ScenarioError("\n".join(outside))
    return scenario


#: The largest scenario file read: 64 MiB. The examples are a few kilobytes, and a prompt image
#: is at most 4.5 MB of base64 (Pi's inline limit), so this holds a dozen of the largest images
#: Pi sends unchanged; a bigger file is no scenario anyone wrote or the harness made, and
#: reading it whole (then parsing it) would only use memory.
MAX_SCENARIO_BYTES = 64 * 1024 * 1024

_READ_CHUNK = 1024 * 1024


def read_text_file(
    path: str | Path, kind: str, error: type[ScenarioError] = ScenarioError, limit: int = MAX_SCENARIO_BYTES
) -> str:
    """The UTF-8 text of the ``kind`` file at ``path`` (a scenario file, a session file, a
    trace), or one ``error`` naming the file and what is wrong with it.

    ``Path.read_text`` caught only three errors (no file, a directory, not UTF-8): a loop of
    links, a path through a file, a name too long or a file not readable ended in an ``OSError``
    traceback, and ``/dev/zero`` was read until ``MemoryError``. Now any ``OSError`` is named by
    its reason; the file is opened without blocking (``O_NONBLOCK``: a FIFO with no writer does
    not hang the command) and refused unless it is a regular file (``fstat`` of what was opened,
    so nothing changes between the check and the read); and at most ``limit`` bytes are read: a
    larger file is refused, not read whole. Line ends are read as ``read_text`` reads them
    (``\\r\\n`` and ``\\r`` as ``\\n``)."""
    source = str(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{source}: no such file") from None
    except OSError as problem:
        raise error(f"{source}: cannot open it: {problem.strerror or problem}") from None
    except ValueError as problem:  # a NUL in the path
        raise error(f"{source}: cannot open it: {problem}") from None
    chunks: list[bytes] = []
    size = 0
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"{source}: is a directory, not a {kind}")
        if not stat.S_ISREG(mode):
            raise error(f"{source}: not a regular file (a device, FIFO or socket), not a {kind}")
        while size <= limit:
            chunk = os.read(descriptor, min(limit + 1 - size, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as problem:
        raise error(f"{source}: cannot read it: {problem.strerror or problem}") from None
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if len(data) > limit:
        raise error(f"{source}: larger than {limit // (1024 * 1024):,} MiB, the most a {kind} may be")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"{source}: not UTF-8 text ({problem.reason})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (YAML or JSON)."""
    source = str(path)
    text = read_text_file(path, "scenario file")
    try:
        data = safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(unknown position)"
        problem = getattr(error, "problem", None) or str(error)
        raise ScenarioError(f"{source}: {where}: invalid YAML: {problem}") from None
    except RecursionError:  # PyYAML's pure parser recurses per level (libyaml stops at 1,000)
        raise ScenarioError(f"{source}: (top level): invalid YAML: nested too deeply to read") from None
    expansion = expansion_problem(data)
    if expansion is not None:
        raise _refused(source, *expansion)
    return parse_scenario(data, source)


def _plain(value: Any) -> Any:
    """JSON-able data of a model with defaults left out, except an operation's own key.

    ``exclude_defaults`` alone would write ``- compact: {}`` (all defaults) as ``- {}``,
    which is no longer an operation; the key that names an operation is always kept.
    """
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        op_keys = [k for k in _OPERATION_KEYS if k in fields]
        out: dict[str, Any] = {}
        for name, info in fields.items():
            current = getattr(value, name)
            if (
                name not in op_keys
                and current == info.get_default(call_default_factory=True)
                and not _given_json_null(value, name)
            ):
                continue
            out[info.alias or name] = _plain(current)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _given_json_null(model: BaseModel, name: str) -> bool:
    """A file's ``json: null`` that was given: the JSON ``null``, not the default (no json),
    so the dump keeps it (``FileSpec`` and ``EditFileSpec``: ``json_given``)."""
    return name == "json_value" and bool(getattr(model, "json_given", False))


def scenario_data(value: BaseModel) -> dict[str, Any]:
    """JSON data of a part of a scenario (a reply, an operation) with its defaults left out,
    which :func:`parse_scenario` reads back to an equal part: every operation keeps the key that
    names it (``exclude_defaults`` wrote ``abort`` and ``compact: {}`` as ``{}``) and a given
    ``json: null`` stays (it dropped it, so an ``edit_file`` wrote no JSON)."""
    data = json.loads(json.dumps(_plain(value)))
    assert isinstance(data, dict)
    return data


def dump_scenario(scenario: Scenario) -> str:
    """YAML text of a scenario (defaults left out) that loads back to an equal scenario."""
    data = scenario_data(scenario)
    data = {"name": scenario.name, **{k: v for k, v in data.items() if k != "name"}}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def scenario_json_schema() -> dict[str, Any]:
    schema = Scenario.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Pi Continuity Harness scenario"
    return schema
