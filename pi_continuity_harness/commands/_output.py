"""Terminal output and options shared by the suite commands (``run``, ``compare``, ``matrix``)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from pi_continuity_harness import PI_VERSION
from pi_continuity_harness.commands import UsageError
from pi_continuity_harness.commands._console import terminal_console
from pi_continuity_harness.features.suite import ScenarioResult

__all__ = ["STATUS_STYLE", "console", "pi_version_option", "progress_printer", "shorten"]

STATUS_STYLE = {"passed": "green", "failed": "bold red", "error": "bold red", "skipped": "yellow"}


def pi_version_option(value: str | None, target: str) -> str | None:
    """``--pi-version``: None when not given, else the checked release; an unsupported one, or the
    option without ``--target pi``, is a :class:`UsageError` naming it and the supported ones."""
    if value is None:
        return None
    if target != "pi":
        raise UsageError(
            f"--pi-version {value}: only with --target pi (the simulator models Pi {PI_VERSION})"
        )
    from pi_continuity_harness.targets.realpi.install import (  # noqa: PLC0415  (real Pi's modules load only when needed)
        UnsupportedPiVersionError,
        check_pi_version,
    )

    try:
        return check_pi_version(value)
    except UnsupportedPiVersionError as error:
        raise UsageError(f"--pi-version: {error}") from None


def console() -> Console:
    """A console 150 columns wide when not on a terminal: CI logs are not terminals, and rich
    would squeeze the result tables into 80 columns there."""
    return terminal_console(150)


def progress_printer(
    out: Console, *, quiet: bool, prefix: str = ""
) -> Callable[[ScenarioResult, int, int], None]:
    """One line per finished scenario: ``[ 3/57] PASSED  assertion :: scenario (0.12s)``."""

    def progress(result: ScenarioResult, index: int, total: int) -> None:
        if quiet:
            return
        style = STATUS_STYLE.get(result.status, "")
        out.print(
            f"{prefix}[{index:>3}/{total}] [{style}]{result.status.upper():7}[/] "
            f"{escape(result.assertion)} :: {escape(result.name)} ({result.duration_s:.2f}s)"
        )
        if result.status in ("failed", "error") and result.machine:
            out.print(
                f"{prefix}          machine kept in {result.machine}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    return progress


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"
