"""Every scenario has a machine directory of its own.

The directory was the test name cut at 80 characters, and 5 pairs of the suite's parametrized
examples share their first 80: in a serial run the second example ran in the first's machine
and overwrote its observation record (``compare`` compared one example twice), and under
``run -n 2`` the two ran in one directory at once (``compare`` found each example's record
under the other's name, in a whole-pytest run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_continuity_harness.features import SUITE_DIR
from pi_continuity_harness.features.pytest_plugin import observation_path
from pi_continuity_harness.features.suite import run_suite


class _Names:
    """A pytest plugin that keeps the collected scenarios' test names."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.names = [item.name for item in session.items]


@pytest.mark.parametrize("extension", ["reference", "blitz"])
def test_rule_every_scenario_of_the_suite_has_its_own_machine_directory(extension: str) -> None:
    names = _Names()
    code = pytest.main(
        [str(SUITE_DIR), "-c", str(SUITE_DIR / "suite.ini"), "--rootdir", str(SUITE_DIR), "-p",
         "pi_continuity_harness.features.plugin", "-p", "no:cacheprovider", "--collect-only", "-q",
         "--target", "sim", "--extension", extension],
        plugins=[names],
    )  # fmt: skip
    assert code == 0 and len(names.names) > 100
    root = Path("/w")
    directories = {observation_path(root, name).parent for name in names.names}
    assert len(directories) == len(names.names)
    assert max(len(d.name) for d in directories) <= 80


def test_rule_two_examples_alike_in_their_first_80_characters_keep_their_own_records(tmp_path: Path) -> None:
    run = run_suite(target="sim", keyword="directivelooking", workdir=tmp_path / "runs")
    assert [r.status for r in run.results] == ["passed", "passed", "passed"]
    for result in run.results:
        record = json.loads(
            observation_path(tmp_path / "runs", result.nodeid.rsplit("::", 1)[-1]).read_text()
        )
        example = result.name.split("[", 1)[1].rstrip("]")
        briefs = "".join(str(v) for v in record["artifacts"].values())
        assert example.split(". ", 1)[1][:30] in briefs, (result.name, sorted(record["artifacts"]))


def test_every_result_names_its_machine_directory(tmp_path: Path) -> None:
    """A result names the directory its scenario's machine was laid out in (the validation
    record's ``machine``): the run directory's own directory for the test, which the target
    filled. The world makes the run directory once per scenario and lays the machine, the
    record path and the ``machine`` property out from it."""
    run = run_suite(target="sim", keyword="archive", workdir=tmp_path / "runs")
    assert len(run.results) > 1 and all(r.status == "passed" for r in run.results)
    for result in run.results:
        machine = Path(result.machine)
        assert machine == observation_path(tmp_path / "runs", result.nodeid.rsplit("::", 1)[-1]).parent
        assert machine.is_dir() and any(machine.iterdir())
        assert (machine / "observation.json").is_file()
