"""The subcommands of ``pi-continuity-harness``, one module each.

Every module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit status). :mod:`pi_continuity_harness.cli` lists them and
imports a module only when its subcommand runs (``--version`` and ``--help`` import none of
them: they pull in the simulator, pytest, pydantic and rich), so each subcommand's one-line
summary lives here, where both the lazy ``--help`` and the module's own parser read it.

:func:`usage_errors` are the errors the command line reports as one line with exit status 2:
a bad argument or input file (:class:`UsageError`), a setup mistake found before any scenario
ran (``SetupError``), a run directory in use or unusable (``RunDirectoryError``), and pytest
refusing the suite's arguments (``SuiteUsageError``), and a package the release gate cannot
open (``PackageInputError``). They are imported when a subcommand ran,
never for ``--help``.
"""

from pi_continuity_harness.errors import HarnessError

__all__ = [
    "SUMMARIES",
    "UsageError",
    "search_current_directory",
    "sweep_orphaned_directories",
    "usage_errors",
]

#: One line per subcommand, in the order ``--help`` lists them (command name: summary).
SUMMARIES: dict[str, str] = {
    "run": "run the conformance suite and print the named assertions",
    "simulate": "run one scenario on the simulated Pi host",
    "replay": "re-run a scenario and compare its trace with a recorded one",
    "schema": "print or write the scenario JSON Schema",
    "install-pi": "install pinned Node 22 and Pi (default 1.6.0, or --pi-version) from the npm registry (cached)",
    "compare": "run the suite on the simulator and on real Pi and compare what each observed",
    "matrix": "run the suite against several real Pi releases: named assertion x Pi version",
    "explore": "explore seeded random scenarios with the spec's invariants (and minimise failures)",
    "mutants": "run the suite and the explorer against every mutant and print the kill matrix",
    "rules": "list every rule of a system with the scenarios, invariants and mutants that cover it",
    "import-session": "turn a real Pi 1.6 session file into a scenario that replays it",
    "package": "gate a Pi package release: manifest, docs, npm pack, pi install, smoke, pi remove",
}


class UsageError(HarnessError):
    """A problem with the command line or an input file: exit status 2, this message."""


def usage_errors() -> tuple[type[Exception], ...]:
    """The errors reported as one line and exit status 2 (imported when a subcommand ran)."""
    from pi_continuity_harness.features.preflight import SetupError  # noqa: PLC0415  (not for --help)
    from pi_continuity_harness.features.suite import SuiteUsageError  # noqa: PLC0415
    from pi_continuity_harness.package import PackageInputError  # noqa: PLC0415
    from pi_continuity_harness.scenario.run_lock import RunDirectoryError  # noqa: PLC0415

    return (UsageError, SetupError, RunDirectoryError, SuiteUsageError, PackageInputError)


def search_current_directory() -> None:
    """Module specs resolve from the current directory, as with ``python -m``
    (:func:`~pi_continuity_harness.scenario.implementations.search_current_directory`)."""
    from pi_continuity_harness.scenario.implementations import (  # noqa: PLC0415  (not for --help)
        search_current_directory as search,
    )

    search()


def sweep_orphaned_directories() -> None:
    """Remove the temporary directories harness processes killed by SIGKILL left behind
    (:func:`~pi_continuity_harness.scenario.owned_dirs.sweep_orphans`: only those whose owner is
    certainly gone), in the usual places and in the harness's cache (the package gate's work
    goes there), and say so on stderr, one line."""
    import sys  # noqa: PLC0415

    from pi_continuity_harness.cache_dir import default_cache_dir  # noqa: PLC0415  (not the real-Pi package)
    from pi_continuity_harness.scenario.owned_dirs import sweep_message, sweep_orphans, sweep_roots  # noqa: PLC0415

    roots = sweep_roots()
    cache_tmp = default_cache_dir() / "tmp"
    if cache_tmp.is_dir() and str(cache_tmp.resolve()) not in roots:
        roots.append(str(cache_tmp.resolve()))
    removed = sweep_orphans(roots)
    if removed:
        print(sweep_message(removed), file=sys.stderr)
