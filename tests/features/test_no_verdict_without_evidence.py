"""No verdict without evidence (issue 10 item 4): an implementation that does nothing passes only
the scenarios tagged ``@host``.

The null implementation (``pi_continuity_harness.reference.null``) registers no handler and no
command. Every scenario that checks an effect an implementation must produce has to fail for it;
a scenario that passes anyway either tests Pi's own behaviour (then it is tagged ``@host`` and
proves no rule) or gives a verdict without evidence, and this test names it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.features.suite import run_suite

#: (null implementation, system).
NULL_IMPLEMENTATIONS = [("null", "pi-session-continuity"), ("null-blitz", "pi-blitz-handoff")]


@pytest.mark.slow
@pytest.mark.parametrize(("implementation", "system"), NULL_IMPLEMENTATIONS)
def test_the_null_implementation_passes_only_host_scenarios(
    implementation: str, system: str, tmp_path: Path
) -> None:
    run = run_suite(target="sim", extension=implementation, workdir=tmp_path / "runs")
    assert run.results and {r.system for r in run.results} == {system}
    without = [f"{r.feature_file} :: {r.name}" for r in run.passed_without_evidence()]
    assert not without, "passed for an implementation that does nothing:\n" + "\n".join(without)
    failed = [r for r in run.results if r.status in ("failed", "error")]
    assert failed, "nothing failed for an implementation that does nothing"
    # Every failure names its step, what it expected, what was observed and the errors thrown.
    for result in failed:
        assert result.detail.startswith("failing step: "), f"{result.name}: {result.detail[:200]}"
        assert "\nexpected: " in result.detail and "\nobserved: " in result.detail, result.detail
        assert "the implementation threw" in result.detail, result.detail


def test_the_null_check_fails_when_a_scenario_passes_without_evidence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``run --null-check`` exits 1 for an implementation that passes a scenario not tagged
    @host: here the reference itself, which passes everything."""
    code = cli(
        ["run", "--extension", "reference", "--null-check", "--quiet", "--tags", "install", "-k", "status"]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "without being tagged @host" in out and "status-reports-every-field" in out


def test_an_unregistered_command_fails_the_step_that_ran_it(tmp_path: Path) -> None:
    run = run_suite(
        target="sim", extension="null", workdir=tmp_path / "runs", tags="install", keyword="status"
    )
    assert run.results
    for result in run.results:
        assert result.status == "failed", result.name
        assert "the implementation registered no /continuity command" in result.detail, result.detail
