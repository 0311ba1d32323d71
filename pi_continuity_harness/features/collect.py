"""How the suite's pytest plugin collects and names scenarios.

* :class:`FeatureFile`: a ``.feature`` file collected directly, as a test module whose tests are
  its scenarios, with the stock step library and the steps of any ``conftest.py`` beside it; no
  ``scenarios()`` module needed. The plugin collects feature files only when ``--target`` is
  given (so installing the harness changes nothing in another project's pytest run), and a
  scenario a test module of the session already binds with pytest-bdd's ``scenarios()`` is
  collected once, by that module (:func:`drop_duplicates`).
* :func:`printed_name`: the name the command line prints for a scenario (``name`` or
  ``name [example]``); :func:`select_by_name` lets ``-k`` take that name, or an assertion's
  (feature's) name, exactly as printed, although pytest's ``-k`` grammar has no spaces.
* :func:`add_skipped_to_cucumber`: pytest-bdd's Cucumber JSON writes a scenario only from its
  ``call`` report, so a scenario skipped before it ran (``@needs-...`` on a target without the
  capability) was missing from the file; it is added, its steps ``skipped``.
* :func:`misused_steps`: every step whose step definition cannot take it as written (a
  docstring or data table missing, or given to a definition that takes none, or an argument
  the definition declares a check for, :func:`checks_arguments`, that fails it): pytest-bdd
  found each only when the step ran, a failure of the implementation, or silently ignored it.
* :func:`undefined_steps`: every step of the collected scenarios that no step definition the
  scenario sees matches. pytest-bdd finds that out only when the step runs and fails the
  scenario (``StepDefinitionNotFoundError``), so a typo in a feature of your own read as the
  implementation failing; the plug-in makes it one usage error naming each file and line,
  before the first scenario runs (exit status 2 from ``run``).
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pytest_bdd.reporting import ScenarioReport
from pytest_bdd.scenario import get_python_name_generator, scenario, scenario_wrapper_template_registry
from pytest_bdd.steps import step_function_context_registry

from pi_continuity_harness.features import preflight, step_lookup

__all__ = [
    "BATCH_PARAM",
    "FeatureFile",
    "add_skipped_to_cucumber",
    "checks_arguments",
    "drop_duplicates",
    "misused_steps",
    "printed_name",
    "scenario_template",
    "select_by_name",
    "undefined_steps",
]

# Test names already given in this session: scenarios of different files get different names,
# so their machines (a directory per test name) never collide.
_NAMES = pytest.StashKey[set[str]]()


#: The parameter that gives a scenario's test its own implementation when one session runs
#: several (:func:`~.suite.run_batch`): its value replaces ``--extension`` for that test
#: (``pytest_plugin.item_extension``).
BATCH_PARAM = "_harness_implementation"


def scenario_template(item: pytest.Item) -> Any | None:
    """The pytest-bdd scenario template of ``item``, or None for a test that is not a scenario."""
    return scenario_wrapper_template_registry.get(getattr(item, "obj", None))  # type: ignore[arg-type]


def printed_name(scenario_name: str, nodeid: str) -> str:
    """How the command line prints a scenario: its name, and ``[example]`` for an outline's row."""
    example = nodeid.split("[", 1)[1].rstrip("]") if "[" in nodeid.rpartition("::")[2] else ""
    return f"{scenario_name} [{example}]" if example else scenario_name


class FeatureFile(pytest.Module):
    """A ``.feature`` file as a test module: one test per scenario (per Examples row)."""

    def _getobj(self) -> types.ModuleType:
        module = types.ModuleType(f"{self.path.stem} (feature)")
        module.__file__ = str(self.path)
        try:
            # Read as ``run`` reads it before pytest starts: a mistake pytest-bdd would hide
            # (two scenarios of one name) is a collection error naming the file and line.
            feature = preflight.read_feature(self.path)
        except preflight.SetupError as error:
            raise self.CollectError(str(error)) from None
        used = self.config.stash.setdefault(_NAMES, set())
        for name in feature.scenarios:
            # The file name, not its path: pytest-bdd names the feature ``<directory>/<file>``
            # (``rel_filename``, in every message) from the two.
            test = scenario(
                self.path.name,
                name,
                encoding=preflight.FEATURE_ENCODING,
                features_base_dir=str(self.path.parent),
            )(_no_body)
            for test_name in get_python_name_generator(name):
                if test_name not in used:
                    used.add(test_name)
                    setattr(module, test_name, test)
                    break
        return module


