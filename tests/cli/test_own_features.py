"""Issue 12, item 6: your own features, with the stock steps and steps of your own, through
``run --features``, ``compare --features`` and plain pytest in any project (the ``pytest11``
plugin); ``-k`` takes the names as printed; Cucumber JSON has the skipped scenarios.

The end-to-end example is the one docs/running-the-suite.md shows, read from the document
(:mod:`.own_features`); its real-Pi half is ``tests/realpi/test_own_features_on_real_pi.py``.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario.run_lock import hold_run_directory
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import CAPABILITIES

from . import own_features
from .harness_cli import harness, pytest_in

SKIPPED_FEATURE = """@needs-crash
Feature: skipped-before-it-runs
  A scenario skipped before it runs (a @needs-<capability> on a target without it) is still
  reported.

  Scenario: teleport the session
    Given the user has worked through 1 turn
    When the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session
"""

PLAIN_TEST = """def test_the_projects_own_test():
    assert 1 + 1 == 2
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of the user's, with the document's feature file and conftest in it."""
    own_features.write(tmp_path)
    return tmp_path


def _tmp(project: Path) -> dict[str, str]:
    """TMPDIR inside the test's directory: a failing run keeps its machines there."""
    scratch = project / "tmp"
    scratch.mkdir(exist_ok=True)
    return {"TMPDIR": str(scratch)}


def _simulator_commands() -> list[list[str]]:
    return [c for c in own_features.commands() if "pi" not in c and "compare" not in c]


def test_the_document_shows_a_feature_a_conftest_and_both_targets() -> None:
    assert sorted(own_features.files()) == [
        "my_features/checkpoint-names-its-file.feature",
        "my_features/conftest.py",
    ]
    commands = own_features.commands()
    assert ["pi-continuity-harness", "run", "--features", "my_features"] in commands
    assert ["pi-continuity-harness", "run", "--features", "my_features", "--target", "pi"] in commands
    assert ["pi-continuity-harness", "compare", "--features", "my_features"] in commands
    assert ["pytest", "my_features", "--target", "sim"] in commands


@pytest.mark.parametrize("command", _simulator_commands(), ids=" ".join)
def test_rule_the_documented_scenario_of_your_own_runs_on_the_simulator(
    project: Path, command: list[str]
) -> None:
    """Each simulator command of the document, as written; the null implementation must fail it."""
    program, *args = command
    ran = (harness if program == "pi-continuity-harness" else pytest_in)(
        *args, cwd=project, env=_tmp(project)
    )
    if "null" in args:
        assert ran.code == 1, ran.out + ran.err
        assert "checkpoint-names-its-file" in ran.out and "0 passed, 1 failed" in ran.out
        return
    assert ran.code == 0, ran.out + ran.err
    assert ("1 passed, 0 failed, 0 skipped" if program != "pytest" else "1 passed") in ran.out


def test_rule_a_step_of_your_own_is_used_and_can_fail(project: Path) -> None:
    """The conftest's step really runs: break its expectation and the scenario fails on it."""
    conftest = project / "my_features" / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8").replace("len(written) == 1", "len(written) == 2"),
        encoding="utf-8",
    )
    ran = harness(
        "run", "--features", "my_features", "--quiet", "--json", "r.json", cwd=project, env=_tmp(project)
    )
    assert ran.code == 1
    (result,) = json.loads((project / "r.json").read_text(encoding="utf-8"))["results"]
    assert result["detail"].startswith(
        "failing step: Then the notification names the one Brief file written\n"
        "expected: the notification names the one Brief file written\n"
        "observed: expected one Brief file, found ["
    )


def test_rule_the_plugin_leaves_another_projects_pytest_run_alone(project: Path) -> None:
    """Installed, the plugin changes nothing for a project's own pytest run: without --target no
    feature file is collected; with it, the project's tests and the features both run."""
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    (project / "test_own.py").write_text(PLAIN_TEST, encoding="utf-8")
    ran = pytest_in("-q", cwd=project)
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed" in ran.out
    ran = pytest_in("-q", "--target", "sim", cwd=project)
    assert ran.code == 0, ran.out + ran.err
    assert "2 passed" in ran.out


def test_rule_a_scenario_bound_by_a_scenarios_module_runs_once(project: Path) -> None:
    (project / "my_features" / "test_bound.py").write_text(
        'from pytest_bdd import scenarios\n\nscenarios("checkpoint-names-its-file.feature")\n',
        encoding="utf-8",
    )
    ran = pytest_in("my_features", "-q", "--target", "sim", "-p", "no:cacheprovider", cwd=project)
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed" in ran.out


