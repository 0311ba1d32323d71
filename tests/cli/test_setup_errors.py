"""Issue 12, item 4: a setup mistake is one message, before any scenario, exit status 2.

Each case of the issue, run as a user runs it (the installed script, in a directory of their
own) and asserted as printed: before, each printed once per scenario (572 lines for one typo,
exit 1, details cut mid-word), a Gherkin syntax error collapsed the suite into one
``(collection)`` row, and ``simulate`` with a factory that raises exited 0. Nothing may be
written when setup fails.

A mistake refused before anything runs is checked through ``cli.main`` in this process
(:func:`.harness_cli.harness_here`: the same lines and exit status, without a process's
start-up); what depends on the process (the script's ``sys.path``, the environment, pytest-xdist
workers, a user's conftest or test module imported by the suite's pytest, a scenario that would
exhaust the machine) runs the installed script, and so does one refusal of each kind.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .harness_cli import REPO, harness, harness_here

EXAMPLE = REPO / "examples" / "overflow-retry.yaml"

RAISING = """
def extension(pi):
    raise RuntimeError("factory exploded while registering handlers")


NOT_A_FACTORY = 42
"""

MY_EXTENSION = '''
from pi_continuity_harness.reference.psc import extension as _reference


def extension(pi):
    """A user's own module next to them: the reference, under another name."""
    return _reference(pi)
