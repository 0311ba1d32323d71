"""Issue 16: ``explore`` writes a run's ``requests/*.json`` only for a run it keeps.

A passing seed's directory is removed, so encoding its request files (several MB a seed) was
waste; a kept directory (a failing seed) holds exactly the files it held before. The failing
implementation is a proxy-only mutant (it patches no module), safe in this process.
"""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.engine import ExploreSettings, explore_seed
from pi_continuity_harness.explore.runner import run_case

STEER = "pi_continuity_harness.mutants.catalogue:continuation_as_steer"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_run_told_not_to_writes_its_request_files_only_when_asked(tmp_path: Path) -> None:
    workdir = tmp_path / "run"
    case = case_for_seed(1, 12)
    written = run_case(PLUGIN, case, implementation="reference", workdir=workdir)
    before = _files(workdir)
    assert any(name.startswith("requests/") for name in before)

    deferred = run_case(PLUGIN, case, implementation="reference", workdir=workdir, requests=False)
    assert not (workdir / "requests").exists()
    assert deferred.trace == written.trace
    deferred.write_requests()
    assert _files(workdir) == before
    deferred.write_requests()  # once only: a second call changes nothing
    assert _files(workdir) == before


def test_a_passing_seed_leaves_nothing_and_a_failing_seed_keeps_every_file(tmp_path: Path) -> None:
    def settings(extension: str, root: Path) -> ExploreSettings:
        return ExploreSettings(
            steps=30, extension=extension, system=PLUGIN.system, out_dir=None, work_root=str(root)
        )

    assert explore_seed(0, settings("reference", tmp_path / "pass")).ok
    assert not (tmp_path / "pass" / "seed-0").exists()

    report = explore_seed(0, settings(STEER, tmp_path / "fail"))
    assert not report.ok and report.violation is not None
    kept = tmp_path / "fail" / "seed-0"
    files = _files(kept)
    assert any(name.startswith("requests/") for name in files)
    # The same run with its files written at once leaves the same bytes.
    run_case(PLUGIN, case_for_seed(0, 30), implementation=STEER, workdir=kept)
    assert _files(kept) == files