def test_rule_the_plugin_is_a_pytest11_entry_point_named_after_its_module() -> None:
    points = {ep.name: ep.value for ep in metadata.entry_points(group="pytest11")}
    assert points.get("pi_continuity_harness.features.plugin") == "pi_continuity_harness.features.plugin", (
        "reinstall the package (pip install -e .) to register the entry point"
    )


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("the threshold is strict", 1),
        ("native-threshold-enters-hook", 4),
        ("the summary is the disk Brief for every compaction reason [overflow-overflow]", 1),
        ("the summary is the disk Brief for every compaction reason", 3),
    ],
)
def test_rule_k_takes_the_names_exactly_as_printed(
    name: str, count: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "r.json"
    assert main(["run", "-k", name, "--quiet", "--json", str(results)]) == 0
    capsys.readouterr()
    ran = json.loads(results.read_text(encoding="utf-8"))["results"]
    assert len(ran) == count
    assert all(name in (r["name"], r["assertion"]) or r["name"].startswith(name) for r in ran)


def test_rule_k_that_is_neither_a_name_nor_an_expression_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "-k", "no such (scenario", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "pi-continuity-harness run: Wrong expression passed to '-k': no such (scenario: at column 4: expected "
        "end of input; got identifier (-k takes a scenario's or an assertion's name as printed, or a "
        "pytest keyword expression)\n"
    )