'''

BROKEN_FEATURE = """Feature: broken
  Scenario: a step keyword with a typo
    Given the user has worked through 2 turns
    Whn the user runs "/continuity checkpoint"
"""


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """A directory of the user's, with their modules in it and nothing on PYTHONPATH."""
    directory = tmp_path / "work"
    directory.mkdir()
    (directory / "raising.py").write_text(RAISING, encoding="utf-8")
    (directory / "my_ext.py").write_text(MY_EXTENSION, encoding="utf-8")
    return directory


def _only(directory: Path, *names: str) -> None:
    """Nothing but ``names`` is in ``directory`` (setup failed: nothing written)."""
    found = sorted(p.name for p in directory.iterdir() if p.name != "__pycache__")
    assert found == sorted(names), f"written despite the setup error: {found}"


def test_rule_unimportable_extension_is_one_line_exit_2(user_dir: Path) -> None:
    ran = harness("run", "--extension", "nosuch_mod:extension", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: --extension nosuch_mod:extension: cannot import 'nosuch_mod': "
        f"No module named 'nosuch_mod' (looked in {user_dir} and on sys.path)"
    ]
    _only(user_dir, "raising.py", "my_ext.py")


def test_rule_a_module_in_the_current_directory_resolves_as_python_m_does(user_dir: Path) -> None:
    """Before: without PYTHONPATH every scenario failed with "cannot import 'my_ext'"."""
    ran = harness("run", "--extension", "my_ext:extension", "-k", "the threshold is strict", cwd=user_dir)
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed, 0 failed, 0 skipped" in ran.out


def test_rule_a_factory_that_raises_is_one_line_exit_2(user_dir: Path) -> None:
    ran = harness_here("run", "--extension", "raising:extension", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: --extension raising:extension: the implementation does not load: "
        'Failed to load extension "raising:extension": Failed to load extension: '
        "factory exploded while registering handlers"
    ]
    _only(user_dir, "raising.py", "my_ext.py")


def test_rule_a_non_callable_implementation_is_one_line_exit_2(user_dir: Path) -> None:
    ran = harness_here("run", "--extension", "raising:NOT_A_FACTORY", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: --extension raising:NOT_A_FACTORY: 'NOT_A_FACTORY' is not callable "
        "(int 42); an implementation is an extension factory, a function that takes the ExtensionAPI"
    ]


def test_rule_a_module_that_fails_to_import_names_its_exception(user_dir: Path) -> None:
    (user_dir / "bad_syntax.py").write_text("def extension(pi)\n    pass\n", encoding="utf-8")
    ran = harness_here("run", "--extension", "bad_syntax:extension", cwd=user_dir)
    assert ran.code == 2
    assert ran.err_lines == [
        "pi-continuity-harness run: --extension bad_syntax:extension: cannot import 'bad_syntax': "
        f"{user_dir / 'bad_syntax.py'}:1: expected ':'"
    ]


def test_rule_simulate_with_a_raising_factory_exits_2_and_writes_nothing(user_dir: Path) -> None:
    """Before: exit 0, every operation "Pi not running"."""
    ran = harness_here("simulate", str(EXAMPLE), "--extension", "raising:extension", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness simulate: --extension raising:extension: the implementation does not load: "
        'Failed to load extension "raising:extension": Failed to load extension: '
        "factory exploded while registering handlers"
    ]
    assert not (user_dir / "sim-out").exists()


def test_rule_target_pi_without_pi_installed_names_install_pi(user_dir: Path, tmp_path: Path) -> None:
    """No npm on PATH and an empty cache: one line naming ``install-pi``, before any scenario."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    cache = tmp_path / "empty-cache"
    ran = harness(
        "run",
        "--target",
        "pi",
        cwd=user_dir,
        env={"PATH": str(bin_dir), "PI_CONTINUITY_HARNESS_CACHE": str(cache)},
    )
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        f"pi-continuity-harness run: --target pi: real Pi 1.6.0 is not installed in {cache}; run "
        "`pi-continuity-harness install-pi` first (it needs npm, which is not on PATH: install Node.js first)"
    ]


@pytest.mark.parametrize("parallel", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_rule_a_work_directory_too_long_for_real_pi_is_one_line_before_any_scenario(
    user_dir: Path, parallel: list[str]
) -> None:
    """Before: the real-Pi target refused each scenario in turn (WorkdirError), one failure per
    scenario, for one mistake in ``--workdir``. The check needs no Pi: it comes first. With
    ``-n 2`` the check ran in each pytest-xdist worker, whose usage error crashed it
    (``INTERNALERROR``) and was then printed as "selects no scenario of the suite"."""
    workdir = user_dir / ("w" * (126 - len(f"{user_dir}/") - len("/test_singleflight") + 1))
    ran = harness(
        "run", "--target", "pi", "--workdir", str(workdir), "-k", "singleflight", *parallel, cwd=user_dir
    )  # fmt: skip
    assert (ran.code, ran.out) == (2, "")
    machine = workdir / "test_singleflight"
    assert ran.err_lines == [
        f"pi-continuity-harness run: --workdir {workdir}: a scenario would run in {machine} (127 "
        "characters); the real-Pi target lays Pi's machine out at a path of exactly 128 characters, "
        f"so a run directory may have at most 126: choose a work directory of at most {len(str(workdir)) - 1} "
        "characters"
    ]
    _only(user_dir, "raising.py", "my_ext.py")


def test_rule_a_work_directory_at_the_limit_is_not_refused(user_dir: Path, tmp_path: Path) -> None:
    """The twin: one character shorter and the check lets the run through (here to the next
    check, which names a Pi that is not installed in an empty cache)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    workdir = user_dir / ("w" * (126 - len(f"{user_dir}/") - len("/test_singleflight")))
    ran = harness(
        "run", "--target", "pi", "--workdir", str(workdir), "-k", "singleflight", cwd=user_dir,
        env={"PI_CONTINUITY_HARNESS_CACHE": str(tmp_path / "empty-cache"), "PATH": str(bin_dir)},
    )  # fmt: skip
    assert ran.code == 2 and "--workdir" not in ran.err, ran.err
    assert "is not installed" in ran.err


def test_rule_a_gherkin_syntax_error_names_the_file_and_line(user_dir: Path) -> None:
    """Before: the suite collapsed into one ``(collection) failed`` row."""
    features = user_dir / "features"
    features.mkdir()
    (features / "broken.feature").write_text(BROKEN_FEATURE, encoding="utf-8")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: features/broken.feature:4: Unexpected token found. Check Gherkin "
        "syntax near the reported error. (line: 'Whn the user runs \"/continuity checkpoint\"')"
    ]


UNDEFINED_STEPS = """Feature: a typo in a step
  Scenario: one step no definition matches
    Given the user has worked through 2 turns
    When the user run "/continuity checkpoint"
    Then the project settings file is byte-for-byte unchanged

  Scenario Outline: a placeholder filled in
    Given the user has worked through <n> turns
    Then teh agent is idle after <n>

    Examples:
      | n |
      | 1 |
"""


def test_rule_a_step_no_definition_matches_is_one_usage_error_naming_its_file_and_line(
    user_dir: Path,
) -> None:
    """Before: the scenario ran and *failed* (``StepDefinitionNotFoundError`` at that step),
    which reads as the implementation failing the feature; now nothing runs, nothing is
    written, and the message names every such step by file and line."""
    features = user_dir / "features"
    features.mkdir()
    (features / "typo.feature").write_text(UNDEFINED_STEPS, encoding="utf-8")
    workdir = user_dir / "out"
    ran = harness_here("run", "--features", "features", "--workdir", str(workdir), cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: a feature has steps that no step definition matches (a typo, "
        "or a conftest.py with your own steps missing beside it): features/typo.feature:4: When "
        "'the user run \"/continuity checkpoint\"' matches no step definition (scenario 'one step "
        "no definition matches'); features/typo.feature:9: Then 'teh agent is idle after 1' "
        "matches no step definition (scenario 'a placeholder filled in')"
    ]
    _only(user_dir, "features", "my_ext.py", "raising.py")


def test_rule_features_that_are_not_there_are_one_line(user_dir: Path) -> None:
    ran = harness_here("run", "--features", "nowhere", cwd=user_dir)
    assert (ran.code, ran.err_lines) == (
        2,
        ["pi-continuity-harness run: --features nowhere: no such file or directory"],
    )
    (user_dir / "empty").mkdir()
    ran = harness_here("run", "--features", "empty", cwd=user_dir)
    assert ran.err_lines == [
        "pi-continuity-harness run: --features empty: no .feature file in this directory"
    ]


def test_rule_report_at_a_file_is_one_line_exit_2(user_dir: Path) -> None:
    (user_dir / "afile").write_text("{}", encoding="utf-8")
    ran = harness_here("run", "--report", "afile", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        ["pi-continuity-harness run: --report afile: exists and is not a directory"],
    )


@pytest.mark.parametrize("text", ["", "# only a comment\n"], ids=["empty", "only-a-comment"])
def test_rule_a_feature_file_without_a_feature_is_one_line(user_dir: Path, text: str) -> None:
    """Before: a ``KeyError: 'feature'`` traceback from pytest-bdd's parser, exit 1."""
    features = user_dir / "features"
    features.mkdir()
    (features / "empty.feature").write_text(text, encoding="utf-8")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        [
            "pi-continuity-harness run: features/empty.feature: has no Feature (an empty file, or only comments)"
        ],
    )


def test_rule_workdir_at_a_file_is_one_line_exit_2(user_dir: Path) -> None:
    (user_dir / "afile").write_text("{}", encoding="utf-8")
    ran = harness_here("run", "--workdir", "afile", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        ["pi-continuity-harness run: --workdir afile: exists and is not a directory"],
    )
    assert (user_dir / "afile").read_text(encoding="utf-8") == "{}"


def test_rule_an_unwritable_json_is_one_line_exit_2(user_dir: Path) -> None:
    """/proc takes no new file, whoever asks (permission bits do not stop root)."""
    ran = harness_here("run", "--json", "/proc/harness-results.json", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert len(ran.err_lines) == 1
    assert ran.err_lines[0].startswith(
        "pi-continuity-harness run: --json /proc/harness-results.json: cannot write in /proc: "
    )


def test_rule_json_under_a_file_is_one_line_exit_2(user_dir: Path) -> None:
    (user_dir / "afile").write_text("{}", encoding="utf-8")
    ran = harness_here("run", "--json", "afile/results.json", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        ["pi-continuity-harness run: --json afile/results.json: afile is not a directory"],
    )


def test_rule_cucumber_into_a_missing_directory_writes_no_other_output(user_dir: Path) -> None:
    """Before: a traceback after the whole run, and --json, --junit, --report never written."""
    (user_dir / "out").mkdir()
    ran = harness_here(
        "run",
        "--json",
        "out/r.json",
        "--junit",
        "out/j.xml",
        "--report",
        "out/record",
        "--cucumber",
        "nodir/sub/c.json",
        cwd=user_dir,
    )
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        ["pi-continuity-harness run: --cucumber nodir/sub/c.json: no such directory: nodir/sub"],
    )
    assert list((user_dir / "out").iterdir()) == []
    assert not (user_dir / "nodir").exists()


def test_rule_a_directory_where_a_file_belongs_is_one_line_exit_2(user_dir: Path) -> None:
    ran = harness_here("compare", "--json", ".", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        ["pi-continuity-harness compare: --json .: is a directory"],
    )
    ran = harness_here("explore", "--json", ".", cwd=user_dir)
    assert (ran.code, ran.err_lines) == (2, ["pi-continuity-harness explore: --json .: is a directory"])


#: 9 lines of aliases standing for 9**9 (387 million) strings, below ``files.big.json.json``.
_ALIAS_BOMB = "\n".join(
    ["name: bomb", "files:", "  big.json:", "    json:", "      a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"      {n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "name: big\noperations:\n  - prompt: {chars: 100000000000}\n",
            "operations[0].prompt.chars: Input should be less than or equal to 10000000",
        ),
        (
            _ALIAS_BOMB,
            "files.big.json.json.g[3]: stands for more than 2,000,000 values once its YAML aliases are expanded",
        ),
    ],
    ids=["prompt-of-10-11-characters", "yaml-alias-bomb"],
)
def test_rule_a_scenario_that_would_exhaust_the_machine_is_one_error(
    user_dir: Path, text: str, error: str
) -> None:
    """Before: a MemoryError traceback (exit 1), and a run until killed that wrote a file of
    gigabytes into its directory."""
    (user_dir / "huge.yaml").write_text(text, encoding="utf-8")
    ran = harness("simulate", "huge.yaml", "--workdir", "out", cwd=user_dir)
    assert (ran.code, ran.out, ran.err_lines) == (
        2,
        "",
        [f"pi-continuity-harness simulate: huge.yaml: {error}"],
    )
    _only(user_dir, "huge.yaml", "my_ext.py", "raising.py")


GOOD_FEATURE = """Feature: my checkpoint
  Scenario: checkpoint writes a brief
    Given the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session
"""


def _uncollectable_conftest(features: Path) -> str:
    (features / "sub").mkdir()
    (features / "sub" / "b.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    (features / "sub" / "conftest.py").write_text(
        "\n\nraise RuntimeError('boom in conftest')\n", encoding="utf-8"
    )
    return "features/sub/conftest.py:3: RuntimeError: boom in conftest"


def _unimportable_test_module(features: Path) -> str:
    (features / "test_mine.py").write_text("import no_such_module_anywhere\n", encoding="utf-8")
    return "features/test_mine.py:1: ModuleNotFoundError: No module named 'no_such_module_anywhere'"


@pytest.mark.parametrize("parallel", [[], ["-n", "2"]], ids=["serial", "n2"])
@pytest.mark.parametrize(
    "make", [_uncollectable_conftest, _unimportable_test_module], ids=["conftest-raises", "test-module-fails"]
)
def test_rule_a_file_among_the_features_that_cannot_be_collected_is_one_usage_error(
    user_dir: Path, make: Callable[[Path], str], parallel: list[str]
) -> None:
    """Before: pytest stops such a session as INTERRUPTED, which ``run`` took for Ctrl-C: exit
    130, "interrupted", no file or reason, ``--json`` never written and an empty temporary
    directory left; under ``-n 2`` a failed ``(collection)`` row, exit 1."""
    features = user_dir / "features"
    features.mkdir()
    (features / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    problem = make(features)
    scratch = user_dir / "tmp"
    scratch.mkdir()
    ran = harness(
        "run", "--features", "features", "--json", "r.json", *parallel, cwd=user_dir, env={"TMPDIR": str(scratch)}
    )  # fmt: skip
    assert (ran.code, ran.out) == (2, ""), ran.out + ran.err
    assert ran.err_lines == [
        f"pi-continuity-harness run: a file of the features cannot be collected: {problem}"
    ]
    assert list(scratch.iterdir()) == []
    _only(user_dir, "features", "my_ext.py", "raising.py", "tmp")


def test_rule_a_link_loop_among_the_features_is_one_usage_error(user_dir: Path) -> None:
    """Before: pytest followed ``sub/up -> ..`` to its depth limit and ran the one scenario 41
    times, exit 0. The loop is refused, not walked once: a link back into the tree is a mistake."""
    features = user_dir / "features"
    (features / "sub").mkdir(parents=True)
    (features / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    (features / "sub" / "up").symlink_to("..")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        f"pi-continuity-harness run: features/sub/up: a link back to {features}, a directory it is "
        "in (a loop): pytest would collect its features again at every level"
    ]


def test_rule_a_feature_directory_reached_twice_through_a_link_is_one_usage_error(user_dir: Path) -> None:
    """Before: pytest collected ``a/`` and ``b -> a`` both, and each scenario ran twice."""
    features = user_dir / "features"
    (features / "a").mkdir(parents=True)
    (features / "a" / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    (features / "b").symlink_to("a")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.err_lines) == (
        2,
        [
            "pi-continuity-harness run: features/b: the same directory as features/a (through a "
            "link): its scenarios would run twice"
        ],
    )


def test_rule_a_gherkin_error_behind_a_linked_directory_is_found_before_pytest(user_dir: Path) -> None:
    """Before: the feature check searched with ``rglob``, which does not enter linked
    directories while pytest does, so the error reached pytest (exit 130, "interrupted")."""
    features = user_dir / "features"
    features.mkdir()
    (features / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    elsewhere = user_dir / "shared"
    elsewhere.mkdir()
    (elsewhere / "broken.feature").write_text(BROKEN_FEATURE, encoding="utf-8")
    (features / "shared").symlink_to(elsewhere)
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: features/shared/broken.feature:4: Unexpected token found. Check "
        "Gherkin syntax near the reported error. (line: 'Whn the user runs \"/continuity checkpoint\"')"
    ]


SAME_NAME_IN_TWO_RULES = """Feature: two rules
  Rule: the first
    Scenario: same name
      Given the user has worked through 2 turns
      Then the agent is idle

  Rule: the second
    Scenario: same name
      Given the user has worked through 2 turns
      When the user runs "/continuity checkpoint"
      Then exactly one pending Continuity Brief exists for this session
"""

SAME_NAME_TWO_OUTLINES = """Feature: two outlines
  Scenario Outline: same name
    Given the user has worked through <n> turns
    Then the agent is idle

    Examples:
      | n |
      | 1 |

  Scenario Outline: same name
    Given the user has worked through <n> turns
    When the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session

    Examples:
      | n |
      | 2 |
"""


@pytest.mark.parametrize(
    ("text", "lines"),
    [(SAME_NAME_IN_TWO_RULES, (8, 3)), (SAME_NAME_TWO_OUTLINES, (10, 2))],
    ids=["two-rules", "two-outlines"],
)
def test_rule_two_scenarios_of_one_name_are_one_usage_error(
    user_dir: Path, text: str, lines: tuple[int, int]
) -> None:
    """Before: pytest-bdd keeps one scenario per name, so only the last ran: "1 passed", exit 0,
    and the first (which the null implementation, like any, would have had to face) was hidden."""
    features = user_dir / "features"
    features.mkdir()
    (features / "same.feature").write_text(text, encoding="utf-8")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        f"pi-continuity-harness run: features/same.feature:{lines[0]}: a second scenario named 'same "
        f"name' (the first is at line {lines[1]}): pytest-bdd keeps one scenario per name, so only "
        "the last would run; name each scenario differently"
    ]


@pytest.mark.parametrize(
    ("scenario", "problem"),
    [
        ("  Scenario: no steps\n", "scenario 'no steps' has no steps: it would pass for any implementation"),
        (
            "  Scenario: nothing checked\n    Given the user has worked through 2 turns\n"
            '    When the user runs "/continuity checkpoint"\n',
            "scenario 'nothing checked' has no Then step: it checks nothing, so it would pass for "
            "any implementation",
        ),
        (
            "  Scenario:\n    Given the user has worked through 2 turns\n    Then the agent is idle\n",
            "a scenario without a name: the results name each scenario",
        ),
    ],
    ids=["no-steps", "no-then", "no-name"],
)
def test_rule_a_scenario_that_checks_nothing_is_one_usage_error(
    user_dir: Path, scenario: str, problem: str
) -> None:
    """Before: a scenario without steps (or without a Then step) passed for the null
    implementation, exit 0 under --null-check; one without a name was printed as ``test_``."""
    features = user_dir / "features"
    features.mkdir()
    (features / "empty.feature").write_text(f"Feature: empty\n{scenario}", encoding="utf-8")
    ran = harness_here("run", "--features", "features", "--extension", "null", "--null-check", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [f"pi-continuity-harness run: features/empty.feature:2: {problem}"]


def test_rule_a_feature_file_with_a_utf8_byte_order_mark_is_read_as_cucumber_reads_it(user_dir: Path) -> None:
    """Before: refused as "Unexpected token ... (line: 'Feature: ...')", which did not name the
    mark an editor had written; Cucumber skips it, and so does the harness now."""
    features = user_dir / "features"
    features.mkdir()
    (features / "bom.feature").write_bytes(b"\xef\xbb\xbf" + GOOD_FEATURE.encode("utf-8"))
    ran = harness("run", "--features", "features", "--quiet", cwd=user_dir)
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed, 0 failed, 0 skipped" in " ".join(ran.out.split())


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("skip", "the scenario would never run, and the run pass"),
        ("xfail", "a failing scenario would count as skipped, and the run pass"),
        ("parametrize", "a tag cannot give it its arguments"),
    ],
)
def test_rule_pytests_own_marks_are_refused_as_tags_of_your_features(
    user_dir: Path, tag: str, why: str
) -> None:
    """Before: ``@skip`` and ``@xfail`` made the null implementation's failing scenario count as
    skipped (exit 0, ``--null-check`` too); ``@parametrize`` broke collection (exit 130)."""
    features = user_dir / "features"
    features.mkdir()
    (features / "marked.feature").write_text(f"@{tag}\n{GOOD_FEATURE}", encoding="utf-8")
    ran = harness_here("run", "--features", "features", "--extension", "null", "--null-check", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        f"pi-continuity-harness run: features/marked.feature:3: @{tag}: pytest's own mark, refused as "
        f"a tag ({why}); choose what runs with --tags or -k"
    ]


def test_rule_your_features_check_the_implementations_system_whatever_their_directory_is_named(
    user_dir: Path,
) -> None:
    """Before: a feature was given a system by a substring of its absolute path, so features of
    your own in a directory named ``pi_blitz_handoff/`` were blitz's and deselected for the
    reference: exit 2, "no scenario ... runs for this implementation"."""
    directory = "pi_blitz_handoff"
    features = user_dir / directory
    features.mkdir()
    (features / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    ran = harness("run", "--features", directory, "--quiet", "--json", "r.json", cwd=user_dir)
    assert ran.code == 0, ran.out + ran.err
    (result,) = json.loads((user_dir / "r.json").read_text(encoding="utf-8"))["results"]
    assert (result["status"], result["system"]) == ("passed", "pi-session-continuity")


_THEN = "    Then exactly one pending Continuity Brief exists for this session\n"
_SETTINGS = "    Given the project settings file holds unrelated settings:\n"


@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        (
            _SETTINGS,
            "Given 'the project settings file holds unrelated settings:': its step definition needs a "
            'docstring (a """ block under the step), and the step has none',
        ),
        (
            f'{_SETTINGS}      """\n      {{"theme": \n      """\n',
            "Given 'the project settings file holds unrelated settings:': its docstring is not JSON: "
            "Expecting value: line 1 column 11 (char 10)",
        ),
        (
            '    Given the scenario file "missing.yaml"\n    When its operations run\n',
            "Given 'the scenario file \"missing.yaml\"': {features}/missing.yaml: no such file",
        ),
        (
            '    Given the user has worked through 2 turns\n      """\n      ignored\n      """\n',
            'Given \'the user has worked through 2 turns\': the step has a docstring (a """ block under '
            "the step), which its step definition does not take (it would be ignored)",
        ),
    ],
    ids=["docstring-missing", "docstring-not-json", "scenario-file-missing", "docstring-ignored"],
)
def test_rule_a_step_its_definition_cannot_take_as_written_is_one_usage_error(
    user_dir: Path, steps: str, problem: str
) -> None:
    """Before: found only when the step ran, each failed the scenario as if the implementation
    had (``FixtureLookupError: ('docstring', ...)``, ``JSONDecodeError``, a missing scenario
    file), exit 1; a docstring given to a step that takes none was silently ignored."""
    features = user_dir / "features"
    features.mkdir()
    (features / "args.feature").write_text(f"Feature: args\n  Scenario: s\n{steps}{_THEN}", encoding="utf-8")
    ran = harness_here("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: a feature has steps that cannot run as written: "
        f"features/args.feature:3: {problem.format(features=features)} (scenario 's')"
    ]


TWO_OF_MY_STEPS = """from pytest_bdd import parsers, then

from pi_continuity_harness.features.world import World


@then("exactly one pending Continuity Brief exists for this session")
def _mine(world: World) -> None:
    raise AssertionError("the first definition")


@then(parsers.re(r"exactly one pending .* exists for this session"))
def _also_mine(world: World) -> None:
    pass
"""


def test_rule_a_step_two_of_your_step_definitions_match_is_one_usage_error(user_dir: Path) -> None:
    """Before: pytest-bdd used the definition it registered last (here the one that checks
    nothing): "1 passed", exit 0. Both shadow a stock step, which is allowed; two of yours
    equally near the feature are not."""
    features = user_dir / "features"
    features.mkdir()
    (features / "a.feature").write_text(GOOD_FEATURE, encoding="utf-8")
    (features / "conftest.py").write_text(TWO_OF_MY_STEPS, encoding="utf-8")
    ran = harness("run", "--features", "features", cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        "pi-continuity-harness run: a feature has steps that cannot run as written: features/a.feature:5: "
        "Then 'exactly one pending Continuity Brief exists for this session': matches 2 of your step "
        "definitions, equally near it: features/conftest.py:6 (_mine), features/conftest.py:11 "
        "(_also_mine) (pytest-bdd would use the last it registered) (scenario 'checkpoint writes a brief')"
    ]


@pytest.mark.parametrize(
    ("extension", "system", "declared", "reference"),
    [
        ([], "pi-blitz-handoff", "reference implements pi-session-continuity", "blitz"),
        (["--extension", "blitz"], "pi-session-continuity", "blitz implements pi-blitz-handoff", "reference"),
    ],
)
def test_rule_a_system_the_implementation_does_not_declare_is_one_line_exit_2(
    user_dir: Path, extension: list[str], system: str, declared: str, reference: str
) -> None:
    """Before: ``run --system pi-blitz-handoff`` ran the handoff suite against the default
    ``reference`` (Session Continuity): every handoff scenario failed, a verdict about nothing."""
    ran = harness_here("run", *extension, "--system", system, cwd=user_dir)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err_lines == [
        f"pi-continuity-harness run: --system {system}: --extension {declared} (its factory "
        f"declares it); leave --system out, or name an implementation of {system} "
        f"(its reference: --extension {reference})"
    ]
    _only(user_dir, "raising.py", "my_ext.py")


def test_rule_a_system_is_taken_for_a_factory_that_declares_none_or_the_same(user_dir: Path) -> None:
    """``--system`` still names the system of a factory that cannot say it (``my_ext`` wraps the
    reference and declares nothing), and may repeat what one declares."""
    ran = harness(
        "run", "--extension", "my_ext:extension", "--system", "pi-session-continuity", "-k",
        "the threshold is strict", cwd=user_dir,
    )  # fmt: skip
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed, 0 failed, 0 skipped" in ran.out
    ran = harness(
        "run", "--extension", "blitz", "--system", "pi-blitz-handoff", "--rules", "H79", cwd=user_dir
    )
    assert ran.code == 0, ran.out + ran.err
    assert "1 passed, 0 failed, 0 skipped" in ran.out
