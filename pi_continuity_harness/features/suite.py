"""Run the conformance suite programmatically and collect one result per scenario.

:func:`run_suite` runs pytest in-process on the suite directory (or on feature files of your
own, ``features=``) with its own minimal configuration (so a user's ``pytest.ini`` cannot change
the suite), collects a :class:`ScenarioResult` per scenario (and per Examples row) through a
small plugin, and returns a :class:`SuiteRun`, which knows how to write the JSON results and
the validation record of spec §20 (each file written whole or not at all). :func:`run_batch`
runs several implementations' selections in one pytest session, a :class:`SuiteRun` each.

The scenarios' machines go under ``workdir``; without one, under a temporary directory
``pi-continuity-harness-run-*`` (the simulator's on a RAM disk unless the user chose a place:
:mod:`.scratch`) that is removed after a passing run and kept after a failing one
(:attr:`SuiteRun.workdir`, :attr:`SuiteRun.kept`). A usage error inside pytest (a ``-k``
that is neither a printed name nor a keyword expression, a setup check the plugin made) is a
:class:`SuiteUsageError`, never an empty result.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd.reporting import test_report_context_registry
from pytest_bdd.scenario import scenario_wrapper_template_registry

from pi_continuity_harness import PI_VERSION, __version__
from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.features import SUITE_DIR, preflight
from pi_continuity_harness.features.collect import BATCH_PARAM, printed_name
from pi_continuity_harness.features.scratch import make_temporary_directory
from pi_continuity_harness.rules import HOST_TAG, load_catalogue, rules_in_tags
from pi_continuity_harness.rules import systems as rule_systems
from pi_continuity_harness.scenario import implementations as registry
from pi_continuity_harness.scenario.atomic_write import write_atomically
from pi_continuity_harness.scenario.owned_dirs import remove_owned
from pi_continuity_harness.scenario.workspace import path_is_dir

__all__ = [
    "KILLED_EARLIER",
    "PLUGIN",
    "RECORD_FILES",
    "RULE_STATUSES",
    "RuleVerdict",
    "ScenarioResult",
    "SuiteRun",
    "SuiteUsageError",
    "failure_detail",
    "run_batch",
    "run_suite",
    "write_atomically",
]

#: The suite's pytest plugin, by the name its ``pytest11`` entry point has.
PLUGIN = "pi_continuity_harness.features.plugin"

#: The files ``--report DIR`` writes into DIR (:meth:`SuiteRun.write_report`; the matrix and the
#: package gate write the same two), which no other output option may name.
RECORD_FILES = ("validation-record.md", "validation-record.json")


class SuiteUsageError(HarnessError, ValueError):
    """pytest refused the run as a usage error (exit status 4); the message is pytest's."""


@dataclass
class ScenarioResult:
    """One scenario (one Examples row of an outline counts as one)."""

    name: str
    assertion: str
    system: str
    status: str  # passed | failed | skipped | error
    duration_s: float
    detail: str = ""
    nodeid: str = ""
    feature_file: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    observed: dict[str, Any] = field(default_factory=dict)
    #: The directory of the scenario's machine, when it has one on disk.
    machine: str = ""
    #: The scenario's Gherkin tags (feature, scenario and Examples block).
    tags: list[str] = field(default_factory=list)
    #: The step that failed: ``{"keyword", "step", "message"}`` (None: no step failed).
    failed_step: dict[str, str] | None = None

    @property
    def rules(self) -> list[str]:
        """The catalogue rules the scenario proves (its ``@rule-<id>`` tags)."""
        return list(rules_in_tags(self.tags))

    @property
    def host(self) -> bool:
        """Tagged ``@host``: it tests Pi's own behaviour and holds for any extension."""
        return HOST_TAG in self.tags

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "assertion": self.assertion,
            "system": self.system,
            "status": self.status,
            "duration_s": round(self.duration_s, 4),
            "detail": self.detail,
            "tags": self.tags,
            "rules": self.rules,
        }


#: Every status of :class:`RuleVerdict`, in report order.
RULE_STATUSES = ("passed", "failed", "not run", "unchecked")


@dataclass(frozen=True)
class RuleVerdict:
    """What one run says about one rule: passed (every scenario proving it passed), failed (one
    failed), not run (none of its scenarios ran here, or the rule has none), or unchecked (the
    catalogue says why no scenario can check it: ``why``)."""

    rule: str
    section: str
    text: str
    status: str  # passed | failed | not run | unchecked
    scenarios: tuple[tuple[str, str], ...]  # (scenario, status)
    #: Why the rule is unchecked (the catalogue's ``unchecked``), when it is.
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rule": self.rule,
            "section": self.section,
            "status": self.status,
            "scenarios": [{"name": name, "status": status} for name, status in self.scenarios],
        }
        if self.why:
            data["unchecked"] = self.why
        return data


