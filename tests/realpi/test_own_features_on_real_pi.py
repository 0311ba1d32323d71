"""Issue 12, item 6 on real Pi: the scenario of your own that docs/running-the-suite.md shows
runs on real Pi 1.6 and compares clean with the simulator, and Cucumber JSON keeps the
scenarios real Pi skips (``@needs-trace-faults``)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_continuity_harness.targets.realpi import PiInstallation

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cli import own_features  # the document's example, shared with tests/cli
from cli.harness_cli import harness

pytestmark = pytest.mark.realpi


@pytest.fixture
def project() -> Iterator[Path]:
    """A project at a short path: the real-Pi target lays a machine out at exactly 128
    characters, so a run directory may have at most 126 (pytest's own tmp_path under xdist is
    too deep once the run's temporary directory and the scenario's name are added)."""
    root = Path(tempfile.mkdtemp(prefix="pch-own-", dir="/tmp"))
    own_features.write(root)
    (root / "tmp").mkdir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(
    "command", [c for c in own_features.commands() if "pi" in c or "compare" in c], ids=" ".join
)
def test_rule_the_documented_scenario_of_your_own_runs_on_real_pi(
    pi_installation: PiInstallation, project: Path, command: list[str]
) -> None:
    _program, *args = command
    ran = harness(*args, "--json", "out.json", cwd=project, env={"TMPDIR": str(project / "tmp")})
    assert ran.code == 0, ran.out + ran.err
    report = json.loads((project / "out.json").read_text(encoding="utf-8"))
    if args[0] == "compare":
        assert report["summary"]["compared"] == 1 and report["summary"]["ok"]
    else:
        assert [r["status"] for r in report["results"]] == ["passed"]
    assert list((project / "tmp").iterdir()) == [], "a passing run leaves no temporary directory"


def test_rule_cucumber_json_keeps_what_real_pi_skips(pi_installation: PiInstallation, tmp_path: Path) -> None:
    """Before: the skipped scenarios were missing from Cucumber JSON on ``--target pi``."""
    name = "mismatch stays pending when the pending bytes changed on disk"
    cucumber = tmp_path / "c.json"
    ran = harness("run", "--target", "pi", "-k", name, "--cucumber", str(cucumber), "--quiet", cwd=tmp_path)
    assert ran.code == 0, ran.out + ran.err
    assert "0 passed, 0 failed, 1 skipped" in ran.out
    (feature,) = json.loads(cucumber.read_text(encoding="utf-8"))
    (element,) = feature["elements"]
    assert element["name"] == name
    assert element["steps"] and {s["result"]["status"] for s in element["steps"]} == {"skipped"}


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            'export default function (pi) {\n  throw new Error("ts factory exploded");\n}\n',
            "ts factory exploded",
        ),
        ("export default function (pi) {\n  const x = ;\n}\n", "ParseError: Unexpected token"),
    ],
    ids=["throws", "does-not-parse"],
)
def test_rule_a_typescript_implementation_pi_cannot_load_is_one_line_exit_2(
    pi_installation: PiInstallation, tmp_path: Path, source: str, reason: str
) -> None:
    """A TypeScript file is probed on real Pi itself, once, before any scenario."""
    (tmp_path / "ext.ts").write_text(source, encoding="utf-8")
    ran = harness("run", "--target", "pi", "--extension", "ext.ts", cwd=tmp_path)
    assert (ran.code, ran.out) == (2, "")
    assert len(ran.err_lines) == 1
    assert ran.err_lines[0].startswith(
        'pi-continuity-harness run: --extension ext.ts: the implementation does not load: Failed to load extension "'
    )
    assert reason in ran.err_lines[0]
