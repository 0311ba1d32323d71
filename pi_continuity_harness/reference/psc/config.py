"""Project-local extension config (spec §6) and where it lives.

The config only covers artifact and synthesis behaviour. Trigger and retention are Pi's
native ``compaction`` settings; the v0.1 percentage fields are rejected by name so a stale
config fails loudly instead of being silently ignored (a silently ignored trigger would
look like a working one).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.reference.psc.constants import (
    DEFAULT_ARTIFACT_DIRECTORY,
    EXTENSION_CONFIG_FILE_NAME,
    PROJECT_SETTINGS_FILE_NAME,
)

__all__ = [
    "REMOVED_FIELDS",
    "SYNTHESIS_EFFORTS",
    "ConfigError",
    "ConfigLoad",
    "ConfigSource",
    "ExtensionConfig",
    "FieldProblem",
    "SynthesisEffort",
    "config_dir",
    "extension_config_path",
    "load_extension_config",
    "parse_json_object",
    "project_settings_path",
    "project_settings_problem",
    "resolve_artifact_directory",
    "validate_extension_config",
]

SynthesisEffort = Literal["inherit", "minimal", "low", "medium", "high", "xhigh"]
SYNTHESIS_EFFORTS: tuple[str, ...] = ("inherit", "minimal", "low", "medium", "high", "xhigh")

#: Fields that existed in the v0.1 extension-owned threshold lifecycle (or that belong to
#: Pi's native settings), with the reason each is refused here.
REMOVED_FIELDS: dict[str, str] = {
    "triggerPercent": "automatic percentage fields were removed in v0.2.0",
    "keepRecentPercent": "automatic percentage fields were removed in v0.2.0",
    "thresholdPercent": "automatic percentage fields were removed in v0.2.0",
    "triggerTokens": "the trigger is Pi's native compaction.reserveTokens",
    "reserveTokens": "native compaction settings belong in Pi's project settings, not here",
    "keepRecentTokens": "native compaction settings belong in Pi's project settings, not here",
    "compaction": "native compaction settings belong in Pi's project settings, not here",
}


def config_dir(cwd: str) -> str:
    """``<cwd>/<CONFIG_DIR_NAME>``; the name comes from the host, never spelled here."""
    return os.path.join(os.path.abspath(cwd), CONFIG_DIR_NAME)


def extension_config_path(cwd: str) -> str:
    """``<cwd>/<CONFIG_DIR_NAME>/session-continuity.json``."""
    if os.path.isabs(cwd):
        return _in_config_dir(config_dir, cwd, EXTENSION_CONFIG_FILE_NAME)
    return os.path.join(config_dir(cwd), EXTENSION_CONFIG_FILE_NAME)


def project_settings_path(cwd: str) -> str:
    """``<cwd>/<CONFIG_DIR_NAME>/settings.json``: Pi's project-native settings."""
    if os.path.isabs(cwd):
        return _in_config_dir(config_dir, cwd, PROJECT_SETTINGS_FILE_NAME)
    return os.path.join(config_dir(cwd), PROJECT_SETTINGS_FILE_NAME)


@functools.lru_cache(maxsize=64)
def _in_config_dir(directory_of: Callable[[str], str], cwd: str, name: str) -> str:
    """``<cwd>/<CONFIG_DIR_NAME>/<name>`` of an absolute ``cwd``: a function of its arguments
    alone (no current directory), so one made before is the same. The paths are asked for at
    every event the extension handles, of the one project it runs in (issue 16). Everything a
    mutant may replace is part of the key: the file's name (mutants replace the two constants)
    and ``directory_of``, the module's :func:`config_dir` as it is at the call
    (``hardcoded_dot_pi`` replaces it; a key without it kept the real directory for the mutant
    in a process that had run the reference before)."""
    return os.path.join(directory_of(cwd), name)


def project_settings_problem(cwd: str) -> str | None:
    """Why Pi cannot use the project settings file, or None (absent, or a JSON object).

    Pi drops a project ``settings.json`` it cannot parse and silently runs on its defaults
    (settings-manager.js), so the extension must say so itself: the file and the parse error
    (spec §6: invalid native settings fail loudly and report the path). Parsed as JavaScript's
    ``JSON.parse`` would: duplicate keys are fine (the last wins), NaN and Infinity are not.
    """
    path = project_settings_path(cwd)
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path} cannot be read: {exc}"
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return f"{path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
    except ValueError as exc:
        return f"{path} is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return f"{path} is not valid JSON settings (the top-level value must be an object)"
    return None


def resolve_artifact_directory(cwd: str, artifact_directory: str) -> str:
    """Absolute artifact directory: as given when absolute, else under the config dir.

    Resolved once, so every "saved to" message and status line names the same path.
    """
    if os.path.isabs(artifact_directory):
        return os.path.normpath(artifact_directory)
    if os.path.isabs(cwd):
        return _artifact_directory_below(config_dir, cwd, artifact_directory)
    return os.path.normpath(os.path.join(config_dir(cwd), artifact_directory))


