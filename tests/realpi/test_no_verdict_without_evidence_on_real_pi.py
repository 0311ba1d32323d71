"""No verdict without evidence on real Pi (issue 10 item 4): Pi's own ``custom-compaction.ts``
example, which writes no Brief and registers no ``/continuity`` command, passes nothing it does
not do.

The example (``examples/extensions/custom-compaction.ts`` of the installed package) summarises
with ``google/gemini-2.5-flash``; a scenario's model registry has no such model, so it notifies a
warning and returns nothing, and Pi compacts with its own summarizer. Every scenario that checks
something a Pi Session Continuity implementation must do therefore fails for it; only the
scenarios tagged ``@host`` (Pi's own behaviour) may pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = [pytest.mark.realpi, pytest.mark.slow(seconds=74)]


def test_pis_custom_compaction_example_passes_only_host_scenarios(
    pi_installation: PiInstallation, short_tmp: Path
) -> None:
    example = pi_installation.pi_package_dir / "examples" / "extensions" / "custom-compaction.ts"
    assert example.is_file(), f"the installed Pi package has no {example}"
    run = run_suite(
        target="pi",
        extension=str(example),
        workdir=short_tmp / "pi",
        extra_args=["--system", "pi-session-continuity"],
        workers=2,  # a failing scenario mostly waits for what never comes: two at once
    )
    assert run.results, "no scenario ran"
    failed = [r for r in run.results if r.status in ("failed", "error")]
    assert failed, "the example failed nothing: the suite cannot tell it from an implementation"
    without = [f"{r.assertion} :: {r.name}" for r in run.passed_without_evidence()]
    assert not without, "passed without evidence:\n" + "\n".join(without)
