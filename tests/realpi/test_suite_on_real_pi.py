"""The Pi Session Continuity conformance suite on real Pi 1.6, against the reference through the bridge.

Every scenario real Pi can run passes; every scenario it skips names the capability it lacks
(``@needs-<capability>``: a simulator-only fault, print mode, ...). Each scenario leaves its
normalised observation record (``observation.json``) for ``compare``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.targets.realpi import PiInstallation
from pi_continuity_harness.targets.target import CAPABILITIES

pytestmark = [pytest.mark.realpi, pytest.mark.slow]

_NEEDS = re.compile(r"^needs (?P<capability>[a-z-]+) \(")


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A work directory at a short path (pytest's tmp_path under xdist is too deep once a
    scenario's name is added)."""
    root = Path(tempfile.mkdtemp(prefix="pch-s-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_every_scenario_real_pi_can_run_passes(pi_installation: PiInstallation, short_tmp: Path) -> None:
    tmp_path = short_tmp  # the real-Pi machine root is 128 characters: a run directory may have 126
    run = run_suite(target="pi", tags="not handoff", workdir=tmp_path / "pi")

    assert run.results, "no scenario ran"
    failed = [f"{r.assertion} :: {r.name}: {r.detail[:300]}" for r in run.failed]
    assert not failed, "\n".join(failed)
    assert run.exit_code == 0
    skipped = [r for r in run.results if r.status == "skipped"]
    for result in skipped:
        match = _NEEDS.match(result.detail)
        assert match and match.group("capability") in CAPABILITIES, f"{result.name}: {result.detail}"
    passed = [r for r in run.results if r.status == "passed"]
    assert len(passed) >= 50 and len(skipped) <= len(passed)
    # All 13 smoke assertions of spec §15 pass (one feature file each).
    smoke = {
        r.feature_file for r in passed if r.feature_file.replace("\\", "/").split("/")[-2:-1] == ["smoke"]
    }
    assert len(smoke) == 13, sorted(smoke)
    for result in passed:
        record = tmp_path / "pi" / result.observed["workdir"].rsplit("/", 1)[-1] / "observation.json"
        data = json.loads(record.read_text(encoding="utf-8"))
        assert data["started"] and data["target"] == "pi" and data["seconds"] > 0
