"""The report's optional libraries (the ``report`` extra), checked before any work starts.

The suite and the command line run without them; only ``--html`` needs them, and a command
given ``--html`` without them must say so before it runs a single scenario (exit status 2),
not after a 20-minute run. The check imports each library (a partial install fails here
too, not in the middle of rendering).
"""

from __future__ import annotations

import importlib

from pi_continuity_harness.errors import ReportError

__all__ = ["INSTALL_HINT", "REQUIRED", "missing_dependencies", "require_dependencies"]

#: (import name, distribution name) of every library the report needs.
REQUIRED: tuple[tuple[str, str], ...] = (
    ("jinja2", "jinja2"),
    ("markdown_it", "markdown-it-py"),
)
INSTALL_HINT = "python -m pip install 'pi-continuity-harness[report]'"


def missing_dependencies() -> list[str]:
    """The distribution names of the report's libraries that do not import here."""
    missing: list[str] = []
    for module, distribution in REQUIRED:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    return missing


def require_dependencies() -> None:
    """Raise :class:`ReportError` naming what is missing and how to install it."""
    missing = missing_dependencies()
    if missing:
        raise ReportError(
            f"the HTML report needs the 'report' extra ({', '.join(missing)} not installed): {INSTALL_HINT}"
        )
