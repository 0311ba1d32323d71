"""Faults as data, each off by default (``fs_monitor`` injects the filesystem ones).

Faults of the model (errors, malformed or empty output, aborts) are scripted replies (see
``model_script``). This module holds the rest:

``fs``
    A filesystem fault on an extension's own file operation, matched by operation and
    path glob: fail it with an ``OSError`` (``error``), kill the process just before it
    (``crash``), corrupt the file just before it is read (``corrupt``: the re-read
    sees half the bytes), or raise an exception that is no ``OSError`` (``unexpected``: a
    ``RuntimeError``, an internal error the implementation did not anticipate; spec §3/§5
    ask that even such an error inside ``session_before_compact`` cancels, never reaches Pi).
    Injected through Python audit hooks, so any Python implementation is covered without
    being written for the harness.
``crash``
    Kill the process right after a matching trace record ("between any two effects").
``inject``
    Run operations (typically ``abort``) right after a matching trace record ("abort at any
    awaited point").

Paths in globs use ``$PROJECT``, ``$AGENT`` and ``$SESSIONS`` for the run's directories;
``*`` matches across ``/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pi_continuity_harness.scenario.confine import check_scenario_glob
from pi_continuity_harness.scenario.numbers import Int
from pi_continuity_harness.scenario.operations import Operations
from pi_continuity_harness.scenario.trace import TraceMatch

__all__ = [
    "CrashRule",
    "FaultPlan",
    "FsFault",
    "FsOp",
    "InjectRule",
    "TamperRule",
]

FsOp = Literal["read", "write", "replace", "mkdir", "remove", "any"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FsFault(_Strict):
    op: FsOp = "any"
    path: str = Field(description="Glob over the path, e.g. '$PROJECT/.pi/session-continuity/*/pending/*'")
    occurrence: Int = Field(default=1, ge=1, description="First matching operation that fails (1-based)")
    times: Int = Field(default=1, ge=0, description="How many consecutive matches fail; 0 = every one after")
    effect: Literal["error", "crash", "corrupt", "unexpected"] = "error"
    errno_name: Literal["EIO", "ENOSPC", "EACCES", "EROFS", "ENOTDIR"] = Field(default="EIO", alias="errno")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        check_scenario_glob(value)
        return value

    @model_validator(mode="after")
    def _corrupts_a_read(self) -> FsFault:
        """``corrupt`` halves the file right before it is *read*: before a write, a rename, a
        removal or a directory creation the operation then replaces or removes the file anyway (and
        a file not there yet is left alone), so such a fault was traced as fired and changed
        nothing."""
        if self.effect == "corrupt" and self.op not in ("read", "any"):
            raise ValueError(
                f"effect corrupt halves a file right before it is read: op {self.op} would change "
                "nothing (give op: read, or any)"
            )
        return self


class CrashRule(_Strict):
    after: TraceMatch


class InjectRule(_Strict):
    after: TraceMatch
    operations: Operations


class TamperRule(_Strict):
    """Change files on disk right after a matching trace record, before anything else runs.

    ``append`` adds a line (a valid-looking change the bytes check must catch), ``truncate``
    keeps half the file, ``edit`` changes the case of the file's last ASCII letter: the same
    length and still valid text, so only a comparison of the bytes themselves sees it (a check
    of the size alone does not, P70c). Synchronous, so no handler can read the file in between.
    """

    after: TraceMatch
    path: str = Field(description="Glob over the files to change, e.g. '$PROJECT/*/pending/*.md'")
    action: Literal["append", "truncate", "edit"] = "append"

    @field_validator("path")
    @classmethod
    def _confined(cls, value: str) -> str:
        check_scenario_glob(value)
        return value


class FaultPlan(_Strict):
    fs: tuple[FsFault, ...] = ()
    crash: tuple[CrashRule, ...] = ()
    inject: tuple[InjectRule, ...] = ()
    tamper: tuple[TamperRule, ...] = ()
