"""How a whole-suite run collects (issue 16: collecting was 2.5 of the 3.5 CPU seconds a run of
one blitz scenario took, once per mutant in the tests).

Each feature of the stock suite is parsed once, by its ``test_<system>.py`` module, not a
second time as a feature file whose scenarios are then dropped as duplicates; and the other
system's features are not collected at all.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.features import SUITE_DIR, collect, pytest_plugin
from pi_continuity_harness.features.suite import run_suite


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The feature files parsed as feature-file modules, and those whose scenarios were collected."""
    seen: dict[str, list[str]] = {"feature_files": [], "collected": []}
    getobj = collect.FeatureFile._getobj
    system_of = pytest_plugin._system_of

    def spy_getobj(self: collect.FeatureFile) -> Any:
        seen["feature_files"].append(str(self.path))
        return getobj(self)

    def spy_system_of(path: str) -> str:
        seen["collected"].append(path)
        return system_of(path)

    monkeypatch.setattr(collect.FeatureFile, "_getobj", spy_getobj)
    monkeypatch.setattr(pytest_plugin, "_system_of", spy_system_of)
    return seen


@pytest.mark.parametrize(
    ("extension", "tags", "own", "other"),
    [
        ("blitz", "rule-H10", "pi_blitz_handoff", "pi_session_continuity"),
        ("reference", "rule-P2", "pi_session_continuity", "pi_blitz_handoff"),
    ],
)
def test_a_whole_suite_run_parses_each_feature_once_and_only_its_own_systems(
    seen: dict[str, list[str]], extension: str, tags: str, own: str, other: str
) -> None:
    run = run_suite(target="sim", extension=extension, tags=tags)
    assert run.ok and run.results
    assert seen["feature_files"] == []
    assert seen["collected"] and all(f"/{own}/" in path for path in seen["collected"])
    assert not any(f"/{other}/" in path for path in seen["collected"])
    assert all(r.nodeid.startswith(f"test_{own}.py::") for r in run.results)


def test_a_feature_file_of_the_suite_given_alone_is_still_collected(seen: dict[str, list[str]]) -> None:
    feature = next((SUITE_DIR / "pi_blitz_handoff").rglob("*.feature"))
    run = run_suite(target="sim", extension="blitz", features=feature)
    assert run.results and seen["feature_files"] == [str(Path(feature).resolve())]


_PLUGINS_SEEN = """
SEEN = {}


def pytest_configure(config):
    for name in ("syrupy", "hypothesispytest", "pytest-bdd"):
        SEEN[name] = config.pluginmanager.hasplugin(name)
"""


def test_the_stock_suite_runs_without_the_plugins_it_does_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of the stock suite leaves out syrupy's and Hypothesis's plug-ins (hooks on every
    test it never uses); a run of feature files of your own keeps them for its conftest.py."""
    (tmp_path / "plugins_seen.py").write_text(_PLUGINS_SEEN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = importlib.import_module("plugins_seen").SEEN
    run = run_suite(
        target="sim", keyword="archive", workdir=tmp_path / "a", extra_args=["-p", "plugins_seen"]
    )
    assert run.results and all(r.status == "passed" for r in run.results)
    assert seen == {"syrupy": False, "hypothesispytest": False, "pytest-bdd": True}
    seen.clear()
    features = SUITE_DIR / "pi_session_continuity" / "smoke"
    run = run_suite(
        target="sim", features=features, workdir=tmp_path / "b", extra_args=["-p", "plugins_seen"]
    )
    assert run.results
    assert seen == {"syrupy": True, "hypothesispytest": True, "pytest-bdd": True}


_BUILTINS = ("logging", "warnings", "unittest", "tmpdir", "setuponly", "setupplan", "subtests", "doctest")


def test_the_stock_suite_runs_without_pytests_own_plugins_it_does_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no argument but the harness's own, a run of the stock suite leaves out pytest's own
    plug-ins it never uses (hooks on every test); any other argument (one of theirs, a plug-in of
    yours) or ``PYTEST_ADDOPTS`` keeps them, as does a run of feature files of your own."""
    seen: list[dict[str, bool]] = []
    main = pytest.main

    class _Seen:
        def pytest_configure(self, config: pytest.Config) -> None:
            seen.append({name: config.pluginmanager.hasplugin(name) for name in (*_BUILTINS, "pytest-bdd")})

    def spy_main(args: list[str], plugins: list[object]) -> Any:
        return main(args, plugins=[*plugins, _Seen()])

    monkeypatch.setattr(pytest, "main", spy_main)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    own = ["--observation-records", "failed", "--budget-ops=100000", "--system", "pi-session-continuity"]
    for extra_args in (None, own):
        run = run_suite(target="sim", keyword="archive", workdir=tmp_path / "a", extra_args=extra_args)
        assert run.results and all(r.status == "passed" for r in run.results)
    kept = [["--log-level=INFO"], [*own, "-o", "junit_logging=all"]]
    for extra_args in kept:
        run = run_suite(target="sim", keyword="archive", workdir=tmp_path / "b", extra_args=extra_args)
        assert run.results and all(r.status == "passed" for r in run.results)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:randomly")
    assert run_suite(target="sim", keyword="archive", workdir=tmp_path / "c").results
    monkeypatch.delenv("PYTEST_ADDOPTS")
    features = SUITE_DIR / "pi_session_continuity" / "smoke"
    assert run_suite(target="sim", features=features, workdir=tmp_path / "d").results
    left_out = {name: False for name in _BUILTINS} | {"pytest-bdd": True}
    assert seen[:2] == [left_out, left_out]
    assert all(all(found.values()) for found in seen[2:]) and len(seen) == 6
