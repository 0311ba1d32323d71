"""The validation record of spec §20 (``run --report``): it names the host and Pi version, the
Node version on real Pi, the OS, the install command, and per named assertion its transcript
(the steps) and the artifact paths it produced."""

from __future__ import annotations

import json
from pathlib import Path

from pi_continuity_harness import PI_VERSION
from pi_continuity_harness.features.suite import default_environment, run_suite
from pi_continuity_harness.targets.realpi.install import NODE_VERSION


def test_the_record_names_the_environment_the_install_command_and_each_assertion(tmp_path: Path) -> None:
    run = run_suite(target="sim", keyword="manualcheckpointwritesartifact", workdir=tmp_path / "runs")
    md_path, json_path = run.write_report(tmp_path / "report")
    record = json.loads(json_path.read_text(encoding="utf-8"))
    environment = record["environment"]
    assert PI_VERSION in environment["host"] and environment["os"] and environment["python"]
    assert record["install_command"].startswith("python -m pip install pi-continuity-harness")
    assert record["counts"]["passed"] == 1
    [assertion] = record["assertions"]
    assert (assertion["assertion"], assertion["status"]) == ("manual-checkpoint-writes-artifact", "passed")
    steps = [step["name"] for step in assertion["steps"]]
    assert steps[0] == "the user has worked through 2 turns"
    assert 'the user runs "/continuity checkpoint"' in steps
    [artifact] = assertion["observed"]["artifacts"]
    assert "/.pi/session-continuity/" in artifact and "/pending/" in artifact and Path(artifact).is_file()
    markdown = md_path.read_text(encoding="utf-8")
    assert f"- host: {environment['host']}" in markdown
    assert "## manual-checkpoint-writes-artifact: manual-checkpoint-writes-artifact" in markdown
    assert f"- `{artifact}`" in markdown


def test_on_real_pi_the_record_names_pi_and_node() -> None:
    environment = default_environment("pi")
    assert environment["host"] == f"Pi {PI_VERSION} (real, RPC mode)"
    assert environment["node"] == NODE_VERSION
    assert "node" not in default_environment("sim")
