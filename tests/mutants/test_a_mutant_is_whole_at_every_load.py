"""A mutant is the same at every load of its process, not only at the first.

Each load starts from the reference as shipped (``mutants.pristine``), and a run loads the
implementation more than once (the setup check, then every scenario's Pi). ``reread_trusts_memory``
(P3d) set its remembering write only when its change was first made: from the second load on the
write was the reference's again, its "re-read" remembered nothing and read the disk, and the
mutant survived the scenario of its rule. It runs in a process of its own: it changes the
reference's modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_continuity_harness.mutants.catalogue import MUTANTS

ROOT = Path(__file__).resolve().parents[2]


def test_reread_trusts_memory_fails_the_step_that_states_p3d(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    command = [
        sys.executable, "-m", "pi_continuity_harness.cli", "run", "--quiet", "--rules", "P3d",
        "--extension", MUTANTS["reread_trusts_memory"].spec, "--json", str(results),
        "--workdir", str(tmp_path / "work"),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path, env=env)
    [result] = json.loads(results.read_text(encoding="utf-8"))["results"]
    assert result["status"] == "failed", result["detail"]
    assert result["detail"].startswith("failing step: Then native compaction was cancelled"), result["detail"]
