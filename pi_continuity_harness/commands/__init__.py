"""The subcommands of ``pi-continuity-harness``, one module each.

Every module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit status). :mod:`pi_continuity_harness.cli` lists them and
imports a module only when its subcommand runs (``--version`` and ``--help`` import none of
them: they pull in the simulator, pytest, pydantic and rich), so each subcommand's one-line
summary lives here, where both the lazy ``--help`` and the module's own parser read it.
"""

__all__ = ["SUMMARIES", "UsageError"]

#: One line per subcommand, in the order ``--help`` lists them (command name: summary).
SUMMARIES: dict[str, str] = {
    "run": "run the conformance suite and print the named assertions",
    "simulate": "run one scenario on the simulated Pi host",
    "replay": "re-run a scenario and compare its trace with a recorded one",
    "schema": "print or write the scenario JSON Schema",
    "install-pi": "install pinned Node 22 and Pi 1.6.0 from the npm registry (cached)",
    "compare": "run the suite on the simulator and on real Pi and compare what each observed",
    "explore": "explore seeded random scenarios with the spec's invariants (and minimise failures)",
    "mutants": "run the suite and the explorer against every mutant and print the kill matrix",
    "rules": "list every rule of a system with the scenarios, invariants and mutants that cover it",
}


class UsageError(Exception):
    """A problem with the command line or an input file: exit status 2, this message."""
