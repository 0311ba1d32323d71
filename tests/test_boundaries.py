"""The package boundaries of docs/architecture.md, held as one table of allowed imports.

Every module of ``pi_continuity_harness`` is read with :mod:`ast`: every ``import`` and
``from ... import``, wherever it stands (top level, inside a function, under
``TYPE_CHECKING``), relative imports resolved. A module belongs to the most specific package
of :data:`RULES`; it may import its own package and the packages its rule allows, nothing else
of the harness. Imports flow downward only: ``api`` <- ``scenario`` <- ``simulator``; the
references import only ``api``; the step library only the Target seam (the ``targets``
facade), the scenario language and the API; the real-Pi target never the simulator; the
HTML report only ``errors`` (it reads records and files); the library never the command
line. Between the top-level packages there is no cycle.

Each rule has a twin that feeds the checker a module breaking it, so a rule that can no longer
fail shows up as a failing twin.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import pi_continuity_harness

ROOT = "pi_continuity_harness"
PACKAGE_DIR = Path(pi_continuity_harness.__file__).resolve().parent


@dataclass(frozen=True)
class Rule:
    """What the modules of ``package`` may import besides their own package.

    ``allowed`` entries cover a package and its submodules; ``facades`` only the names the module
    itself defines or re-exports (its public API), never a module below it. ``ROOT`` is a facade:
    ``from pi_continuity_harness import __version__``.
    """

    package: str
    allowed: tuple[str, ...] = ()
    facades: tuple[str, ...] = ()


def _p(name: str) -> str:
    return f"{ROOT}.{name}" if name else ROOT


#: The import rules, package -> allowed imports (most specific package wins). ``ROOT`` itself
#: (``pi_continuity_harness/__init__.py``: the version) and ``errors`` import nothing of the harness.
RULES: tuple[Rule, ...] = (
    Rule(ROOT),
    Rule(_p("errors")),
    # Where the cache is (``PI_CONTINUITY_HARNESS_CACHE``): the real-Pi installer's, read by every
    # command's orphan sweep without importing the real-Pi package (issue 16).
    Rule(_p("cache_dir"), (_p("whole_file"),)),
    # A file written whole or not at all: the one core of the atomic writes above and below.
    Rule(_p("whole_file")),
    # The code of dataclasses' methods kept between processes, installed by the command line.
    Rule(_p("dataclass_code"), (_p("cache_dir"), _p("whole_file"))),
    Rule(_p("api"), (_p("errors"),)),
    # The rule catalogue and its coverage: data and pure computation, asked by everyone above
    # (its parsed YAML kept in the cache between processes).
    Rule(_p("rules"), (_p("errors"), _p("cache_dir"))),
    Rule(_p("scenario"), (_p("api"), _p("errors"), _p("whole_file"))),
    Rule(_p("simulator"), (_p("api"), _p("scenario"), _p("errors"))),
    Rule(_p("targets"), (_p("api"), _p("scenario"), _p("simulator"), _p("errors")), (ROOT,)),
    # The real-Pi target: the API, the scenario language and the Target seam, never the simulator.
    Rule(
        _p("targets.realpi"),
        (_p("api"), _p("scenario"), _p("errors"), _p("cache_dir"), _p("targets.target")),
        (ROOT,),
    ),
    Rule(_p("reference.psc"), (_p("api"),)),
    Rule(_p("reference.blitz"), (_p("api"),)),
    Rule(_p("reference"), ()),
    # The suite's feature files parsed once per machine: kept in the cache (``features/preflight.py``).
    Rule(
        _p("features"),
        (_p("api"), _p("scenario"), _p("targets"), _p("rules"), _p("errors"), _p("cache_dir")),
        (ROOT,),
    ),
    # The step library: only the Target seam's public API, the scenario language and the API.
    Rule(
        _p("features.steps"),
        (
            _p("api"),
            _p("scenario"),
            _p("errors"),
            _p("features.world"),
            _p("features.oracle"),
            _p("features.host_extensions"),
            # ``checks_arguments``: a step declares the check of its argument, run at collection.
            _p("features.collect"),
            _p("features.blitz_oracle"),
        ),
        facades=(_p("targets"),),
    ),
    Rule(
        _p("explore"),
        (
            _p("api"),
            _p("scenario"),
            _p("simulator"),
            _p("features.oracle"),
            _p("features.blitz_oracle"),
            _p("features.world"),
            # The collector tuned as for the suite's scenarios while seeds run in the process.
            _p("features.collector_tuning"),
            _p("rules"),
            _p("errors"),
        ),
    ),
    # Exploration on real Pi (``explore --target pi``): the one part of the explorer that plays
    # scenarios through the Target seam, on both targets.
    Rule(
        _p("explore.differential"),
        (
            _p("api"),
            _p("scenario"),
            _p("simulator"),
            _p("targets"),
            _p("features.oracle"),
            _p("features.world"),
            _p("rules"),
            _p("errors"),
            _p("explore"),
        ),
    ),
    Rule(
        _p("mutants"), (_p("api"), _p("reference"), _p("explore"), _p("scenario"), _p("rules"), _p("errors"))
    ),
    # The HTML report reads results, observations and traces as data (records and files): it
    # imports none of the packages that make them, so it draws a real-Pi run and a simulated
    # one the same way. Only the command line imports it.
    Rule(_p("report"), (_p("errors"),), (ROOT,)),
    # The release gate for a Pi package: Pi's installation and environment (the real-Pi facade),
    # the suite it runs through the installed package.
    Rule(
        _p("package"),
        (_p("errors"), _p("features"), _p("scenario")),
        (ROOT, _p("targets.realpi"), _p("targets")),
    ),
    Rule(
        _p("commands"),
        (
            _p("package"),
            _p("api"),
            _p("scenario"),
            _p("simulator"),
            _p("targets"),
            _p("features"),
            _p("explore"),
            _p("mutants"),
            _p("rules"),
            _p("report"),
            _p("errors"),
            _p("cache_dir"),
        ),
        (ROOT,),
    ),
    Rule(_p("cli"), (_p("commands"), _p("dataclass_code")), (ROOT,)),
)


def module_name(path: Path, root: Path = PACKAGE_DIR) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Every harness module ``source`` imports, wherever the import stands (lazy ones too)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # ``from pkg import sub`` imports the module ``pkg.sub`` when there is one.
            found.extend(f"{target}.{alias.name}" for alias in node.names)
    return [name for name in found if name == ROOT or name.startswith(ROOT + ".")]


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def rule_for(module: str) -> Rule:
    matching = [rule for rule in RULES if _within(module, rule.package)]
    return max(matching, key=lambda rule: len(rule.package))


def _own(rule: Rule, imported: str) -> bool:
    """Within the rule's own package (the root module owns only itself)."""
    return imported == rule.package or (rule.package != ROOT and imported.startswith(rule.package + "."))