def _no_body() -> None:
    """A scenario's test has no body of its own: its steps are the test."""


def drop_duplicates(items: list[pytest.Item]) -> None:
    """Leave out a scenario collected from its feature file when a test module of the session
    binds it too (pytest-bdd's ``scenarios()``): the module's test is the one that runs."""
    bound = set()
    for item in items:
        template = scenario_template(item)
        if template is not None and not isinstance(item.parent, FeatureFile):
            bound.add((str(template.feature.filename), template.name))
    if not bound:
        return
    items[:] = [
        item
        for item in items
        if not (
            isinstance(item.parent, FeatureFile)
            and (template := scenario_template(item)) is not None
            and (str(template.feature.filename), template.name) in bound
        )
    ]


def select_by_name(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``-k`` naming a scenario (``name`` or ``name [example]``) or an assertion (a feature's
    name) exactly as the command line prints it selects those scenarios, and pytest's own ``-k``
    is then left nothing to do; any other ``-k`` is pytest's keyword expression."""
    wanted = " ".join(str(config.option.keyword or "").split())
    if not wanted:
        return
    chosen: list[pytest.Item] = []
    for item in items:
        template = scenario_template(item)
        if template is None:
            continue
        names = {printed_name(template.name, item.nodeid), template.name, template.feature.name}
        if wanted in {" ".join(name.split()) for name in names if name}:
            chosen.append(item)
    if not chosen:
        return
    rest = [item for item in items if item not in chosen]
    if rest:
        config.hook.pytest_deselected(items=rest)
    items[:] = chosen
    config.option.keyword = ""


def add_skipped_to_cucumber(item: pytest.Item, report: pytest.TestReport) -> None:
    """Add a scenario skipped before it ran to pytest-bdd's Cucumber JSON, every step
    ``skipped`` (pytest-bdd writes scenarios from their ``call`` report only)."""
    log = getattr(item.config, "_bddcucumberjson", None)
    template = scenario_template(item)
    if log is None or template is None or not report.skipped or report.when != "setup":
        return
    callspec = getattr(item, "callspec", None)
    example = callspec.params.get("_pytest_bdd_example", {}) if callspec is not None else {}
    rendered = template.render(example)
    serialized = ScenarioReport(rendered).serialize()
    feature = serialized["feature"]
    if feature["filename"] not in log.features:
        log.features[feature["filename"]] = {
            "keyword": feature["keyword"],
            "uri": feature["rel_filename"],
            "name": feature["name"] or feature["rel_filename"],
            "id": feature["rel_filename"].lower().replace(" ", "-"),
            "line": feature["line_number"],
            "description": feature["description"],
            "language": feature["language"],
            "tags": log._serialize_tags(feature),
            "elements": [],
        }
    log.features[feature["filename"]]["elements"].append(
        {
            "keyword": serialized["keyword"],
            "id": item.name,
            "name": serialized["name"],
            "line": serialized["line_number"],
            "description": serialized["description"],
            "tags": log._serialize_tags(serialized),
            "type": "scenario",
            "steps": [
                {
                    "keyword": step.keyword,
                    "name": step.name,
                    "line": step.line_number,
                    "match": {"location": ""},
                    "result": {"status": "skipped", "duration": 0},
                }
                for step in rendered.steps
            ],
        }
    )


# ``import pytest_bdd.scenario`` would give the ``scenario`` function pytest_bdd exports; its
# ``find_fixturedefs_for_step`` is looked up at call time (the suite memoises it, ``step_lookup``).
_BDD_SCENARIO: Any = importlib.import_module("pytest_bdd.scenario")


#: The step definitions matching each step (feature file, line, text), as undefined_steps found them.
_LOOKED_UP = pytest.StashKey[dict[tuple[str, int, str], list[Any]]]()


def undefined_steps(session: pytest.Session) -> list[str]:
    """``<feature file>:<line>: <Keyword> "<step>" matches no step definition (scenario
    "<name>")`` for every such step of the session's scenarios, once per file and line, in
    collection order. A step is looked up as pytest-bdd looks it up when it runs (its type, its
    text with the Examples row filled in, the step definitions visible to the test)."""
    fixturemanager = session._fixturemanager
    seen: set[tuple[str, int, str]] = set()
    looked_up = session.stash.setdefault(_LOOKED_UP, {})
    problems: list[str] = []
    for item, template, rendered, step in _scenario_steps(session):
        where = (str(template.feature.rel_filename), int(step.line_number), str(step.name))
        if where in seen:
            continue
        found = list(
            _BDD_SCENARIO.find_fixturedefs_for_step(step=step, fixturemanager=fixturemanager, node=item)
        )
        looked_up.setdefault(where, found)
        if found:
            continue
        seen.add(where)
        problems.append(
            f"{where[0]}:{where[1]}: {step.keyword.strip()} {step.name!r} matches no step definition "
            f"(scenario {rendered.name!r})"
        )
    return problems


#: The session's items and the steps :func:`_scenario_steps` gave for them.
_RENDERED = pytest.StashKey[tuple[list[pytest.Item], list[tuple[pytest.Item, Any, Any, Any]]]]()


def _scenario_steps(session: pytest.Session) -> list[tuple[pytest.Item, Any, Any, Any]]:
    """``(item, template, scenario, step)`` for every step of the session's scenarios, in
    collection order, as pytest-bdd will run it (the Examples row filled in).

    Rendered once for :func:`undefined_steps` and :func:`misused_steps`, which walk the same
    items one after the other before the first scenario: rendering every scenario twice was
    464 of the 696 renders of a run of the PSC suite (issue 16). Kept with the items it was
    made from, and made again if they are not the session's items any more."""
    kept = session.stash.get(_RENDERED, None)
    if kept is not None and kept[0] == session.items:
        return kept[1]
    steps = list(_render_steps(session))
    session.stash[_RENDERED] = (list(session.items), steps)
    return steps


def _render_steps(session: pytest.Session) -> Iterator[tuple[pytest.Item, Any, Any, Any]]:
    for item in session.items:
        template = scenario_template(item)
        if template is None:
            continue
        callspec = getattr(item, "callspec", None)
        example = callspec.params.get("_pytest_bdd_example", {}) if callspec is not None else {}
        rendered = template.render(example)
        for step in rendered.steps:
            yield item, template, rendered, step


#: What a step definition declares its arguments must be (:func:`checks_arguments`).
ArgumentCheck = Callable[[Mapping[str, Any], Path], "str | None"]
_CHECK = "_pch_argument_check"
_F = TypeVar("_F", bound=Callable[..., Any])
#: pytest-bdd passes a step's docstring and data table to a definition taking these parameters.
_BLOCKS = {"docstring": 'a docstring (a """ block under the step)', "datatable": "a data table"}


def checks_arguments(check: ArgumentCheck) -> Callable[[_F], _F]:
    """Declare what a step definition's arguments must be, checked before any scenario runs.

    ``check(arguments, feature_dir)`` gets the step's arguments as the definition would (its
    parser's, converted, and ``docstring`` / ``datatable`` when the step has one) and the
    directory of the feature file, and returns what is wrong with them, or None. A JSON
    docstring that does not parse, a scenario file that is not there, found only when the
    step ran, failed the scenario as if the implementation had; declared, each is a setup
    error naming the feature's file and line (:func:`misused_steps`)."""

    def declare(func: _F) -> _F:
        setattr(func, _CHECK, check)
        return func

    return declare


def misused_steps(session: pytest.Session) -> list[str]:
    """``<feature file>:<line>: <Keyword> "<step>": <problem> (scenario "<name>")`` for every
    step whose definition cannot take it as written, once per file, line and text, in
    collection order:

    * the step matches two or more of your own step definitions equally near it (in one
      ``conftest.py`` or module, or in two at the same level): pytest-bdd used the one it
      happened to register last, silently. A definition of yours nearer the feature than
      another, or one shadowing a stock step, is chosen on purpose and is not refused (nor is an
      overlap within the stock library, which is tested as it is);
    * the definition takes a ``docstring`` or ``datatable`` the step does not have
      (pytest-bdd's ``FixtureLookupError`` when it ran), or the step has one the definition
      does not take (silently ignored);
    * the definition's declared argument check (:func:`checks_arguments`) fails."""
    fixturemanager = session._fixturemanager
    # What undefined_steps found: a step is looked up once before the scenarios run (a test
    # of the step lookup's memo counts the lookups).
    looked_up = session.stash.get(_LOOKED_UP, {})
    seen: set[tuple[str, int, str, str | None]] = set()
    problems: list[str] = []
    # The parameters of each step function, asked once per function, not once per step: 1,140
    # ``inspect.signature`` calls in a run of the suite for 277 functions, each about 60,000
    # instructions (issue 16). While the step lookup's memo is installed they are the very
    # signatures pytest-bdd asks for when the steps run (``step_lookup.signature_of``).
    parameters: dict[Callable[..., Any], Mapping[str, inspect.Parameter]] = {}
    # The directory of each feature file, made once per file: a ``Path`` built and parsed for
    # every step (1,140 in a run of the suite, for a few dozen files) was most of the cost of
    # the path arithmetic before the scenarios ran (issue 16). A ``Path`` is immutable, so the
    # steps of one file can share it.
    feature_dirs: dict[str, Path] = {}
    for item, template, rendered, step in _scenario_steps(session):
        where = (str(template.feature.rel_filename), int(step.line_number), str(step.name), step.docstring)
        if where in seen:
            continue
        seen.add(where)
        found = looked_up.get(where[:3])
        if found is None:
            found = list(
                _BDD_SCENARIO.find_fixturedefs_for_step(step=step, fixturemanager=fixturemanager, node=item)
            )
        if not found:
            continue  # undefined_steps reports it
        filename = str(template.feature.filename)
        feature_dir = feature_dirs.get(filename)
        if feature_dir is None:
            feature_dir = feature_dirs[filename] = Path(filename).parent
        problem = _step_problem(step, found, feature_dir, parameters)
        if problem is not None:
            problems.append(
                f"{where[0]}:{where[1]}: {step.keyword.strip()} {step.name!r}: {problem} (scenario {rendered.name!r})"
            )
    return problems


def _is_stock(func: Callable[..., Any]) -> bool:
    """A step definition of the harness's own library (``features/steps``), not a user's."""
    return str(getattr(func, "__module__", "")).startswith("pi_continuity_harness.features.steps")


def _defined_at(func: Callable[..., Any]) -> str:
    """``<file>:<line> (<name>)`` of a step definition, the file relative to the current directory."""
    source = inspect.getsourcefile(func) or "?"
    try:
        shown = str(Path(source).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = source
    return f"{shown}:{func.__code__.co_firstlineno} ({func.__name__})"


def _unconverted(value: str) -> Any:
    return value


def _step_problem(
    step: Any,
    found: list[Any],
    feature_dir: Path,
    known: dict[Callable[..., Any], Mapping[str, inspect.Parameter]] | None = None,
) -> str | None:
    """What is wrong with ``step`` for the step definitions ``found`` to match it (pytest's
    fixture definitions, pytest-bdd's order: the last of the nearest is the one used).
    ``known``: the parameters of the step functions already asked, by function (filled in)."""
    depth = {id(d): len([part for part in d.baseid.split("/") if part]) for d in found}
    own = [d for d in found if not _is_stock(step_function_context_registry[d.func].step_func)]
    if own:
        nearest = max(depth[id(d)] for d in own)
        funcs = [step_function_context_registry[d.func].step_func for d in own if depth[id(d)] == nearest]
        if len(funcs) > 1:
            return (
                f"matches {len(funcs)} of your step definitions, equally near it: "
                + ", ".join(_defined_at(func) for func in funcs)
                + " (pytest-bdd would use the last it registered)"
            )
    deepest = max(depth.values())
    context = step_function_context_registry[[d for d in found if depth[id(d)] == deepest][-1].func]
    func = context.step_func
    parameters = None if known is None else known.get(func)
    if parameters is None:
        parameters = step_lookup.signature_of(func).parameters
        if known is not None:
            known[func] = parameters
    given_blocks = {"docstring": step.docstring is not None, "datatable": step.datatable is not None}
    for name, what in _BLOCKS.items():
        parameter = parameters.get(name)
        if parameter is not None and not given_blocks[name] and parameter.default is parameter.empty:
            return f"its step definition needs {what}, and the step has none"
        if parameter is None and given_blocks[name]:
            return f"the step has {what}, which its step definition does not take (it would be ignored)"
    check: ArgumentCheck | None = getattr(context.step_func, _CHECK, None)
    if check is None:
        return None
    converters: Mapping[str, Callable[[str], Any]] = context.converters
    arguments: dict[str, Any] = {
        key: converters.get(key, _unconverted)(value)
        for key, value in (context.parser.parse_arguments(step.name) or {}).items()
    }
    if step.docstring is not None:
        arguments["docstring"] = step.docstring
    if step.datatable is not None:
        arguments["datatable"] = step.datatable.raw()
    return check(arguments, feature_dir)