@functools.lru_cache(maxsize=64)
def _artifact_directory_below(directory_of: Callable[[str], str], cwd: str, artifact_directory: str) -> str:
    """:func:`resolve_artifact_directory` of an absolute ``cwd`` and a relative directory: a
    function of its arguments alone (no current directory), asked again for every artifact
    path of every event (``ExtensionState.artifact_dir``, issue 16). ``directory_of`` is the
    module's :func:`config_dir` as it is at the call (see :func:`_in_config_dir`)."""
    return os.path.normpath(os.path.join(directory_of(cwd), artifact_directory))


class ExtensionConfig(BaseModel):
    """The public config. Unknown keys are errors: a typo must not look like a setting."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    enabled: bool = True
    synthesis_model: str = "inherit"
    synthesis_effort: SynthesisEffort = "medium"
    artifact_directory: str = DEFAULT_ARTIFACT_DIRECTORY

    @field_validator("synthesis_model")
    @classmethod
    def _model_id(cls, value: str) -> str:
        if value == "inherit":
            return value
        provider, sep, model = value.partition("/")
        if not sep or not provider or not model or any(ch.isspace() for ch in value):
            raise ValueError('must be "inherit" or a Pi model id "provider/model"')
        return value

    @field_validator("artifact_directory")
    @classmethod
    def _directory(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty path")
        if "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value

    @property
    def synthesis_model_ref(self) -> tuple[str, str] | None:
        """``(provider, model_id)`` of a pinned synthesis model, None for "inherit"."""
        if self.synthesis_model == "inherit":
            return None
        provider, _, model = self.synthesis_model.partition("/")
        return provider, model


@dataclass(frozen=True)
class FieldProblem:
    """One invalid field (None for whole-file problems such as invalid JSON)."""

    field: str | None
    reason: str

    def describe(self) -> str:
        return f"{self.field}: {self.reason}" if self.field else self.reason


@dataclass(frozen=True)
class ConfigError:
    """Why a config file was refused. Always names the file, as spec §6/§11 require."""

    path: str
    problems: tuple[FieldProblem, ...]

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(p.field for p in self.problems if p.field)

    def describe(self) -> str:
        return f"{self.path}: " + "; ".join(p.describe() for p in self.problems)


ConfigSource = Literal["file", "missing-defaults", "untrusted-not-read", "invalid"]


@dataclass(frozen=True)
class ConfigLoad:
    """Result of :func:`load_extension_config`.

    ``config`` always holds usable values (defaults unless the file was read and valid) so
    status can still render; ``error`` set means automatic behaviour must be disabled.
    """

    path: str
    source: ConfigSource
    config: ExtensionConfig
    error: ConfigError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKeyError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Strict JSON object parse: ``(object, None)`` or ``(None, reason)``.

    Duplicate keys, NaN/Infinity and out-of-range numbers are refused because they cannot
    be written back faithfully (and JavaScript's JSON.parse would read them differently).
    """
    try:
        data = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return None, f"invalid JSON: {exc}"
    if not isinstance(data, dict):
        return None, f"the top-level value must be a JSON object, not {type(data).__name__}"
    return data, None


def _pydantic_problems(exc: ValidationError) -> list[FieldProblem]:
    problems: list[FieldProblem] = []
    for err in exc.errors():
        loc = err.get("loc", ())
        field = str(loc[0]) if loc else None
        if err["type"] == "extra_forbidden" and field is not None:
            reason = REMOVED_FIELDS.get(field)
            if reason is not None:
                problems.append(
                    FieldProblem(
                        field,
                        f"unsupported field ({reason}); run /continuity settings to write native "
                        "reserveTokens/keepRecentTokens instead",
                    )
                )
            else:
                problems.append(FieldProblem(field, "unknown field"))
            continue
        message = str(err.get("msg", "invalid value"))
        message = message.removeprefix("Value error, ")
        problems.append(FieldProblem(field, f"{message} (got {json.dumps(err.get('input'))})"))
    return problems


def validate_extension_config(data: dict[str, Any], path: str) -> ExtensionConfig | ConfigError:
    """Validate an already-parsed config object."""
    try:
        return ExtensionConfig.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        return ConfigError(path, tuple(_pydantic_problems(exc)))


def load_extension_config(cwd: str, *, trusted: bool) -> ConfigLoad:
    """Read ``<cwd>/<CONFIG_DIR_NAME>/session-continuity.json``.

    An untrusted project's files are not opened at all (spec §6), so a hostile repository
    cannot steer where artifacts are written or which model receives the transcript.
    """
    path = extension_config_path(cwd)
    defaults = ExtensionConfig()
    if not trusted:
        return ConfigLoad(path, "untrusted-not-read", defaults)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return ConfigLoad(path, "missing-defaults", defaults)
    except OSError as exc:
        reason = f"cannot be read: {exc.strerror or exc}"
        return ConfigLoad(path, "invalid", defaults, ConfigError(path, (FieldProblem(None, reason),)))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"is not valid UTF-8 ({exc.reason} at byte {exc.start})"
        return ConfigLoad(path, "invalid", defaults, ConfigError(path, (FieldProblem(None, reason),)))
    data, problem = parse_json_object(text)
    if data is None:
        assert problem is not None
        return ConfigLoad(path, "invalid", defaults, ConfigError(path, (FieldProblem(None, problem),)))
    result = validate_extension_config(data, path)
    if isinstance(result, ConfigError):
        return ConfigLoad(path, "invalid", defaults, result)
    return ConfigLoad(path, "file", result)
