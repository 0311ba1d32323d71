"""``--html PATH``, shared by the commands that write an HTML report.

The option is checked before any work starts: a directory in place of the file, or the
``report`` extra not installed, is a usage error (exit status 2) before a scenario runs. The
page is written after the command's own output, whatever its verdict.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._paths import check_creatable
from pi_continuity_harness.errors import ReportError
from pi_continuity_harness.scenario.atomic_write import write_atomically

__all__ = ["add_html_option", "check_html", "write_html_report"]


def add_html_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--html",
        type=Path,
        metavar="PATH",
        help=f"write {what} as one self-contained HTML page here (needs the 'report' extra)",
    )


def check_html(path: Path | None) -> None:
    """Refuse ``--html`` now, before any work, when the page could not be written later."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"--html {path}: is a directory")
    if any(parent.exists() and not parent.is_dir() for parent in path.parents):
        raise UsageError(f"--html {path}: a parent of it is not a directory")
    # A place the process cannot write: before, found when the page was written, after the run.
    check_creatable("--html", path)
    from pi_continuity_harness.report import require_dependencies  # noqa: PLC0415  (only with --html)

    try:
        require_dependencies()
    except ReportError as error:
        raise UsageError(f"--html: {error}") from None


def write_html_report(path: Path, render: Callable[[], str], say: Callable[[str], None] = print) -> None:
    """Render the page, write it to ``path`` whole or not at all and say where, how big and how
    long it took."""
    from pi_continuity_harness.report import page_directory  # noqa: PLC0415  (only with --html)

    started = time.perf_counter()
    try:
        with page_directory(path.parent):
            html = render()
    except ReportError as error:
        raise UsageError(f"--html {path}: {error}") from None
    try:
        # Encoded first, renamed into place: a page that cannot be encoded or written leaves
        # no truncated or empty file (``Path.write_text`` left a 0-byte page), an older page as
        # it was.
        data = html.encode("utf-8")
        write_atomically(path, data)
    except OSError as error:
        raise UsageError(f"--html {path}: {error.strerror or error}") from None
    except UnicodeEncodeError as error:  # a lone surrogate the run's data brought in
        raise UsageError(
            f"--html {path}: the page has text UTF-8 cannot encode ({error.reason} at character"
            f" {error.start + 1}); nothing written"
        ) from None
    say(f"HTML report written to {path} ({len(data):,} bytes in {time.perf_counter() - started:.1f}s)")