@pytest.mark.parametrize(
    ("tags", "problem"),
    [
        (
            "@needs-teleportation",
            "@needs-teleportation: no such capability (known: agent-settled-aborted, ",
        ),
        ("@rule-P999", "@rule-P999: not a rule of pi-session-continuity"),
        ("@host @rule-P1", "@rule-P1 beside @host: a scenario of Pi's own behaviour proves no rule"),
    ],
    ids=["unknown-capability", "unknown-rule", "host-and-rule"],
)
def test_rule_a_tag_in_the_harness_namespaces_that_means_nothing_is_one_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str], tags: str, problem: str
) -> None:
    """Before: ``@needs-teleportation`` skipped the scenario on every target (a typo passed it
    without evidence), and a rule the catalogue does not have was claimed silently."""
    typo = project / "my_features" / "typo.feature"
    typo.write_text(
        f"Feature: typo\n  {tags}\n  Scenario: s\n    Given the user has worked through 1 turn\n"
        "    Then exactly one pending Continuity Brief exists for this session\n",
        encoding="utf-8",
    )
    assert main(["run", "--features", str(typo), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"pi-continuity-harness run: a feature has tags the harness refuses: my_features/{typo.name}:3: {problem}"
    ), err


def test_rule_cucumber_json_includes_skipped_scenarios(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The simulator has every capability: here it lacks ``crash``, as real Pi lacks some, so
    the ``@needs-crash`` scenario is skipped before it runs (pytest's ``@skip`` is refused as a
    tag of your own features)."""
    monkeypatch.setattr(SimTarget, "capabilities", lambda _self: frozenset(CAPABILITIES) - {"crash"})
    (project / "my_features" / "skipped.feature").write_text(SKIPPED_FEATURE, encoding="utf-8")
    cucumber = project / "cucumber.json"
    assert (
        main(["run", "--features", str(project / "my_features"), "--cucumber", str(cucumber), "--quiet"]) == 0
    )
    capsys.readouterr()
    features = {f["name"]: f for f in json.loads(cucumber.read_text(encoding="utf-8"))}
    assert sorted(features) == ["checkpoint-names-its-file", "skipped-before-it-runs"]
    (skipped,) = features["skipped-before-it-runs"]["elements"]
    assert skipped["name"] == "teleport the session"
    assert [(s["keyword"], s["result"]["status"]) for s in skipped["steps"]] == [
        ("Given", "skipped"),
        ("When", "skipped"),
        ("Then", "skipped"),
    ]
    (ran,) = features["checkpoint-names-its-file"]["elements"]
    assert {s["result"]["status"] for s in ran["steps"]} == {"passed"}


def test_rule_under_plain_pytest_a_setup_mistake_is_one_usage_error(project: Path) -> None:
    (project / "raising.py").write_text(
        "def extension(pi):\n    raise RuntimeError('no')\n", encoding="utf-8"
    )
    ran = pytest_in("my_features", "-q", "--target", "sim", "--extension", "raising:extension", cwd=project)
    assert ran.code == 4
    assert ran.err.strip() == (
        "ERROR: --extension raising:extension: the implementation does not load: "
        'Failed to load extension "raising:extension": Failed to load extension: no'
    )
    assert "passed" not in ran.out and "failed" not in ran.out


def test_rule_under_plain_pytest_a_gherkin_error_names_the_file_and_line(project: Path) -> None:
    broken = project / "my_features" / "broken.feature"
    broken.write_text("Feature: broken\n  Scenario: s\n    Given x\n    Whn y\n", encoding="utf-8")
    ran = pytest_in("my_features", "-q", "--target", "sim", cwd=project)
    assert ran.code == 2
    assert f"{broken}:4: Unexpected token found. Check Gherkin syntax near the reported error." in ran.out


def test_rule_under_plain_pytest_a_step_no_definition_matches_is_one_usage_error(project: Path) -> None:
    typo = project / "my_features" / "typo.feature"
    typo.write_text(
        "Feature: typo\n  Scenario: s\n    Given the user has worked thru 2 turns\n"
        "    Then exactly one pending Continuity Brief exists for this session\n",
        encoding="utf-8",
    )
    ran = pytest_in("my_features", "-q", "--target", "sim", cwd=project)
    assert ran.code == 4
    assert ran.err.strip() == (
        "ERROR: a feature has steps that no step definition matches (a typo, or a conftest.py with "
        "your own steps missing beside it): my_features/typo.feature:3: Given 'the user has worked "
        "thru 2 turns' matches no step definition (scenario 's')"
    )
    assert "passed" not in ran.out and "failed" not in ran.out


def test_rule_under_plain_pytest_the_machines_go_after_a_pass_and_stay_after_a_failure(project: Path) -> None:
    env = _tmp(project)
    scratch = Path(env["TMPDIR"])
    ran = pytest_in("my_features", "-q", "--target", "sim", cwd=project, env=env)
    assert ran.code == 0, ran.out + ran.err
    assert list(scratch.iterdir()) == []
    ran = pytest_in("my_features", "-q", "--target", "sim", "--extension", "null", cwd=project, env=env)
    assert ran.code == 1
    (kept,) = list(scratch.iterdir())
    assert kept.name.startswith("pi-continuity-harness-")
    assert f"pi-continuity-harness: the scenarios' machines are kept in {kept}" in ran.out
    machine = kept / "test_the_checkpoint_notification_names_the_brief_file"
    assert f"the scenario's machine is kept in {machine}" in ran.out
    assert (machine / "trace.jsonl").is_file()


def test_rule_under_plain_pytest_a_harness_workdir_in_use_is_refused(project: Path) -> None:
    workdir = project / "runs"
    with hold_run_directory(workdir, command="the test itself"):
        ran = pytest_in(
            "my_features", "-q", "--target", "sim", "--harness-workdir", str(workdir), cwd=project
        )
    assert ran.code == 4
    assert ran.err.strip().startswith(
        f"ERROR: --harness-workdir {workdir}: {workdir} is in use by another run (pid "
    )


def test_rule_under_plain_pytest_a_link_loop_among_the_features_is_one_usage_error(project: Path) -> None:
    """Before: pytest followed the loop to its depth limit and ran the scenario 41 times."""
    (project / "my_features" / "sub").mkdir()
    (project / "my_features" / "sub" / "up").symlink_to("..")
    ran = pytest_in("my_features", "-q", "--target", "sim", cwd=project)
    assert ran.code == 4
    assert ran.err.strip() == (
        f"ERROR: my_features/sub/up: a link back to {project / 'my_features'}, a directory it is in "
        "(a loop): pytest would collect its features again at every level"
    )
    assert "passed" not in ran.out


def test_rule_under_plain_pytest_two_scenarios_of_one_name_are_a_collection_error(project: Path) -> None:
    """Before: only the last of the two ran ("1 passed")."""
    same = project / "my_features" / "same.feature"
    scenario = "  Scenario: same\n    Given the user has worked through 1 turn\n    Then the agent is idle\n"
    same.write_text(f"Feature: same\n{scenario}{scenario}", encoding="utf-8")
    ran = pytest_in("my_features", "-q", "--target", "sim", cwd=project)
    assert ran.code == 2
    assert (
        f"{same}:5: a second scenario named 'same' (the first is at line 2): pytest-bdd keeps one "
        "scenario per name, so only the last would run" in ran.out
    ), ran.out
    assert "passed" not in ran.out