def allowed(rule: Rule, imported: str) -> bool:
    """Whether a module under ``rule`` may import ``imported`` (``pkg.name`` of ``from pkg import name``)."""
    if _own(rule, imported) or any(_within(imported, entry) for entry in rule.allowed):
        return True
    # A facade is its public API: ``from targets import Target`` (``targets.Target``) is fine,
    # ``targets.sim`` is not.
    head = imported.rpartition(".")[0]
    return any(imported == facade or (head == facade and not _is_module(imported)) for facade in rule.facades)


def _is_module(name: str) -> bool:
    relative = Path(*name.split(".")[1:])
    return (PACKAGE_DIR / relative).with_suffix(".py").exists() or (
        PACKAGE_DIR / relative / "__init__.py"
    ).exists()


def violations(module: str, source: str, *, is_package: bool = False) -> list[str]:
    rule = rule_for(module)
    return [
        f"{module} imports {name} (allowed: {', '.join(rule.allowed + rule.facades) or 'nothing'})"
        for name in imports_of(source, module, is_package=is_package)
        if not allowed(rule, name)
    ]


def sources() -> list[tuple[str, str, bool]]:
    return [
        (module_name(path), path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in sorted(PACKAGE_DIR.rglob("*.py"))
    ]


def top_package(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else ROOT


def package_graph(modules: list[tuple[str, str, bool]]) -> dict[str, set[str]]:
    """Top-level package -> the top-level packages it imports (its own left out)."""
    graph: dict[str, set[str]] = {}
    for module, source, is_package in modules:
        own = top_package(module)
        for name in imports_of(source, module, is_package=is_package):
            other = top_package(name if _is_module(name) else name.rpartition(".")[0])
            if other not in (own, ROOT):
                graph.setdefault(own, set()).add(other)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (the packages on it, first repeated last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


# ---------------------------------------------------------------------------------- the rules
def test_every_module_has_a_rule_and_every_rule_has_modules() -> None:
    modules = [module for module, _source, _pkg in sources()]
    assert all(rule_for(module) for module in modules)
    for rule in RULES:
        assert any(_own(rule, module) for module in modules), f"no module under {rule.package}"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.package)
def test_the_package_imports_only_what_its_rule_allows(rule: Rule) -> None:
    found = [
        problem
        for module, source, is_package in sources()
        if rule_for(module) == rule
        for problem in violations(module, source, is_package=is_package)
    ]
    assert found == []


def test_there_is_no_cycle_between_the_packages() -> None:
    graph = package_graph(sources())
    assert graph, "the package graph is empty: the import reader is broken"
    assert cycle(graph) is None, f"cycle between packages: {' -> '.join(cycle(graph) or [])}"


# ---------------------------------------------------------------------------------- the twins
def _forbidden_for(rule: Rule) -> str:
    """A harness module ``rule`` does not allow (to plant in a synthetic module)."""
    candidates = [
        "simulator.host",
        "explore.engine",
        "commands.run",
        "features.world",
        "targets.sim",
        "reference.psc.extension",
        "mutants.catalogue",
        "api.extension_api",
    ]
    for candidate in candidates:
        name = _p(candidate)
        if not allowed(rule, name):
            return name
    raise AssertionError(f"{rule.package} allows every candidate: the rule says nothing")


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.package)
def test_the_rule_catches_a_module_that_breaks_it_even_lazily(rule: Rule) -> None:
    forbidden = _forbidden_for(rule)
    module = f"{rule.package}.planted_violation"
    lazy = f"def later() -> None:\n    from {forbidden} import something  # noqa\n"
    assert violations(module, lazy) == [
        f"{module} imports {forbidden}.something "
        f"(allowed: {', '.join(rule.allowed + rule.facades) or 'nothing'})"
    ]
    # ``from ..simulator.host import x``: as many dots as it takes to climb to the root package.
    relative = "from " + "." * module.count(".") + forbidden.removeprefix(ROOT + ".") + " import x\n"
    assert violations(module, relative), f"a relative import of {forbidden} went unnoticed"
    assert violations(module, f"import {forbidden}\n"), f"a plain import of {forbidden} went unnoticed"


def test_the_steps_may_use_the_targets_facade_but_not_a_target() -> None:
    module = _p("features.steps.planted")
    assert violations(module, f"from {_p('targets')} import Target, CheckedRun\n") == []
    assert violations(module, f"from {_p('targets.sim')} import SimTarget\n")
    assert violations(module, f"from {_p('targets')} import sim\n")


def test_the_report_reads_data_and_imports_none_of_its_makers() -> None:
    module = _p("report.planted")
    assert (
        violations(module, f"from {_p('errors')} import ReportError\nfrom {ROOT} import __version__\n") == []
    )
    for maker in (
        "simulator.host",
        "targets.sim",
        "targets.realpi",
        "features.suite",
        "scenario.trace",
        "explore",
    ):
        assert violations(module, f"from {_p(maker)} import x\n"), maker
    assert violations(_p("features.planted"), f"from {_p('report')} import render_run\n")
    assert violations(_p("commands.planted"), f"from {_p('report')} import render_run\n") == []


def test_the_cycle_check_finds_a_cycle() -> None:
    acyclic = {"a": {"b"}, "b": {"c"}, "c": set()}
    assert cycle(acyclic) is None
    assert cycle({**acyclic, "c": {"a"}}) == ["a", "b", "c", "a"]
    planted = [
        (_p("explore.planted"), f"from {_p('commands')} import UsageError\n", False),
        (_p("commands.planted"), f"from {_p('explore')} import engine\n", False),
    ]
    assert cycle(package_graph(planted)) is not None
