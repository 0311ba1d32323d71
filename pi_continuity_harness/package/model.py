"""What every step of the release gate reports: named checks with a status, a file and a field.

A check is one line of the gate's verdict (spec §16, §17, §19, §20). ``needs-a-person`` is a
check only a person can judge (that the README explains the product in one paragraph); it is
listed for a reviewer and never counted as passed. ``not-run`` says why a check did not apply
(``pi.extensions-exist`` without ``pi.extensions``) or could not run (a load check after a failed
install); it is never counted as passed either.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from pi_continuity_harness.errors import HarnessError

__all__ = ["STATUSES", "Check", "PackageError", "PackageInputError", "Status", "failed"]

Status = Literal["pass", "fail", "needs-a-person", "not-run"]
STATUSES: tuple[Status, ...] = ("pass", "fail", "needs-a-person", "not-run")


class PackageError(HarnessError):
    """The gate could not do a step for a reason of its own (npm missing, a registry that did not
    start); the message says which step."""


class PackageInputError(PackageError, ValueError):
    """The input is not a package (no ``package.json``, invalid JSON, not a tarball): one line
    naming the file, exit status 2, nothing changed."""


@dataclass(frozen=True)
class Check:
    """One named check: ``name`` (stable, e.g. ``manifest.license``), its ``status``, the
    ``file`` and the ``field`` it is about, and a ``detail`` saying what was found."""

    name: str
    status: Status
    file: str
    field: str
    detail: str = ""
    #: The gate step that decided it: static, pack, install, load, suite, remove.
    phase: str = "static"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def failed(checks: list[Check]) -> list[Check]:
    """The checks that failed (``needs-a-person`` and ``not-run`` are not failures, and not passes)."""
    return [check for check in checks if check.status == "fail"]
