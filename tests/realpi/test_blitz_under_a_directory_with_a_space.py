"""The blitz reference on real Pi 1.6 under a work directory with a space, and with "delete" and
"keep" among its words (``tests/blitz/test_paths_under_a_directory_with_a_space.py`` holds the
unit checks).

Under ``--workdir "/tmp/pch review/w"`` 46 of the 249 blitz scenarios failed for the reference:
the scripted model took the dossier path after the space (outside the run, refused by the
harness), and the receiver's ``rm`` split the path in two. The transfer (the dossier written,
read and deleted) and the retained dossier (a "leave it unchanged" prompt, read as a deletion
when the directory's own words counted) are the scenarios that read those paths; both pass
here. Real Pi shows real paths, so only this target can fail them (the simulator shows its
machine root, which has no space).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = [pytest.mark.realpi, pytest.mark.slow(seconds=10)]


def test_the_transfer_and_the_retained_dossier_pass_under_a_directory_with_a_space(
    pi_installation: PiInstallation, short_tmp: Path
) -> None:
    run = run_suite(
        target="pi",
        extension="blitz",
        tags="rule-H11a or rule-H37b",
        workdir=short_tmp / "x delete" / "keep w",
        workers=2,
    )
    names = sorted(r.name for r in run.results)
    assert "sh-start-transfers-to-a-parent-linked-session" in names, names
    assert "dossier-retained-when-deletion-is-off" in " ".join(names), names
    failed = [f"{r.name}: {r.detail}" for r in run.results if r.status in ("failed", "error")]
    assert not failed, "\n".join(failed)
