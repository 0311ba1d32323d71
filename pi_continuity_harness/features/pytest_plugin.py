"""pytest integration of the conformance suite: options, the ``world`` fixture, tags, feature
files, setup checks, run directories.

Installed as a pytest plugin (entry point ``pytest11``, :mod:`.plugin`: these hooks plus the step
library), so plain pytest runs the suite, or feature files of your own, in any project::

    pytest "$(python -c 'import pi_continuity_harness.features as f; print(f.SUITE_DIR)')" --target sim
    pytest my_features/ --target sim --extension my_pkg.ext:extension

Options: ``--target`` (``sim`` or ``pi``; giving it also makes pytest collect ``.feature`` files
directly, see :mod:`.collect`), ``--extension`` (``module:factory``, resolved from the current
directory as ``python -m`` does, a registered implementation name, or a TypeScript file for
``--target pi``), ``--seed``, ``--system``, ``--pi-version`` (the real Pi release
``--target pi`` drives; default the pinned 1.6.0), ``--harness-workdir`` (where each scenario's machine is
laid out; held with the run-directory lock while pytest runs).

Before the first scenario the implementation is checked once (:mod:`.preflight`): a mistake is
one ``pytest.UsageError``, not a failure per scenario. Without ``--harness-workdir`` the machines
go to a temporary directory ``pi-continuity-harness-*`` (for the simulator on a RAM disk unless
the user chose a place: :mod:`.scratch`), removed after a passing session and kept,
and named in the summary, after a failing one; a failing scenario's report names its machine.

Tags: ``@needs-<capability>`` skips a scenario (or an Examples block) on a target without
that capability, with the reason; ``@smoke``, ``@install``, ``@rules``, ``@failures`` group
features; ``@rule-<id>`` says the scenario proves that rule of the system's catalogue
(:mod:`pi_continuity_harness.rules`) and ``@host`` that it tests Pi's own behaviour, holding for
any extension (both are registered as markers; the Pi version matrix keeps ``@host`` rows
apart). Each test records its feature (the named
assertion), scenario, system, tags and the artifacts it produced as ``user_properties``, which
JUnit XML and the run report carry.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.reporting import ReportContext, test_report_context_registry

from pi_continuity_harness import targets
from pi_continuity_harness.features import collector_tuning, fixture_argnames, preflight, step_lookup
from pi_continuity_harness.features.collect import (
    BATCH_PARAM,
    FeatureFile,
    add_skipped_to_cucumber,
    drop_duplicates,
    misused_steps,
    scenario_template,
    select_by_name,
    undefined_steps,
)
from pi_continuity_harness.features.scratch import make_temporary_directory, scratch_directory
from pi_continuity_harness.features.world import World
from pi_continuity_harness.rules import HOST_TAG, RULE_TAG_PREFIX, load_catalogue, rule_tag
from pi_continuity_harness.rules import systems as rule_systems
from pi_continuity_harness.scenario import implementations as registry
from pi_continuity_harness.scenario import option_values
from pi_continuity_harness.scenario.budget import BudgetOverride
from pi_continuity_harness.scenario.implementations import (
    SESSION_CONTINUITY,
    SYSTEMS,
    ImplementationError,
    search_current_directory,
)
from pi_continuity_harness.scenario.model_script import RequestKind
from pi_continuity_harness.scenario.owned_dirs import remove_owned, sweep_message, sweep_orphans
from pi_continuity_harness.scenario.run_lock import RunDirectoryError, hold_run_directory
from pi_continuity_harness.targets.comparison import normalise_observation, write_observation_record
from pi_continuity_harness.targets.target import CAPABILITIES, Target

__all__ = [
    "BATCH_PARAM",
    "DEFAULT_SYSTEM",
    "KNOWN_TAGS",
    "SYSTEM_DIRS",
    "TEMP_PREFIX",
    "implementation_system",
    "item_extension",
    "machine_path",
    "make_target",
    "observation_path",
    "scenario_tags",
    "target_capabilities",
    "target_name",
]

KNOWN_TAGS = ("smoke", "install", "rules", "failures", "blitz", "host", "differential")
_REQUEST_KINDS: tuple[RequestKind, ...] = ("agent", "summary", "extension")
#: Features directory -> the system whose features it holds.
SYSTEM_DIRS = {system.features: system.name for system in SYSTEMS.values()}
#: The system of an implementation that declares none (and of a TypeScript file without ``--system``).
DEFAULT_SYSTEM = SESSION_CONTINUITY.name
#: Temporary run directories are ``pi-continuity-harness-*`` (what a leftover check looks for).
TEMP_PREFIX = "pi-continuity-harness-"

# What the plugin keeps for a session, in pytest's typed stash.
_WORKDIR = pytest.StashKey[Path]()
_TEMPORARY = pytest.StashKey[bool]()
_PASSED = pytest.StashKey[bool]()
_LOCKS = pytest.StashKey[contextlib.ExitStack]()
_CAPABILITIES = pytest.StashKey[frozenset[str]]()
#: The session memoised pytest-bdd's step lookup (:mod:`.step_lookup`) and pytest's
#: ``getfuncargnames`` (:mod:`.fixture_argnames`).
_STEP_LOOKUP = pytest.StashKey[bool]()
_SYSTEM = pytest.StashKey[str]()
#: The session's budget override (``_budget``): its options do not change while it runs.
_BUDGET = pytest.StashKey[BudgetOverride | None]()
#: Whether the scenario's call phase ran clean (passed or skipped); unset when it never ran.
_CALL_CLEAN = pytest.StashKey[bool]()
#: What puts the garbage collector back as it was before the scenarios (``collector_tuning``).
_RESTORE_COLLECTOR = pytest.StashKey[Callable[[], None]]()
#: What puts the collector's thresholds back as they were before the session was configured.
_RESTORE_THRESHOLDS = pytest.StashKey[Callable[[], None]]()
#: What writes the ``trace.jsonl`` and ``requests/*.json`` of passing scenarios whose record was not wanted
#: (``--observation-records failed``), if the session fails (:func:`pytest_sessionfinish`).
_DEFERRED = pytest.StashKey[list[Callable[[], None]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pi-continuity-harness", "Pi Continuity Harness conformance suite")
    group.addoption(
        "--target",
        action="store",
        default=None,
        choices=("sim", "pi"),
        help="sim (default) or pi; given, it also collects .feature files as tests",
    )
    group.addoption(
        "--extension",
        action="store",
        default="reference",
        help="implementation under test: module:factory, a registered name, or path/to/ext.ts (pi only)",
    )
    group.addoption(
        "--seed", action="store", type=option_values.seed, default=0, help="seed of every simulated run"
    )
    group.addoption(
        "--pi-version",
        action="store",
        default=None,
        help="the real Pi release --target pi drives (default: the pinned one; pi only)",
    )
    group.addoption(
        "--system",
        action="store",
        default=None,
        choices=sorted(set(SYSTEM_DIRS.values())),
        help="system the implementation implements (default: what its factory declares, "
        f"else {DEFAULT_SYSTEM})",
    )
    group.addoption(
        "--budget-ops",
        action="store",
        type=option_values.positive_whole,
        default=None,
        help="simulator: host operations a scenario may use (default: the scenario's)",
    )
    group.addoption(
        "--budget-virtual-seconds",
        action="store",
        type=option_values.positive_seconds,
        default=None,
        help="simulator: virtual seconds a scenario may last (default: the scenario's)",
    )
    group.addoption(
        "--budget-wall-seconds",
        action="store",
        type=option_values.positive_seconds,
        default=None,
        help="real Pi: wall-clock seconds a scenario may last (default: the scenario's)",
    )
    group.addoption(
        "--observation-records",
        action="store",
        default=None,
        choices=("all", "failed"),
        help="write each scenario's observation.json (all: compare and the HTML report read them; "
        "the default with --harness-workdir or --target pi), or only a failed scenario's (a "
        "temporary run removed when it passes; the simulator's default without --harness-workdir; "
        "a passing scenario's trace.jsonl and requests/*.json are then written only if the session "
        "fails)",
    )
    group.addoption(
        "--harness-workdir",
        action="store",
        default=None,
        help="directory for each scenario's machine (default: a temporary directory)",
    )


def target_name(config: pytest.Config) -> targets.TargetName:
    """The target of the session: ``--target``, else the simulator."""
    return "pi" if config.getoption("--target") == "pi" else "sim"


def _active(config: pytest.Config) -> bool:
    """The plugin acts beyond fixtures and options only when asked: ``--target`` or
    ``--harness-workdir`` given (so another project's own pytest run is left as it was)."""
    return config.getoption("--target") is not None or config.getoption("--harness-workdir") is not None


#: Where a report carries pytest-bdd's scenario context from an xdist worker to the controller.
_BDD_CONTEXT = "pch_bdd_context"


@pytest.hookimpl(hookwrapper=True)
def pytest_report_to_serializable(report: Any) -> Iterator[None]:
    """On an xdist worker (``run -n N``): send pytest-bdd's record of the scenario (its steps,
    their outcomes) with the report. pytest-bdd keeps it in a registry keyed by the report
    object, which does not cross processes, so the controller's Cucumber JSON, validation
    record and step lists would lose it."""
    outcome: Any = yield
    data = outcome.get_result()
    context = test_report_context_registry.get(report)
    if isinstance(data, dict) and context is not None:
        data[_BDD_CONTEXT] = {"scenario": context.scenario, "name": context.name}


@pytest.hookimpl(hookwrapper=True)
def pytest_report_from_serializable(data: Any) -> Iterator[None]:
    """On the controller: put the worker's scenario record back where pytest-bdd looks."""
    outcome: Any = yield
    report = outcome.get_result()
    context = data.get(_BDD_CONTEXT) if isinstance(data, dict) else None
    if isinstance(report, pytest.TestReport) and context is not None:
        test_report_context_registry[report] = ReportContext(
            scenario=context["scenario"], name=context["name"]
        )


def pytest_configure(config: pytest.Config) -> None:
    for tag in KNOWN_TAGS:
        config.addinivalue_line("markers", f"{tag}: conformance feature group")
    config.addinivalue_line(
        "markers", f"{HOST_TAG}: tests Pi's own behaviour; holds for any extension, so it proves no rule"
    )
    for system in rule_systems():
        for rule in load_catalogue(system).rules:
            config.addinivalue_line("markers", f"{rule_tag(rule.id)}: proves rule {rule.id} ({rule.section})")
    for capability, meaning in CAPABILITIES.items():
        config.addinivalue_line("markers", f"needs-{capability}: runs only on a target that can: {meaning}")
    if not _active(config):
        return
    # The session's objects are made from here on: collected less often (``collector_tuning``).
    config.stash[_RESTORE_THRESHOLDS] = collector_tuning.collect_less_often()
    step_lookup.install()
    fixture_argnames.install()
    config.stash[_STEP_LOOKUP] = True
    search_current_directory(str(config.invocation_params.dir))
    if not hasattr(config, "workerinput"):
        _sweep_orphans()
    root = config.getoption("--harness-workdir")
    if root and hasattr(config, "workerinput"):
        # A pytest-xdist worker (``run -n N``): the controller holds the run directory for the
        # whole session, and the workers are its own; each lays its scenarios' machines there.
        config.stash[_WORKDIR] = Path(root).resolve()
    elif root:
        locks = contextlib.ExitStack()
        try:
            config.stash[_WORKDIR] = locks.enter_context(hold_run_directory(Path(root)))
        except RunDirectoryError as error:
            raise pytest.UsageError(f"--harness-workdir {root}: {error}") from None
        config.stash[_LOCKS] = locks


def _sweep_orphans() -> None:
    """Plain ``pytest`` over the features: the temporary directories a harness process killed
    by SIGKILL left go first, as for every command (``scenario/owned_dirs.py``)."""
    removed = sweep_orphans()
    if removed:
        print(sweep_message(removed), file=sys.stderr)


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in (_RESTORE_COLLECTOR, _RESTORE_THRESHOLDS):  # in the order they were tuned, backwards
        restore = config.stash.get(key, None)
        if restore is not None:
            restore()
    if config.stash.get(_STEP_LOOKUP, False):
        step_lookup.uninstall()
        fixture_argnames.uninstall()
    locks = config.stash.get(_LOCKS, None)
    if locks is not None:
        locks.close()
    if config.stash.get(_TEMPORARY, False) and config.stash.get(_PASSED, False):
        remove_owned(config.stash[_WORKDIR])


def _workdir_root(config: pytest.Config) -> Path:
    """Where the scenarios' machines go: ``--harness-workdir``, else a temporary directory
    created on first use (removed after a passing session, kept after a failing one)."""
    if _WORKDIR not in config.stash:
        root = config.getoption("--harness-workdir")
        if root:
            config.stash[_WORKDIR] = Path(root).resolve()
        else:
            config.stash[_WORKDIR] = make_temporary_directory(TEMP_PREFIX, target_name(config))
            config.stash[_TEMPORARY] = True
    path = config.stash[_WORKDIR]
    # Asked for every scenario (its machine's path, its observation record): a ``stat`` finds
    # the directory there, where ``mkdir`` refused to make it again (an ``OSError`` raised and
    # caught, then the same ``stat``). Not there (removed meanwhile), or not a directory: made,
    # or refused, by ``mkdir`` as before.
    if not os.path.isdir(path):
        path.mkdir(parents=True, exist_ok=True)
    return path


def _planned_workdir_root(config: pytest.Config) -> Path:
    """Where :func:`_workdir_root` puts the machines, without creating anything (a setup check
    that fails must leave nothing behind): a temporary directory not yet made is named by its
    prefix and eight placeholder characters, as long as the one ``mkdtemp`` will make."""
    if _WORKDIR in config.stash:
        return config.stash[_WORKDIR]
    root = config.getoption("--harness-workdir")
    if root:
        return Path(root).resolve()
    scratch = scratch_directory() if target_name(config) == "sim" else None
    return Path(scratch or tempfile.gettempdir()).resolve() / f"{TEMP_PREFIX}XXXXXXXX"


def machine_path(config: pytest.Config, test_name: str) -> Path:
    """The directory of the machine of test ``test_name`` (the last part of its node id)."""
    return _workdir_root(config) / _slug(test_name)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A ``.feature`` file is a test module of its scenarios (when ``--target`` is given).

    A feature of the stock suite is left to its ``test_<system>.py`` module (``scenarios()``)
    when that module is collected too: :func:`drop_duplicates` would drop the copy after parsing
    it, and parsing every feature twice was half the collection of a whole-suite run."""
    config = parent.config
    if file_path.suffix != ".feature" or config.getoption("--target") is None:
        return None
    if _stock_system_dir(file_path) is not None and _suite_collected_whole(config):
        return None
    collector: FeatureFile = FeatureFile.from_parent(parent, path=file_path)
    return collector


_SUITE_DIR = Path(__file__).resolve().parent
_WHOLE_SUITE = pytest.StashKey[bool]()


def _stock_system_dir(path: Path) -> str | None:
    """The stock suite's features directory ``path`` is (or is under), else None."""
    try:
        relative = path.resolve().relative_to(_SUITE_DIR)
    except ValueError:
        return None
    head = relative.parts[0] if relative.parts else ""
    return head if head in SYSTEM_DIRS else None


def _suite_collected_whole(config: pytest.Config) -> bool:
    """Whether a path given to pytest is the stock suite's directory (or holds it), so its
    ``test_<system>.py`` modules are collected."""
    if _WHOLE_SUITE not in config.stash:
        given = [Path(str(arg).split("::", 1)[0]).resolve() for arg in config.args]
        config.stash[_WHOLE_SUITE] = any(p == _SUITE_DIR or p in _SUITE_DIR.parents for p in given)
    return config.stash[_WHOLE_SUITE]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Another system's part of the stock suite is not collected at all when the whole suite
    runs (``pytest_collection_modifyitems`` deselected it after collection before: a handoff
    implementation's run parsed every continuity feature for nothing)."""
    if config.getoption("--target") is None or not _suite_collected_whole(config):
        return None
    name = collection_path.name
    directory = (
        name.removeprefix("test_").removesuffix(".py") if collection_path.parent == _SUITE_DIR else None
    )
    if directory is None or directory not in SYSTEM_DIRS:
        return None
    if not (collection_path.is_dir() or name == f"test_{directory}.py"):
        return None
    return SYSTEM_DIRS[directory] != implementation_system(config) or None


def item_extension(item: pytest.Item) -> str:
    """The implementation ``item`` runs against: its own in a batch run (:data:`BATCH_PARAM`),
    else ``--extension``."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and BATCH_PARAM in callspec.params:
        return str(callspec.params[BATCH_PARAM])
    return str(item.config.getoption("--extension"))


def make_target(config: pytest.Config, slug: str, extension: str | None = None) -> Target:
    """A fresh target for one scenario, laid out under the run's work directory, for
    ``extension`` (default ``--extension``)."""
    return _make_target_in(config, _workdir_root(config) / slug, extension)


def _make_target_in(config: pytest.Config, workdir: Path, extension: str | None = None) -> Target:
    """:func:`make_target` in ``workdir``, a directory under the run's work directory."""
    name = target_name(config)
    return targets.make_target(
        name,
        extension if extension is not None else config.getoption("--extension"),
        workdir,
        seed=config.getoption("--seed"),
        system=implementation_system(config),
        budget=_budget(config),
        pi_version=config.getoption("--pi-version") if name == "pi" else None,
    )


def _budget(config: pytest.Config) -> BudgetOverride | None:
    """``--budget-ops``, ``--budget-virtual-seconds``, ``--budget-wall-seconds`` (None: none given),
    made once per session: validating the override and asking whether it is empty was 15 us of
    every scenario's target (issue 16); it is frozen, so every target may hold the one."""
    if _BUDGET not in config.stash:
        override = BudgetOverride(
            operations=config.getoption("--budget-ops"),
            virtual_seconds=config.getoption("--budget-virtual-seconds"),
            wall_seconds=config.getoption("--budget-wall-seconds"),
        )
        config.stash[_BUDGET] = None if override.empty else override
    return config.stash[_BUDGET]


def make_named_target(
    config: pytest.Config, name: str, workdir: Path, extension: str | None = None
) -> Target:
    """A fresh target of either kind (``sim``, ``pi``) in ``workdir``, for the implementation
    under test (the steps that play one scenario file on both targets)."""
    kind: targets.TargetName = "pi" if name == "pi" else "sim"
    return targets.make_target(
        kind,
        extension if extension is not None else config.getoption("--extension"),
        workdir,
        seed=config.getoption("--seed"),
        system=implementation_system(config),
        budget=_budget(config),
    )


def target_capabilities(config: pytest.Config) -> frozenset[str]:
    if _CAPABILITIES not in config.stash:
        config.stash[_CAPABILITIES] = make_target(config, "capability-probe").capabilities()
    return config.stash[_CAPABILITIES]


def implementation_system(config: pytest.Config) -> str:
    """The system of the implementation under test: ``--system``, else what its factory declares
    (``scenario.implementations``, the registry every caller asks). A TypeScript file cannot
    declare one: it is :data:`DEFAULT_SYSTEM` unless ``--system`` names another."""
    chosen = config.getoption("--system")
    if chosen:
        return str(chosen)
    if _SYSTEM not in config.stash:
        extension = str(config.getoption("--extension"))
        system = DEFAULT_SYSTEM
        if not extension.endswith(".ts"):
            try:
                system = registry.implementation_system(extension).name
            except ImplementationError:
                system = DEFAULT_SYSTEM  # the run reports the unloadable implementation itself
        config.stash[_SYSTEM] = system
    return config.stash[_SYSTEM]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Name every scenario (skipped ones too), leave out another system's features and
    scenarios collected twice, let ``-k`` take a printed name, and skip what the target cannot
    run. First of the collection hooks, so ``-k`` by name is settled before pytest's ``-k``.

    Features of another system are *deselected*, not skipped: a handoff implementation is not
    expected to pass the continuity suite, so those scenarios are not results at all.
    """
    drop_duplicates(items)
    select_by_name(config, items)
    system_under_test: str | None = None
    kept: list[pytest.Item] = []
    other_system: list[pytest.Item] = []
    for item in items:
        template = scenario_template(item)
        if template is None:
            kept.append(item)
            continue
        feature = template.feature
        system = _system_of(str(feature.filename))
        if system == "unknown":  # a feature file of your own: it checks the implementation's system
            system = implementation_system(config)
        item.user_properties.append(("assertion", feature.name))
        item.user_properties.append(("scenario", template.name))
        item.user_properties.append(("system", system))
        item.user_properties.append(("feature_file", str(feature.rel_filename)))
        item.user_properties.append(("tags", json.dumps(scenario_tags(item))))
        if system_under_test is None:
            system_under_test = implementation_system(config)
        (kept if system in ("unknown", system_under_test) else other_system).append(item)
    if other_system:
        config.hook.pytest_deselected(items=other_system)
        items[:] = kept
    needed = [
        item
        for item in items
        if scenario_template(item) is not None
        and any(m.name.startswith("needs-") for m in item.iter_markers())
    ]
    if not needed:
        return
    capabilities = target_capabilities(config)
    where: str = target_name(config)
    if where == "pi" and config.getoption("--pi-version"):
        where = f"pi {config.getoption('--pi-version')}"
    for item in needed:
        for mark in item.iter_markers():
            capability = mark.name.removeprefix("needs-")
            if mark.name.startswith("needs-") and capability not in capabilities:
                meaning = CAPABILITIES.get(capability, "unknown capability")
                item.add_marker(
                    pytest.mark.skip(reason=f"needs {capability} ({meaning}); target {where} lacks it")
                )
                break


def pytest_collection_finish(session: pytest.Session) -> None:
    """Check the setup once, before the first scenario: the target runs here and the
    implementation loads (:mod:`.preflight`); a mistake is one usage error."""
    config = session.config
    if not any(scenario_template(item) is not None for item in session.items):
        return
    try:
        # A link loop among the features (pytest collected them again at every level) or a file
        # reached twice: what ``run`` refuses before pytest starts, refused under plain pytest too.
        for arg in config.args:
            path = Path(str(arg).split("::", 1)[0])
            if path.is_dir():
                preflight.feature_files(path)
    except preflight.SetupError as error:
        raise pytest.UsageError(str(error)) from None
    undefined = undefined_steps(session)
    if undefined:
        raise pytest.UsageError(
            "a feature has steps that no step definition matches (a typo, or a conftest.py with "
            "your own steps missing beside it): " + "; ".join(undefined)
        )
    misused = misused_steps(session)
    if misused:
        raise pytest.UsageError("a feature has steps that cannot run as written: " + "; ".join(misused))
    unknown = unknown_tags(session)
    if unknown:
        raise pytest.UsageError("a feature has tags the harness refuses: " + "; ".join(unknown))
    extension = str(config.getoption("--extension"))
    target = target_name(config)
    pi_version = config.getoption("--pi-version") if target == "pi" else None
    try:
        root = _planned_workdir_root(config)
        will_run = [
            item
            for item in session.items
            if scenario_template(item) and item.get_closest_marker("skip") is None
        ]
        preflight.check_run_directories(target, [root / _slug(item.name) for item in will_run])
        preflight.check_target(target, pi_version)
        preflight.check_implementation(
            target, extension, system=config.getoption("--system"), pi_version=pi_version
        )
    except preflight.SetupError as error:
        raise pytest.UsageError(str(error)) from None
    # The session's objects stay until it ends: out of the collector's way (``collector_tuning``).
    config.stash[_RESTORE_COLLECTOR] = collector_tuning.tune_for_scenarios()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing scenario's report names where its machine was kept; a scenario skipped before
    it ran still goes into the Cucumber JSON."""
    report = yield
    if scenario_template(item) is None:
        return report
    if report.when == "call":
        item.stash[_CALL_CLEAN] = not report.failed
    add_skipped_to_cucumber(item, report)
    if report.failed:
        machine = dict(item.user_properties).get("machine")
        if machine and Path(str(machine)).is_dir():
            report.sections.append(("pi-continuity-harness", f"the scenario's machine is kept in {machine}"))
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_PASSED] = int(exitstatus) == 0
    writers = session.config.stash.get(_DEFERRED, [])
    if int(exitstatus) != 0:  # the run directory is kept: its passing scenarios' files as ever
        for write in writers:
            write()
    writers.clear()


def _defer(config: pytest.Config, writer: Callable[[], None] | None) -> None:
    """Keep a passing scenario's unwritten ``trace.jsonl`` and ``requests/*.json`` (:func:`world`) until the session
    ends: written then if it failed (its directory is kept, with every file it always had),
    dropped if it passed (the directory is removed unread)."""
    if writer is not None:
        config.stash.setdefault(_DEFERRED, []).append(writer)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if config.stash.get(_TEMPORARY, False) and int(exitstatus) != 0:
        terminalreporter.write_line(
            f"pi-continuity-harness: the scenarios' machines are kept in {config.stash[_WORKDIR]}"
        )


#: Marks pytest itself puts on a test; every other mark of a scenario is one of its Gherkin tags.
_PYTEST_MARKS = frozenset({"parametrize", "usefixtures", "skip", "skipif", "xfail", "filterwarnings"})


def scenario_tags(item: pytest.Item) -> list[str]:
    """The Gherkin tags of a scenario's test: the feature's, the scenario's and its Examples
    block's (pytest-bdd turns each into a mark), sorted."""
    return sorted({mark.name for mark in item.iter_markers() if mark.name not in _PYTEST_MARKS})


def pytest_bdd_step_error(
    request: pytest.FixtureRequest,
    feature: Any,
    scenario: Any,
    step: Any,
    step_func: Any,
    step_func_args: dict[str, Any],
    exception: BaseException,
) -> None:
    """Record which step failed and why, so a failure report names the step, what it expected
    (the step's own words) and what was observed (the step's assertion message)."""
    message = str(exception) or type(exception).__name__
    if not isinstance(exception, AssertionError):
        message = f"{type(exception).__name__}: {message}"
    record = {"keyword": str(step.keyword).strip(), "step": str(step.name), "message": message}
    request.node.user_properties.append(("failed_step", json.dumps(record, ensure_ascii=False)))


#: The longest machine directory name: with a ``--workdir`` of at most 45 characters, a run
#: directory stays within the 126 the real-Pi layout allows (``preflight.check_run_directories``),
#: and so does ``<machine>/both/rpi``, where a scenario played on both targets runs real Pi
#: (``When it runs on the simulator and on real Pi``; ``targets.differential.TARGET_DIRS``). At 80
#: the real-Pi half of ``explore --target pi``'s minimised features, whose names are long, failed
#: on the path's length under the default work directory.
_SLUG_LENGTH = 71


def _slug(text: str) -> str:
    """The machine directory name of test ``text``: the name itself when it is a plain one of
    at most :data:`_SLUG_LENGTH` characters, else its characters outside ``[A-Za-z0-9._-]``
    replaced and a hash of the whole name appended (the first 62 characters, ``-``, 8 hex).

    Unique per name: the name cut at 80 characters was not, and 5 pairs of the suite's
    parametrized examples (e.g. the two of "directive-looking text recorded as quoted,
    attributed evidence is accepted") shared a machine: in a serial run the second example
    ran in the first's directory and overwrote its observation record (so ``compare``
    compared one example twice), and under ``run -n 2`` the two could run in one directory
    at once (``compare`` found each example's record under the other's name).
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")
    if slug == text and len(slug) <= _SLUG_LENGTH:
        return slug
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{slug[: _SLUG_LENGTH - 9].rstrip('-') or 'scenario'}-{digest}"


def observation_path(root: Path, test_name: str) -> Path:
    """Where the ``world`` fixture leaves the observation record of test ``test_name`` (the
    last part of its node id) in a run's work directory; ``compare`` reads it from there."""
    return root / _slug(test_name) / "observation.json"


def unknown_tags(session: pytest.Session) -> list[str]:
    """``<feature file>:<line>: <problem>`` for every tag of a scenario in the harness's own
    namespaces that means nothing: ``@needs-<capability>`` naming no capability (the scenario
    was skipped on every target, so a typo passed it without evidence), ``@rule-<id>`` naming no
    rule of the system the scenario checks, and ``@host`` beside a rule (as ``rules`` reports
    for the stock suite). Once per file, line and tag, in collection order."""
    problems: list[str] = []
    seen: set[tuple[str, int, str]] = set()
    known_systems = set(rule_systems())
    for item in session.items:
        template = scenario_template(item)
        if template is None:
            continue
        where = (str(template.feature.rel_filename), int(template.line_number))
        tags = scenario_tags(item)
        system = _system_of(str(template.feature.filename))
        if system == "unknown":
            system = implementation_system(session.config)
        rule_ids = {r.id for r in load_catalogue(system).rules} if system in known_systems else None
        for tag in tags:
            problem = None
            if tag.startswith("needs-") and tag.removeprefix("needs-") not in CAPABILITIES:
                problem = f"@{tag}: no such capability (known: {', '.join(sorted(CAPABILITIES))})"
            elif tag.startswith(RULE_TAG_PREFIX) and rule_ids is not None:
                if HOST_TAG in tags:
                    problem = f"@{tag} beside @{HOST_TAG}: a scenario of Pi's own behaviour proves no rule"
                elif tag.removeprefix(RULE_TAG_PREFIX) not in rule_ids:
                    problem = f"@{tag}: not a rule of {system} (`pi-continuity-harness rules` lists them)"
            if problem is not None and (*where, tag) not in seen:
                seen.add((*where, tag))
                problems.append(f"{where[0]}:{where[1]}: {problem}")
    return problems


@functools.lru_cache(maxsize=1024)
def _system_of(feature_path: str) -> str:
    """The system of a feature of the stock suite, by its directory in the suite's own features
    directory; ``unknown`` for a feature of your own, wherever it is (it checks the
    implementation's system). A directory of yours named ``pi_blitz_handoff/`` is not the
    suite's: a substring of the path made its features blitz's, deselected for a continuity
    implementation ("no scenario runs for this implementation")."""
    directory = _stock_system_dir(Path(feature_path))
    return SYSTEM_DIRS[directory] if directory is not None else "unknown"


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    """The scenario's world; its target is closed (and its files kept) at the end.

    At teardown the scenario's normalised observation (:mod:`.comparison`) is written to
    ``<scenario workdir>/observation.json``, with the scenario's own wall-clock seconds (from
    the world to its last step); the
    ``compare`` command reads these records from both targets' runs.
    """
    node = request.node
    config = request.config
    extension = item_extension(node)
    # The run's work directory is made (``mkdir``) once per scenario, not once for each of the
    # machine's three uses: its path, the world's root and the target's directory.
    machine = machine_path(config, node.name)
    node.user_properties.append(("machine", str(machine)))
    created = World(
        name=node.name,
        make_target=lambda: _make_target_in(config, machine, extension),
        make_named_target=lambda name, workdir: make_named_target(config, name, workdir, extension),
        work_root=machine,
    )
    started = time.perf_counter()
    try:
        yield created
    finally:
        # The scenario's own time, on either target: from its world to its last step (Pi's
        # start included). Not the harness's bookkeeping after it (the summary, the normalised
        # observation record, the target's close: Pi's stop, the simulator's trace and request
        # files), which on the simulator took longer than the scenario itself and made
        # ``compare``'s real/sim ratio a ratio of record-keeping (issue 16: 25x shown while the
        # scenarios ran 93x faster).
        seconds = round(time.perf_counter() - started, 4)
        summary = _summarise(created)
        node.user_properties.append(("observed", json.dumps(summary, ensure_ascii=False)))
        # Normalising and writing the record was a quarter of a simulated scenario's CPU time
        # (issue 16); a temporary run that passes removes it unread, so run_suite asks only for
        # the records of failed scenarios there. Such a scenario's requests/*.json (a tenth of
        # its CPU time) and trace.jsonl (3 %) wait for the end of the session: written only if
        # the run failed.
        wanted = _all_records(request.config) or not node.stash.get(_CALL_CLEAN, False)
        record = _observation_record(created, node.name) if wanted else None
        try:
            if wanted or hasattr(request.config, "workerinput"):
                # An xdist worker (``run -n N``) cannot know whether another worker failed.
                created.close()
            else:
                _defer(request.config, created.close_deferring_writes())
        finally:
            if record is not None:
                record["seconds"] = seconds
                path = observation_path(_workdir_root(request.config), node.name)
                write_observation_record(path, record)
                node.user_properties.append(("observation_file", str(path)))


def _all_records(config: pytest.Config) -> bool:
    """Whether every scenario's observation record is written: ``--observation-records all``, or
    by default when the run directory stays (``--harness-workdir``) or the target is real Pi. In
    the plugin's own temporary directory of a simulated run, removed when the session passes,
    only failed scenarios' records are written, as ``run`` asks (``features/suite.py``): on the
    plain pytest path the records were a third of the suite's CPU time (issue 16)."""
    chosen = config.getoption("--observation-records")
    if chosen is not None:
        return bool(chosen == "all")
    return target_name(config) != "sim" or not config.stash.get(_TEMPORARY, False)


def _observation_record(world: World, name: str) -> dict[str, Any]:
    """The normalised observation of a started scenario (or why there is none)."""
    if not world.started:
        return {"scenario": name, "started": False}
    try:
        observation = world.observe()
        record = normalise_observation(observation, artifacts=world.all_artifacts(), scenario=name)
    except Exception as error:  # the record must not hide the scenario's own failure
        return {"scenario": name, "started": True, "observation_error": str(error)}
    return {"started": True, **record}


def _summarise(world: World) -> dict[str, Any]:
    """What the run report keeps of a scenario: notifications, artifacts, compactions."""
    if not world.started:
        return {"started": False}
    try:
        observation = world.observe()
        directory = world.artifact_dir()  # once, not once per artifact
        artifacts = sorted(str(observation.on_disk(directory / name)) for name in world.artifact_names())
    except Exception as error:  # the report must not hide the scenario's own failure
        return {"started": True, "observation_error": str(error)}
    return {
        "started": True,
        "workdir": str(observation.run_dir),
        "session_file": str(observation.on_disk(observation.session_file))
        if observation.session_file
        else None,
        "operations": [
            {"name": o.name, "ok": o.ok, "error": o.error, "disposition": o.disposition}
            for o in observation.operations
        ],
        "notifications": [{"message": m, "type": t} for m, t in observation.notifications],
        "implementation_errors": [
            {"where": e.get("extensionPath"), "event": e.get("event"), "error": e.get("error")}
            for e in observation.session("extension_error")
        ],
        "compactions": len(observation.entries_of("compaction")),
        "model_requests": {kind: len(observation.requests(kind)) for kind in _REQUEST_KINDS},
        "artifacts": artifacts,
    }