@dataclass
class SuiteRun:
    target: str
    implementation: str
    environment: dict[str, str]
    results: list[ScenarioResult] = field(default_factory=list)
    exit_code: int = 0
    seconds: float = 0.0
    #: Where the scenarios' machines were laid out.
    workdir: Path | None = None
    #: False when ``workdir`` was a temporary directory removed after a passing run.
    kept: bool = True
    #: pytest caught a KeyboardInterrupt (Ctrl-C, or SIGTERM through ``cli.main``). Not read from
    #: :attr:`exit_code`: pytest returns the same ``INTERRUPTED`` for errors during collection.
    interrupted: bool = False

    @property
    def failed(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.status in ("failed", "error")]

    @property
    def ok(self) -> bool:
        return not self.failed and self.exit_code in (0, 5) and bool(self.results)

    @property
    def internal_error(self) -> bool:
        """pytest (or a plugin of it, pytest-xdist's controller) stopped on an error of its own,
        printed as ``INTERNALERROR>`` lines: the results are those reported before it, maybe
        none, and say nothing of the scenarios that did not run."""
        return self.exit_code == int(pytest.ExitCode.INTERNAL_ERROR)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
        for result in self.results:
            out[result.status] = out.get(result.status, 0) + 1
        return out

    def systems(self) -> list[str]:
        """The systems whose scenarios ran, in the order they first appear."""
        return list(dict.fromkeys(r.system for r in self.results if r.system in rule_systems()))

    def by_rule(self) -> list[RuleVerdict]:
        """Per rule of every system that ran, in catalogue order: passed, failed or not run, with
        the scenarios that prove it (an implementation's author sees which rules they meet)."""
        verdicts = []
        for system in self.systems():
            proving: dict[str, list[ScenarioResult]] = {}
            for result in self.results:
                if result.system == system:
                    for rule_id in result.rules:
                        proving.setdefault(rule_id, []).append(result)
            for rule in load_catalogue(system).rules:
                results = proving.get(rule.id, [])
                statuses = {r.status for r in results}
                if statuses & {"failed", "error"}:
                    status = "failed"
                elif "passed" in statuses:
                    status = "passed"
                elif rule.unchecked is not None:
                    status = "unchecked"
                else:
                    status = "not run"
                verdicts.append(
                    RuleVerdict(
                        rule.id,
                        rule.section,
                        rule.text,
                        status,
                        tuple((r.name, r.status) for r in results),
                        (rule.unchecked or "") if status == "unchecked" else "",
                    )
                )
        return verdicts

    def passed_without_evidence(self) -> list[ScenarioResult]:
        """Scenarios that passed although they are not tagged ``@host``: for an implementation that
        does nothing (the null implementation) each is a verdict without evidence."""
        return [r for r in self.results if r.status == "passed" and not r.host]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "implementation": self.implementation,
            "environment": self.environment,
            "results": [r.public() for r in self.results],
            "rules": [verdict.to_json() for verdict in self.by_rule()],
        }

    def write_json(self, path: Path) -> None:
        write_atomically(path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")

    def record(self) -> dict[str, Any]:
        """The validation record of spec §20 as data: the run, its environment and install
        command, and every scenario whole (steps, what it observed, its work directory). The
        JSON of ``run --report`` and the input of the HTML report (``run --html``)."""
        return {
            **self.to_json(),
            "install_command": _install_command(self.target, self.environment),
            "counts": self.counts(),
            "seconds": round(self.seconds, 3),
            "assertions": [{**asdict(r), "rules": r.rules} for r in self.results],
        }

    def write_report(self, directory: Path) -> tuple[Path, Path]:
        """The validation record of spec §20, as Markdown and JSON."""
        directory.mkdir(parents=True, exist_ok=True)
        record = self.record()
        md_path, json_path = (directory / name for name in RECORD_FILES)
        write_atomically(json_path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        write_atomically(md_path, _markdown(self, record))
        return md_path, json_path


def _install_command(target: str, environment: dict[str, str]) -> str:
    base = "python -m pip install pi-continuity-harness"
    if target == "pi":
        version = environment.get("pi", PI_VERSION)
        option = "" if version == PI_VERSION else f" --pi-version {version}"
        return (
            f"{base} && pi-continuity-harness install-pi{option}  "
            f"# Node 22, @earendil-works/pi-coding-agent@{version}"
        )
    return base


def _markdown(run: SuiteRun, record: dict[str, Any]) -> str:
    lines = [
        "# Pi Continuity Harness validation record",
        "",
        f"- Target: `{run.target}`",
        f"- Implementation: `{run.implementation}`",
    ]
    lines += [f"- {key}: {value}" for key, value in run.environment.items()]
    lines += [
        f"- Install command: `{record['install_command']}`",
        f"- Result: {', '.join(f'{v} {k}' for k, v in record['counts'].items())} in {record['seconds']} s",
        "",
        "| assertion | scenario | status | seconds |",
        "|---|---|---|---|",
    ]
    for result in run.results:
        lines.append(f"| {result.assertion} | {result.name} | {result.status} | {result.duration_s:.3f} |")
    verdicts = run.by_rule()
    if verdicts:
        counts = {status: sum(1 for v in verdicts if v.status == status) for status in RULE_STATUSES}
        lines += [
            "",
            "## Rules",
            "",
            f"{counts['passed']} rules met, {counts['failed']} broken, {counts['not run']} not run here, "
            f"{counts['unchecked']} unchecked (the catalogue says why) "
            "(a rule is met when every scenario tagged with it passed).",
            "",
            "| rule | section | status | scenarios |",
            "|---|---|---|---|",
        ]
        for verdict in verdicts:
            names = "; ".join(f"{name} ({status})" for name, status in verdict.scenarios) or (
                f"unchecked: {verdict.why}" if verdict.why else "—"
            )
            lines.append(f"| {verdict.rule} | {verdict.section} | {verdict.status} | {names} |")
    for result in run.results:
        lines += ["", f"## {result.assertion}: {result.name}", "", f"Status: **{result.status}**"]
        if result.detail:
            lines += ["", "```", result.detail, "```"]
        if result.steps:
            lines += ["", "Transcript:", ""]
            for step in result.steps:
                mark = "FAILED" if step.get("failed") else "ok"
                lines.append(f"- {step.get('keyword', '')} {step.get('name', '')} ({mark})")
        artifacts = result.observed.get("artifacts") or []
        if artifacts:
            lines += ["", "Artifacts:", ""] + [f"- `{path}`" for path in artifacts]
        notes = result.observed.get("notifications") or []
        if notes:
            lines += ["", "Notifications:", ""] + [f"- [{n['type']}] {n['message']}" for n in notes]
    return "\n".join(lines) + "\n"


class _Collector:
    """pytest plugin that turns reports into :class:`ScenarioResult` objects."""

    def __init__(
        self, on_result: Callable[[ScenarioResult, int, int], None] | None, *, native_tracebacks: bool = False
    ) -> None:
        self.native_tracebacks = native_tracebacks
        self.results: dict[str, ScenarioResult] = {}
        self.order: list[str] = []
        #: Node ids in collection order: the order of a serial run, whoever ran each test.
        self.collected: list[str] = []
        self.total = 0
        self.on_result = on_result
        self.interrupted = False
        #: The error of the first ``on_result`` call whose output's reader had left (``run |
        #: head``); the run stops there and :func:`run_suite` raises it once pytest is done.
        self.output_closed: BrokenPipeError | None = None
        self._session: pytest.Session | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        """A failure's traceback in Python's own format when nobody prints it.

        pytest's default ("long") reads each frame's source and finds the statement around the
        failing line by parsing the frame's whole file (``_pytest/_code/source.py``,
        ``getstatementrange_ast``): about 0.1 s per failed scenario, a third of an in-process run
        of a mutant's scenarios and more of the null check, where every scenario fails. With
        ``-p no:terminal`` nothing prints it: a result's detail is the failing step
        (:func:`failure_detail`) or the exception's message (``reprcrash``, the same in every
        style). ``run_suite`` asks for it only when no JUnit, Cucumber or Allure report, which
        carry the traceback, is written."""
        if self.native_tracebacks:
            config.option.tbstyle = "native"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        self.collected = [item.nodeid for item in session.items]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """``run -n N``: the controller collects nothing; every worker reports the same ids."""
        self.total = len(ids)
        self.collected = list(ids)

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        nodeid = report.nodeid
        result = self.results.get(nodeid)
        if result is None:
            # The scenario's names were recorded at collection, so the first report has them.
            name = str(props.get("scenario") or nodeid.split("::")[-1])
            result = ScenarioResult(
                name=printed_name(name, nodeid),
                assertion=str(props.get("assertion") or name),
                system=str(props.get("system") or "unknown"),
                status="passed",
                duration_s=0.0,
                nodeid=nodeid,
                feature_file=str(props.get("feature_file") or ""),
            )
            self.results[nodeid] = result
            self.order.append(nodeid)
        result.duration_s += report.duration
        machine = str(props.get("machine") or "")
        # Once found, not looked for again in the later reports (a ``stat`` each).
        if machine and machine != result.machine and path_is_dir(machine):
            result.machine = machine
        if "tags" in props and not result.tags:
            result.tags = list(json.loads(str(props["tags"])))
        if "failed_step" in props:
            result.failed_step = json.loads(str(props["failed_step"]))
        if "observed" in props:
            try:
                result.observed = json.loads(str(props["observed"]))
            except json.JSONDecodeError:
                result.observed = {}
        steps = _scenario_steps(report)
        if steps:
            result.steps = steps
        if report.skipped:
            result.status = "skipped"
            longrepr = report.longrepr
            result.detail = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
            result.detail = result.detail.removeprefix("Skipped: ")
        elif report.failed:
            result.status = "failed" if report.when == "call" else "error"
            crash = getattr(report.longrepr, "reprcrash", None)
            result.detail = getattr(crash, "message", None) or str(report.longrepr)[-2000:]
        if report.when == "teardown" and result.status in ("failed", "error") and result.failed_step:
            result.detail = failure_detail(result.failed_step, result.observed.get("implementation_errors"))
        if report.when == "teardown":
            self._notify(result)

    def _store(self, result: ScenarioResult) -> None:
        key = result.nodeid or f"error-{len(self.order)}"
        self.results[key] = result
        self.order.append(key)
        self._notify(result)

    def _notify(self, result: ScenarioResult) -> None:
        """Hand ``result`` to ``on_result``. An exception from a hook is pytest's
        ``INTERNALERROR``, so a closed output is kept, and the run told to stop, instead."""
        if self.on_result is None or self.output_closed is not None:
            return
        try:
            self.on_result(result, len(self.order), self.total)
        except BrokenPipeError as error:
            self.output_closed = error
            if self._session is not None:
                reason = "the reader of the output closed it"
                self._session.shouldstop = reason
                # Under ``-n N`` the controller's loop (pytest-xdist's ``DSession``) reads its
                # own flag, not the session's: without it the workers were handed every
                # scenario, and ``run -n 2 | head -1`` cost what the whole run costs.
                dsession = self._session.config.pluginmanager.getplugin("dsession")
                if dsession is not None:
                    dsession.shouldstop = reason

    def ordered(self) -> list[ScenarioResult]:
        """Results in the suite's reading order: smoke assertions in spec order, then install,
        rules and failures features, each in file order (pytest collects them alphabetically)."""
        index = {nodeid: position for position, nodeid in enumerate(self.collected)}
        keys = sorted(self.order, key=lambda key: index.get(key, len(index)))
        results = [self.results[key] for key in keys if key in self.results]
        return sorted(results, key=_reading_order)


class _RefuseCollectionErrors:
    """pytest plugin: a file among the features that cannot be collected (a ``conftest.py``
    that raises, a ``test_*.py`` that does not import, a feature pytest-bdd refuses) is a usage
    error naming the file, the line and the reason, before any scenario runs.

    pytest stops such a session as ``INTERRUPTED``, the exit status of Ctrl-C: ``run`` printed
    "interrupted" (exit 130) with no file or reason, and under ``-n N`` each error was a failed
    ``(collection)`` row (exit 1), read as the implementation failing."""

    def __init__(self, rootdir: Path) -> None:
        self.rootdir = rootdir.resolve()
        self.problems: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.problems.append(collection_problem(report, self.rootdir))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """First of the checks: a step defined in a ``conftest.py`` that failed would otherwise
        be reported as a step no definition matches."""
        if self.problems:
            raise pytest.UsageError("a file of the features cannot be collected: " + "; ".join(self.problems))


#: A traceback entry, in pytest's format (``path:12: in f``) or Python's (``File "path", line 12``).
_TRACEBACK_ENTRY = re.compile(
    r'^(?:(?P<path>\S[^\n]*?):(?P<line>\d+): in |\s*File "(?P<native>[^"]+)", line (?P<native_line>\d+))',
    re.MULTILINE,
)
_LOCATED = re.compile(r"^\S+:\d+: ")


def collection_problem(report: pytest.CollectReport, rootdir: Path) -> str:
    """``<file>:<line>: <reason>`` for a failed collection: the reason is the exception's last
    line; the line is the deepest traceback entry in a file under ``rootdir`` (the user's
    ``conftest.py`` or module, not pytest's or importlib's frames), else the collected node.
    Paths are shown relative to the current directory, as ``--features`` was given."""
    text = str(report.longrepr)
    lines = [line for line in text.splitlines() if line.strip()]
    crash = getattr(report.longrepr, "reprcrash", None)
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    reason = str(crash.message) if crash is not None else (errors or lines or ["cannot be collected"])[-1]
    reason = reason.strip()
    if _LOCATED.match(reason):  # already ``<file>:<line>: ...`` (a feature pytest-bdd refused)
        return reason
    where = _shown(rootdir / report.nodeid.split("::", 1)[0]) if report.nodeid else _shown(rootdir)
    for entry in _TRACEBACK_ENTRY.finditer(text):
        path = Path(entry["path"] or entry["native"])
        path = (path if path.is_absolute() else Path.cwd() / path).resolve()
        if path.is_relative_to(rootdir):
            where = f"{_shown(path)}:{entry['line'] or entry['native_line']}"
    return f"{where}: {reason}"


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when it is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def failure_detail(failed_step: dict[str, str], errors: list[dict[str, Any]] | None) -> str:
    """Why a scenario failed, for its author: the failing step, what it expected (the step's own
    words), what was observed (the step's message) and every error the implementation threw (Pi
    records each as ``extension_error``)."""
    step = f"{failed_step.get('keyword', '')} {failed_step.get('step', '')}".strip()
    lines = [
        f"failing step: {step}",
        f"expected: {failed_step.get('step', '')}",
        f"observed: {failed_step.get('message', '')}",
    ]
    if errors:
        lines.append(f"the implementation threw {len(errors)} error(s):")
        lines += [f"  {e.get('where') or '?'} ({e.get('event') or '?'}): {e.get('error')}" for e in errors]
    else:
        lines.append("the implementation threw no error")
    return "\n".join(lines)


_GROUPS = ("smoke", "install", "rules", "failures")


def _reading_order(result: ScenarioResult) -> tuple[str, int, str]:
    parts = result.feature_file.replace("\\", "/").split("/")
    group = parts[-2] if len(parts) >= 2 else ""
    rank = _GROUPS.index(group) if group in _GROUPS else len(_GROUPS)
    return (parts[0] if len(parts) > 2 else "", rank, result.feature_file)


def _scenario_steps(report: pytest.TestReport) -> list[dict[str, Any]]:
    context = test_report_context_registry.get(report)
    if context is None:
        return []
    steps = context.scenario.get("steps", [])
    return [dict(step) for step in steps]


def run_suite(
    *,
    target: str = "sim",
    extension: str = "reference",
    tags: str | None = None,
    keyword: str | None = None,
    seed: int = 0,
    workdir: Path | None = None,
    junit: Path | None = None,
    cucumber: Path | None = None,
    features: Path | None = None,
    extra_args: list[str] | None = None,
    on_result: Callable[[ScenarioResult, int, int], None] | None = None,
    environment: dict[str, str] | None = None,
    workers: int = 0,
    pi_version: str | None = None,
) -> SuiteRun:
    """Run the suite (or the feature files under ``features``, a file or a directory, with the
    stock steps and those of a ``conftest.py`` beside them) against ``extension`` on ``target``
    (``pi_version``: the real Pi release ``target="pi"`` drives, default the pinned one).

    Never raises for failing scenarios; raises :class:`SuiteUsageError` when pytest refuses the
    arguments. Without ``workdir`` the machines go to a temporary directory that is removed
    when the run passed (``SuiteRun.kept`` False) and kept when it did not.

    ``workers`` > 0 runs the scenarios in that many pytest-xdist processes (``run -n N``): every
    scenario has its own machine under its own work directory, so they are independent; the
    results, in reading order, and the reports are those of a serial run.
    """
    if features is None:
        paths, rootdir = [str(SUITE_DIR)], SUITE_DIR
    else:
        features = features.resolve()
        rootdir = features if features.is_dir() else features.parent
        paths = [str(features)]
    temporary = workdir is None
    root = make_temporary_directory("pi-continuity-harness-run-", target) if workdir is None else workdir
    args = _session_args(paths, rootdir, target, extension, seed, root)
    if pi_version is not None:
        args += ["--pi-version", pi_version]
    if tags:
        args += ["-m", tags]
    if keyword:
        args += ["-k", keyword]
    if workers > 0:
        _check_setup_serially([*args, *(extra_args or [])], root if temporary else None, rootdir)
    if junit is not None:
        args += [f"--junitxml={junit}"]
    if cucumber is not None:
        args += [f"--cucumberjson={cucumber}"]
    if workers > 0:
        args += ["-p", "xdist", "-n", str(workers)]
    args += _unused_in_this_session(rootdir, workers, extra_args or [])
    if temporary:  # removed unread when it passes: only failed scenarios' records are kept
        args += ["--observation-records", "failed"]
    args += extra_args or []
    reports_tracebacks = junit is not None or cucumber is not None
    reports_tracebacks |= any(arg.startswith("--alluredir") for arg in extra_args or [])
    collector = _Collector(on_result, native_tracebacks=not reports_tracebacks)
    started = time.perf_counter()
    # pytest prints a usage error to stderr and returns 4: keep what it prints, to raise it.
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            exit_code = pytest.main(args, plugins=[collector, _RefuseCollectionErrors(rootdir)])
    except BaseException:
        sys.stderr.write(errors.getvalue())
        if temporary:
            remove_owned(root)
        raise
    if exit_code == pytest.ExitCode.USAGE_ERROR or collector.output_closed is not None:
        if temporary:
            remove_owned(root)
        if collector.output_closed is not None:
            raise collector.output_closed
        raise SuiteUsageError(_usage_message(errors.getvalue()))
    sys.stderr.write(errors.getvalue())
    run = SuiteRun(
        target=target,
        implementation=extension,
        environment=environment or default_environment(target, pi_version),
        results=collector.ordered(),
        exit_code=int(exit_code),
        seconds=time.perf_counter() - started,
        workdir=root,
        interrupted=collector.interrupted,
    )
    # Kept only for a scenario that failed (and printed where): a passing run, and one that was
    # interrupted before anything failed, leave nothing behind.
    if temporary and not run.failed:
        remove_owned(root)
        run.kept = False
    return run


def run_batch(
    runs: Mapping[str, tuple[str, Collection[str]]],
    *,
    workdir: Path,
    target: str = "sim",
    seed: int = 0,
    extra_args: list[str] | None = None,
    first_failure: bool = False,
) -> dict[str, SuiteRun | SuiteUsageError]:
    """Several runs of the suite in one pytest session: for each label of ``runs``, the scenarios
    tagged with one of its tags against its implementation, ``(extension, tags)``, as
    :func:`run_suite` runs them with ``extension=`` and ``tags="<tag> or <tag> ..."``.

    Every pytest session collects the whole suite and reads the step library again: three
    quarters of the CPU time of :func:`run_suite` for a mutant's few scenarios. Here each
    selected scenario is a test of its own per run (parametrized with
    :data:`~.pytest_plugin.BATCH_PARAM`, which gives its ``world`` that implementation), with its
    own machine under ``workdir``, so one session serves them all. Each label gets the
    :class:`SuiteRun` of its scenarios alone (their names as :func:`run_suite` prints them), or
    the :class:`SuiteUsageError` of an implementation that does not load; the others still run.

    The implementations must be of one system (the session deselects another system's
    features) and distinct. They share this process, as the runs of :func:`run_suite` in one
    process do: an implementation that changes a module must restore it (a blitz mutant's
    ``patched``) or start from the reference as shipped (:mod:`pi_continuity_harness.mutants.pristine`).

    ``first_failure``: a run ends at its first failed (or erroring) scenario, and the rest of its
    scenarios are reported skipped (``"killed by an earlier scenario"``). A mutant's kill test
    needs one failure: the blitz kill tests ran every scenario of every mutant's rules, most
    of them after the one that had already killed it.
    """
    extensions = [extension for extension, _tags in runs.values()]
    if len(set(extensions)) != len(extensions):
        raise ValueError("two runs of a batch name one implementation")
    out: dict[str, SuiteRun | SuiteUsageError] = {}
    loaded: dict[str, tuple[str, frozenset[str]]] = {}
    for label, (extension, tags) in runs.items():
        try:
            preflight.check_implementation(target, extension)
        except preflight.SetupError as error:
            out[label] = SuiteUsageError(str(error))
            continue
        loaded[label] = (extension, frozenset(tags))
    if len({registry.implementation_system(extension).name for extension, _tags in loaded.values()}) > 1:
        raise ValueError("the implementations of a batch are of one system")
    if not loaded:
        return out
    first = next(iter(loaded.values()))[0]
    args = _session_args([str(SUITE_DIR)], SUITE_DIR, target, first, seed, workdir) + (extra_args or [])
    args += _unused_in_this_session(SUITE_DIR, 0, extra_args or [])
    batch = _Batch(loaded, first_failure=first_failure)
    collector = _Collector(None, native_tracebacks=True)
    errors = io.StringIO()
    started = time.perf_counter()
    try:
        with contextlib.redirect_stderr(errors):
            exit_code = pytest.main(args, plugins=[collector, _RefuseCollectionErrors(SUITE_DIR), batch])
    except BaseException:
        sys.stderr.write(errors.getvalue())
        raise
    if exit_code == pytest.ExitCode.USAGE_ERROR:
        raise SuiteUsageError(_usage_message(errors.getvalue()))
    sys.stderr.write(errors.getvalue())
    seconds = time.perf_counter() - started
    grouped: dict[str, list[ScenarioResult]] = {label: [] for label in loaded}
    for result in collector.ordered():
        owner = batch.labels.get(result.nodeid)
        if owner is None:  # not a scenario of one run (none is): it counts against every run
            for results in grouped.values():
                results.append(result)
            continue
        plain = batch.plain[result.nodeid]
        scenario = result.name.removesuffix(printed_name("", result.nodeid))  # its " [<row>-<label>]"
        result.name = printed_name(scenario, plain)
        grouped[owner].append(result)
    for label, (extension, _tags) in loaded.items():
        results = grouped[label]
        failed = any(r.status in ("failed", "error") for r in results)
        code = int(exit_code)
        if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
            code = 1 if failed else (0 if results else 5)
        out[label] = SuiteRun(
            target=target,
            implementation=extension,
            environment=default_environment(target),
            results=results,
            exit_code=code,
            seconds=seconds,
            workdir=workdir,
            interrupted=collector.interrupted,
        )
    return {label: out[label] for label in runs}


class _Batch:
    """pytest plugin of :func:`run_batch`: every scenario that one of the runs selects becomes one
    test per such run (the run's label is its id), deselected where its tags (pytest's marks, as
    ``-m`` reads them) match none of that run's."""

    def __init__(
        self, runs: Mapping[str, tuple[str, frozenset[str]]], *, first_failure: bool = False
    ) -> None:
        self.runs = runs
        self.first_failure = first_failure
        #: The labels of the runs with a failed scenario (``first_failure``).
        self.failed: set[str] = set()
        self.label_of = {extension: label for label, (extension, _tags) in runs.items()}
        #: Node id -> the label of its run.
        self.labels: dict[str, str] = {}
        #: Node id -> the node id the scenario has in a run of its own (the label's id left out).
        self.plain: dict[str, str] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """After pytest-bdd's Examples rows: the run's id comes last (``[<row>-<label>]``)."""
        template = scenario_wrapper_template_registry.get(metafunc.function)
        if template is None:
            return
        # Every tag a test of the scenario can have: a superset, checked per test below.
        tags = set(template.tags) | set(template.feature.tags)
        if template.rule is not None:
            tags |= set(template.rule.tags)
        for examples in template.examples:
            tags |= set(examples.tags)
        chosen = [label for label, (_extension, wanted) in self.runs.items() if wanted & tags]
        metafunc.fixturenames.append(BATCH_PARAM)
        metafunc.parametrize(BATCH_PARAM, [self.runs[label][0] for label in chosen], ids=chosen)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            callspec = getattr(item, "callspec", None)
            label = self.label_of.get(callspec.params.get(BATCH_PARAM)) if callspec is not None else None
            marks = {mark.name for mark in item.iter_markers()}
            if label is None or not marks & self.runs[label][1]:
                dropped.append(item)
                continue
            kept.append(item)
            self.labels[item.nodeid] = label
            own, row = f"[{label}]", f"-{label}]"  # a scenario, an Examples row
            nodeid = item.nodeid
            self.plain[nodeid] = nodeid[: -len(own)] if nodeid.endswith(own) else nodeid[: -len(row)] + "]"
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """``first_failure``: a scenario of a run that already failed one is skipped before its
        fixtures (its machine) are made."""
        if self.first_failure and self.labels.get(item.nodeid) in self.failed:
            pytest.skip(KILLED_EARLIER)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.first_failure and report.failed:
            label = self.labels.get(report.nodeid)
            if label is not None:
                self.failed.add(label)


#: Why :func:`run_batch` with ``first_failure`` skipped a scenario.
KILLED_EARLIER = "killed by an earlier scenario of its run"


#: Plug-ins installed beside the harness that the stock suite has no use for: syrupy (snapshot
#: tests: hooks on every report, on the collected items and at the session's end) and
#: Hypothesis's (hooks on every test's call and report). A run of feature files of your own
#: keeps them (a ``conftest.py`` beside them may use them). Without them a whole run of the
#: PSC suite on the simulator took 1.3 % fewer instructions (callgrind, issue 16).
_UNUSED_BY_THE_SUITE = ("-p", "no:syrupy", "-p", "no:hypothesispytest")


#: Plug-ins installed beside the harness that a session of the stock suite uses only when asked
#: for (pytest loads every ``pytest11`` entry point at start): pytest-xdist's two (``-n N``) and
#: allure-pytest-bdd (``--alluredir``, ``run --allure``). Without them, ``run -k <one scenario>``
#: took 0.06 CPU-s less (their imports: execnet, allure_commons, attrs; issue 16).
_XDIST_PLUGINS = ("-p", "no:xdist", "-p", "no:xdist.looponfail")
_ALLURE_PLUGIN = ("-p", "no:allure_pytest_bdd")


#: pytest's own plug-ins that a session of the stock suite has no use for, with hooks on every
#: test: ``logging`` (two log handlers around each of a test's three phases and four more hook
#: calls, for the "Captured log" sections of its reports: nothing the suite runs logs, and neither
#: the JUnit XML, whose ``junit_logging`` is "no", nor the Cucumber JSON carries them), ``warnings``
#: (a ``catch_warnings`` around every test, whose warnings went to no terminal: a stock run
#: records none), ``unittest`` (``unittest.TestCase`` classes, and its ``SkipTest`` as a skip: the
#: suite has neither), ``tmpdir`` (``tmp_path``, and every report's outcome kept for its
#: retention policy), ``setuponly`` and ``setupplan`` (``--setup-only``, ``--setup-show``,
#: ``--setup-plan``: two hook implementations on every fixture's setup and teardown),
#: ``subtests`` (the ``subtests`` fixture) and ``doctest`` (``--doctest-modules``). Without them a
#: run of the PSC suite on the simulator took 1.0 % fewer instructions (cachegrind, issue 16).
#: Left out only when nothing else may want them (:func:`_only_the_harness_options`).
_BUILTINS_UNUSED_BY_THE_SUITE = (
    *("-p", "no:logging", "-p", "no:warnings", "-p", "no:unittest", "-p", "no:tmpdir"),
    *("-p", "no:setuponly", "-p", "no:setupplan", "-p", "no:subtests", "-p", "no:doctest"),
)

#: The options of the suite's own plug-in that the harness's commands pass as ``extra_args``
#: (``run --system``, the budget options, ``--observation-records``); each takes a value.
_HARNESS_OPTIONS = frozenset(
    {"--system", "--budget-ops", "--budget-virtual-seconds", "--budget-wall-seconds", "--observation-records"}
)


def _only_the_harness_options(extra_args: list[str]) -> bool:
    """Whether ``extra_args`` are only :data:`_HARNESS_OPTIONS` with their values, and
    ``PYTEST_ADDOPTS`` adds nothing: any other argument (``--log-level``, ``-o junit_logging=all``,
    ``-p`` a plug-in of yours that asks for ``tmp_path``) may need one of
    :data:`_BUILTINS_UNUSED_BY_THE_SUITE`."""
    if os.environ.get("PYTEST_ADDOPTS", "").strip():
        return False
    value_next = False
    for arg in extra_args:
        if value_next:
            value_next = False
            continue
        name, equals, _value = arg.partition("=")
        if name not in _HARNESS_OPTIONS:
            return False
        value_next = not equals
    return True


def _unused_in_this_session(rootdir: Path, workers: int, extra_args: list[str]) -> list[str]:
    """The ``-p no:`` arguments of :data:`_XDIST_PLUGINS` (a serial session),
    :data:`_ALLURE_PLUGIN` (no ``--alluredir``) and :data:`_BUILTINS_UNUSED_BY_THE_SUITE` (no
    argument but the harness's own) for a session of the stock suite; none for feature files of
    your own (a ``conftest.py`` beside them may use them)."""
    if rootdir != SUITE_DIR:
        return []
    unused = [*_XDIST_PLUGINS] if workers == 0 else []
    if not any(arg.startswith("--alluredir") for arg in extra_args):
        unused += _ALLURE_PLUGIN
    if _only_the_harness_options(extra_args):
        unused += _BUILTINS_UNUSED_BY_THE_SUITE
    return unused


def _session_args(
    paths: list[str], rootdir: Path, target: str, extension: str, seed: int, root: Path
) -> list[str]:
    """pytest's arguments for a run of the suite (:func:`run_suite`, :func:`run_batch`)."""
    return [
        *paths,
        "-c",
        str(SUITE_DIR / "suite.ini"),
        "--rootdir",
        str(rootdir),
        "--confcutdir",
        str(rootdir),
        "-p",
        PLUGIN,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:terminal",
        # pytest's unraisable-exception plugin collects the garbage of the whole process twice
        # when a session ends (``_pytest/unraisableexception.py``, ``gc_collect_harder``): 64 ms
        # of a mutant's 0.31 s in-process run, more in a large process. Its warnings were never
        # shown here (``no:terminal``); without it Python's own hook prints an unraisable
        # exception to stderr, which the caller sees.
        "-p",
        "no:unraisableexception",
        *(_UNUSED_BY_THE_SUITE if rootdir == SUITE_DIR else ()),
        "--target",
        target,
        "--extension",
        extension,
        "--seed",
        str(seed),
        "--harness-workdir",
        str(root),
    ]


def _check_setup_serially(args: list[str], temporary_root: Path | None, rootdir: Path) -> None:
    """Before a parallel run (``workers`` > 0), collect once in this process, running nothing:
    the plugin's setup checks (``pytest_collection_finish``: the target is installed, the
    implementation loads, every run directory fits the real-Pi layout) raise the one usage
    error a serial run gives. Under pytest-xdist those checks run in each worker, and a usage
    error there crashed the worker (``INTERNALERROR ... crashitem``) and was then reported as
    "selects no scenario". A file that cannot be collected is the same usage error
    (:class:`_RefuseCollectionErrors`), where the workers made it a failed ``(collection)`` row.
    Collecting the suite again costs about a second, against minutes of a parallel real-Pi run."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        exit_code = pytest.main([*args, "--collect-only"], plugins=[_RefuseCollectionErrors(rootdir)])
    if exit_code == pytest.ExitCode.USAGE_ERROR:
        if temporary_root is not None:
            remove_owned(temporary_root)
        raise SuiteUsageError(_usage_message(errors.getvalue()))


def _usage_message(printed: str) -> str:
    """pytest's usage error as one line (it prints ``ERROR: <message>``)."""
    message = " ".join(printed.replace("ERROR: ", " ").split()) or "pytest refused the arguments"
    if "'-k'" in message:
        message += (
            " (-k takes a scenario's or an assertion's name as printed, or a pytest keyword expression)"
        )
    return message


def default_environment(target: str, pi_version: str | None = None) -> dict[str, str]:
    """What the validation record names about the run's environment (spec §20: Pi version,
    Node version, OS). The simulator models Pi :data:`PI_VERSION`; the real-Pi target drives
    ``pi_version`` (default the same release)."""
    real = pi_version or PI_VERSION
    environment = {
        "harness": __version__,
        "host": f"simulated Pi {PI_VERSION}" if target == "sim" else f"Pi {real} (real, RPC mode)",
        "python": platform.python_version(),
        "os": platform.platform(),
    }
    if target == "pi":
        # The real-Pi target runs only on the pinned installation, verified to be this Node.
        from pi_continuity_harness.targets.realpi.install import NODE_VERSION  # noqa: PLC0415  (real Pi's modules load only when needed)

        environment["node"] = NODE_VERSION
        environment["pi"] = real
    return environment
