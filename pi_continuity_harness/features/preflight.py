"""Setup checked once, before any scenario: the features parse, the target runs, the
implementation loads.

Before these checks a setup mistake surfaced once per scenario: an unimportable
``--extension`` printed the same cut-off message in 84 failed rows (572 lines, exit 1), a
factory that raised failed every scenario the same way, a missing npm failed every real-Pi
scenario, and a Gherkin syntax error collapsed the suite into one ``(collection)`` row. Each is
now one :class:`SetupError`, raised before the first scenario runs: the command line prints it
as one line and exits 2; the suite's pytest plugin raises it as a ``pytest.UsageError``.

* :func:`check_features`: every ``.feature`` file parses (the file and line of the first error);
* :func:`check_target`: ``--target pi`` has Node 22 and Pi (1.6.0, or ``--pi-version``)
  installed (``pi-continuity-harness install-pi``); nothing is installed implicitly;
* :func:`check_implementation`: the implementation resolves (module imports, attribute exists,
  is callable) and its factory loads: a probe machine, in a temporary directory removed
  afterwards, is started with the implementation alone (a Python factory on the simulator, for
  either target: it is the same code in the real-Pi bridge; a TypeScript file on real Pi), so a
  factory that raises, or a TypeScript file Pi cannot load, is Pi's refusal to start, reported
  once.

A successful implementation check is remembered for the process, so the command line's check
and the plugin's (the suite runs in the same process) cost one probe.
"""

from __future__ import annotations

import codecs
import functools
import io
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_continuity_harness import targets
from pi_continuity_harness.cache_dir import default_cache_dir, kept
from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.implementations import (
    ImplementationError,
    check_chosen_system,
    resolve_implementation,
)
from pi_continuity_harness.scenario.owned_dirs import make_owned_directory, remove_owned
from pi_continuity_harness.scenario.workspace import workdir_problem

if TYPE_CHECKING:
    from pytest_bdd.gherkin_parser import GherkinDocument
    from pytest_bdd.parser import Feature

__all__ = [
    "FEATURE_ENCODING",
    "PROBE_PREFIX",
    "PYTEST_MARK_TAGS",
    "SetupError",
    "check_features",
    "check_implementation",
    "check_run_directories",
    "check_target",
    "feature_files",
    "read_feature",
]

#: Temporary directories of the harness are named ``pi-continuity-harness-*``.
PROBE_PREFIX = "pi-continuity-harness-probe-"
_TS_SUFFIXES = (".ts", ".mts", ".js", ".mjs")
#: ``pkg:<pi source>``: a Pi package installed with ``pi install`` (``targets.realpi.PACKAGE_PREFIX``).
_PACKAGE_PREFIX = "pkg:"
_CHECKED: set[tuple[str, str, str | None, str | None]] = set()
#: How feature files are read: UTF-8, a leading byte order mark skipped, as Cucumber does (an
#: editor's BOM was refused as "Unexpected token" on line 1, which did not name it).
FEATURE_ENCODING = "utf-8-sig"
#: pytest's own marks, which pytest-bdd makes of a tag of the same name, refused as tags: each
#: hides a scenario's verdict (a failing scenario counted as skipped, and the run, the null
#: check too, exited 0) or needs arguments a tag cannot give (``@parametrize`` broke collection).
PYTEST_MARK_TAGS = {
    "skip": "the scenario would never run, and the run pass",
    "skipif": "a tag cannot give it a condition: the scenario would never run, and the run pass",
    "xfail": "a failing scenario would count as skipped, and the run pass",
    "parametrize": "a tag cannot give it its arguments",
    "usefixtures": "a tag cannot give it its arguments",
    "filterwarnings": "a tag cannot give it its arguments",
}


class SetupError(HarnessError, ValueError):
    """A mistake in what a run was given, found before any scenario ran; one line, the cause."""


def feature_files(path: Path) -> list[Path]:
    """The ``.feature`` files of ``path`` (a file, or a directory searched recursively), sorted.

    Linked directories are entered, as pytest enters them: ``rglob`` did not, so a feature
    behind a link reached pytest unchecked. A link that leads back to a directory it is in (a
    loop) is a :class:`SetupError`, as is a file or directory reached twice through links:
    pytest collected the loop's features again at every level (41 times) and a file reached
    twice ran twice, each copy a verdict of its own."""
    if path.is_file():
        return [path]
    found: list[Path] = []
    seen: dict[Path, Path] = {}

    def visit(directory: Path, inside: tuple[Path, ...]) -> None:
        real = directory.resolve()
        if real in inside:
            raise SetupError(
                f"{directory}: a link back to {real}, a directory it is in (a loop): pytest would "
                "collect its features again at every level"
            )
        _once(directory, real, seen, "directory")
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            raise SetupError(f"{directory}: cannot be listed: {error.strerror}") from None
        for entry in entries:
            child = directory / entry.name
            if entry.is_dir():
                visit(child, (*inside, real))
            elif entry.name.endswith(".feature") and entry.is_file():
                _once(child, child.resolve(), seen, "file")
                found.append(child)

    visit(path, ())
    return sorted(found)


def _once(path: Path, real: Path, seen: dict[Path, Path], what: str) -> None:
    """``path`` (really ``real``) is reached for the first time, else a :class:`SetupError`."""
    first = seen.setdefault(real, path)
    if first != path:
        raise SetupError(
            f"{path}: the same {what} as {first} (through a link): its scenarios would run twice"
        )


def check_features(paths: Iterable[Path], *, option: str = "--features") -> list[Path]:
    """Read every feature file under ``paths`` (:func:`read_feature`); the files, or a
    :class:`SetupError` naming the first file and line that cannot be used (or a path that has
    no feature)."""
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise SetupError(f"{option} {path}: no such file or directory")
        if path.is_file() and path.suffix != ".feature":
            raise SetupError(f"{option} {path}: not a .feature file")
        files = feature_files(path)
        if not files:
            raise SetupError(f"{option} {path}: no .feature file in this directory")
        for file in files:
            read_feature(file)
        found += files
    return found


def read_feature(file: Path) -> Feature:
    """The feature of ``file`` as pytest-bdd parses it, or a :class:`SetupError` naming the file
    and line of every mistake in it that pytest-bdd would not report, or would report only when
    the scenario runs (as a failure of the implementation):

    * a Gherkin syntax error (its line), a file without ``Feature:`` or without a scenario;
    * two scenarios (or outlines) of one name, in one feature or across its ``Rule:`` blocks:
      pytest-bdd keeps one scenario per name, so only the last ran and the others were hidden;
    * a scenario without steps, or without a ``Then`` step: it checks nothing, and passed for
      any implementation (the null one too); a scenario without a name;
    * a tag that is one of pytest's own marks (``@skip``, ``@xfail``, ...: :data:`PYTEST_MARK_TAGS`).

    ``run`` reads every file before pytest starts; the plug-in's feature collector reads each
    the same way (plain pytest: a collection error with the same message)."""
    # pytest-bdd's parser only where feature files are read: ``explore`` and ``simulate`` import
    # this module for its other checks, and importing pytest with it was 0.13 CPU-s of every
    # such process (issue 16).
    from pytest_bdd.exceptions import GherkinParseError  # noqa: PLC0415
    from pytest_bdd.parser import FeatureParser  # noqa: PLC0415

    class Parser(FeatureParser):
        """pytest-bdd's parser, keeping the Gherkin document: its ``Feature`` keeps one
        scenario per name, the document has them all."""

        document: GherkinDocument | None = None

        def _parse_feature_file(self) -> GherkinDocument:
            self.document = _gherkin_document(self.abs_filename, self.encoding, super()._parse_feature_file)
            return self.document

    parser = Parser(str(file.parent), file.name, FEATURE_ENCODING)
    try:
        feature = parser.parse()
    except GherkinParseError as error:
        raise SetupError(
            f"{file}:{error.line}: {error.message} (line: {error.line_content.strip()!r})"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise SetupError(f"{file}: cannot be read: {error}") from None
    except KeyError:  # pytest-bdd's parser on a document without ``Feature:``
        raise SetupError(f"{file}: has no Feature (an empty file, or only comments)") from None
    if not feature.scenarios:
        raise SetupError(f"{file}: has no scenario")
    assert parser.document is not None
    problems = _same_names(parser.document) + _without_evidence(feature) + _pytest_marks(feature)
    if problems:
        raise SetupError("; ".join(f"{file}:{problem}" for problem in problems))
    _share_with_pytest_bdd(file, parser.abs_filename, feature)
    return feature


#: Where the parsed Gherkin documents of the stock suite's feature files are kept between
#: processes, under the harness's cache directory (:func:`_gherkin_document`).
DOCUMENT_CACHE = "features"


def _gherkin_document(
    abs_filename: str, encoding: str, parse: Callable[[], GherkinDocument]
) -> GherkinDocument:
    """The Gherkin document of a feature file, as pytest-bdd's ``get_gherkin_document`` parses it
    (``parse``); for a file of the stock suite, the one an earlier process kept in the harness's
    cache (:data:`DOCUMENT_CACHE`, :func:`~pi_continuity_harness.cache_dir.kept`), if any.

    Every harness process that runs the suite reads its 80 feature files first, and Gherkin's
    parser took 0.10 of the 0.12 CPU-s of that reading (``gherkin/parser.py``, ``match_token``:
    every line tried against every token type); loading the kept documents takes 0.01 (issue
    16: ``run -k <one scenario>``, the test command's hundreds of such processes). The
    document is a function of the file's text alone, so it is kept under the file's bytes, the
    encoding they are read with, and the versions of pytest-bdd (whose classes it is) and
    Gherkin's parser; a file that does not parse raises from ``parse`` as before and is not
    kept. Feature files of your own (``--features``) are never kept: only the suite's, whose
    count is fixed.

    The document kept is parsed from the very bytes of its key, as pytest-bdd's
    ``get_gherkin_document`` parses a file's text (``pytest_bdd/gherkin_parser.py``): were it
    ``parse()``, which reads the file again, a file changing between the two reads (a checkout
    during a run) would be kept under its older bytes and given for them later. Text that
    does not decode or parse is left to ``parse()``, and nothing is kept: pytest-bdd's own
    reading raises its error, which names the line."""
    from gherkin.errors import CompositeParserException  # noqa: PLC0415
    from gherkin.parser import Parser  # noqa: PLC0415
    from pytest_bdd.gherkin_parser import GherkinDocument  # noqa: PLC0415  (as read_feature)

    from pi_continuity_harness.features import SUITE_DIR  # noqa: PLC0415  (this package's own __init__)

    if not abs_filename.startswith(f"{SUITE_DIR}{os.sep}"):
        return parse()
    try:
        data = Path(abs_filename).read_bytes()
    except OSError:
        return parse()

    def parsed() -> GherkinDocument:
        # As ``open(abs_filename, encoding=encoding).read()`` reads it: universal newlines.
        text = io.TextIOWrapper(io.BytesIO(data), encoding=encoding).read()
        return GherkinDocument.from_dict(Parser().parse(text))

    key = [_parser_versions().encode(), encoding.encode(), data]
    try:
        return kept(DOCUMENT_CACHE, key, parsed, lambda document: isinstance(document, GherkinDocument))
    except (CompositeParserException, UnicodeDecodeError):
        return parse()


@functools.cache
def _parser_versions() -> str:
    """What a kept Gherkin document depends on besides its file's text."""
    from importlib.metadata import version  # noqa: PLC0415

    return f"pytest-bdd {version('pytest-bdd')}; gherkin {version('gherkin-official')}"


def _share_with_pytest_bdd(file: Path, abs_filename: str, feature: Feature) -> None:
    """Give pytest-bdd the feature just read, so that its own reading of the file in this
    process (``pytest_bdd/feature.py``, ``get_feature``: the suite's ``scenarios()``, a
    feature file's collector) does not parse it again. ``run`` reads every file before pytest
    starts, and pytest-bdd then parsed the run's system's files a second time: 52 of the 132
    parses of ``run -k <one scenario>``, 0.05 CPU-s (issue 16).

    pytest-bdd keeps the first feature it parses of a path for the whole process (its
    ``features`` dictionary, keyed by the absolute file name), so an entry it already has is
    left alone, as its own reading would leave it. Only a file without a byte order mark: the
    suite's ``scenarios()`` reads UTF-8 and this module ``utf-8-sig``, the same text unless the
    file starts with one. And only a file named by its absolute path, without ``..``: the
    feature's ``rel_filename`` (``<directory>/<file>``, in pytest-bdd's messages) is made of
    the directory as given, and pytest-bdd's own callers give the absolute one."""
    from pytest_bdd import feature as bdd_feature  # noqa: PLC0415  (as the parser above)

    if abs_filename in bdd_feature.features or str(file) != abs_filename:
        return
    try:
        with open(abs_filename, "rb") as stream:
            if stream.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8:
                return
    except OSError:
        return
    bdd_feature.features[abs_filename] = feature


def _without_evidence(feature: Feature) -> list[str]:
    """``<line>: ...`` for every scenario that would pass for any implementation, an empty one
    (no step) or one that checks nothing (no ``Then`` step, its Background's included), and
    for one without a name (printed as ``test_``; the table, ``-k`` and the reports name
    scenarios by it)."""
    problems = []
    for scenario in feature.scenarios.values():
        line, name = scenario.line_number, scenario.name
        if not name.strip():
            problems.append(f"{line}: a scenario without a name: the results name each scenario")
        elif not scenario.steps:
            problems.append(f"{line}: scenario {name!r} has no steps: it would pass for any implementation")
        elif not any(step.type == "then" for step in scenario.steps):
            problems.append(
                f"{line}: scenario {name!r} has no Then step: it checks nothing, so it would pass "
                "for any implementation"
            )
    return problems


def _pytest_marks(feature: Feature) -> list[str]:
    """``<line>: ...`` for every tag of a scenario (its feature's, rule's and Examples' too)
    that is one of pytest's own marks (:data:`PYTEST_MARK_TAGS`), at the scenario's line."""
    problems = []
    for scenario in feature.scenarios.values():
        tags = scenario.tags | feature.tags | (scenario.rule.tags if scenario.rule is not None else set())
        tags |= {tag for examples in scenario.examples for tag in examples.tags}
        problems += [
            f"{scenario.line_number}: @{tag}: pytest's own mark, refused as a tag ({PYTEST_MARK_TAGS[tag]}); "
            "choose what runs with --tags or -k"
            for tag in sorted(tags & PYTEST_MARK_TAGS.keys())
        ]
    return problems


def _same_names(document: GherkinDocument) -> list[str]:
    """``<line>: ...`` for every scenario named as an earlier one of the feature (its rules'
    scenarios too)."""
    scenarios = []
    for child in document.feature.children:
        if child.scenario is not None:
            scenarios.append(child.scenario)
        elif child.rule is not None:
            scenarios += [part.scenario for part in child.rule.children if part.scenario is not None]
    first: dict[str, int] = {}
    problems = []
    for scenario in scenarios:
        line = first.setdefault(scenario.name, scenario.location.line)
        if line != scenario.location.line:
            problems.append(
                f"{scenario.location.line}: a second scenario named {scenario.name!r} (the first is at "
                f"line {line}): pytest-bdd keeps one scenario per name, so only the last would run; "
                "name each scenario differently"
            )
    return problems


def check_target(target: str, pi_version: str | None = None) -> None:
    """``pi``: Node 22 and Pi ``pi_version`` (default 1.6.0) are installed (checked with
    ``node --version`` and ``pi --version``); the simulator needs nothing. A release the
    real-Pi target cannot drive is a :class:`SetupError` naming the supported ones."""
    if target != "pi":
        return
    from pi_continuity_harness.targets.realpi.install import (  # noqa: PLC0415  (real Pi's modules load only when needed)
        UnsupportedPiVersionError,
        check_pi_version,
        find_installation,
    )

    try:
        version = check_pi_version(pi_version)
    except UnsupportedPiVersionError as error:
        raise SetupError(f"--pi-version {pi_version}: {error}") from None
    if find_installation(version=version) is not None:
        return
    npm = shutil.which("npm")
    needs = (
        "it needs npm, which is on PATH"
        if npm
        else "it needs npm, which is not on PATH: install Node.js first"
    )
    raise SetupError(
        f"--target pi: real Pi {version} is not installed in {default_cache_dir()}; "
        f"run `pi-continuity-harness install-pi{'' if pi_version is None else f' --pi-version {version}'}` "
        f"first ({needs})"
    )


def check_run_directories(target: str, run_directories: Iterable[Path]) -> None:
    """Every scenario's run directory can be used: where one exists it is a directory, empty or
    a harness run directory (``scenario.workspace.workdir_problem``: the harness never clears
    anything else), and, on ``pi``, it is short enough for the real-Pi machine layout
    (``scenario/layout.py``: Pi's machine root is exactly ``WORK_PATH_LENGTH`` characters, so a
    run directory may have at most two fewer). Checked once for the whole selection, before any
    scenario runs: the target itself would refuse each scenario in turn, one failure per
    scenario, for what is one mistake in ``--workdir``."""
    run_directories = list(run_directories)
    for directory in run_directories:
        problem = workdir_problem(directory)
        if problem is not None:
            raise SetupError(f"--workdir {Path(directory).resolve().parent}: {problem}")
    if target != "pi":
        return
    from pi_continuity_harness.scenario.layout import WORK_PATH_LENGTH  # noqa: PLC0415

    longest = max((Path(p).resolve() for p in run_directories), key=lambda p: len(str(p)), default=None)
    if longest is None or len(str(longest)) <= WORK_PATH_LENGTH - 2:
        return
    raise SetupError(
        f"--workdir {longest.parent}: a scenario would run in {longest} ({len(str(longest))} "
        f"characters); the real-Pi target lays Pi's machine out at a path of exactly "
        f"{WORK_PATH_LENGTH} characters, so a run directory may have at most "
        f"{WORK_PATH_LENGTH - 2}: choose a work directory of at most "
        f"{WORK_PATH_LENGTH - 2 - len(str(longest)) + len(str(longest.parent))} characters"
    )


def check_implementation(
    target: str, extension: str, *, system: str | None = None, pi_version: str | None = None
) -> None:
    """The implementation ``extension`` resolves and loads on ``target`` (``sim`` or ``pi``).

    A TypeScript file (``--target pi`` only) must exist; anything else must resolve to a
    callable factory. Then a probe machine is started with the implementation alone and closed:
    Pi refusing to start (an extension that fails to load) is a :class:`SetupError` with Pi's
    reason.
    """
    key = (target, extension, system, pi_version if target == "pi" else None)
    if key in _CHECKED:
        return
    typescript = extension.endswith(_TS_SUFFIXES)
    if extension.startswith(_PACKAGE_PREFIX):
        # An installed Pi package (the release gate): only real Pi can install and load it.
        if target != "pi":
            raise SetupError(f"--extension {extension}: an installed Pi package runs only with --target pi")
        typescript = True
    elif typescript:
        if target != "pi":
            raise SetupError(
                f"--extension {extension}: a TypeScript implementation runs only with --target pi"
            )
        if not Path(extension).is_file():
            raise SetupError(f"--extension {extension}: no such TypeScript file")
    else:
        try:
            resolve_implementation(extension)
            check_chosen_system(extension, system)
        except ImplementationError as error:
            raise SetupError(str(error)) from None
    # A Python factory is the same code on both targets (on real Pi it runs in the bridge), so
    # the simulator proves it loads in milliseconds; only a TypeScript file needs Pi itself (a
    # probe start costs a real-Pi scenario's seconds).
    _probe("pi" if typescript else "sim", extension, system, pi_version)
    _CHECKED.add(key)


def _probe(target: str, extension: str, system: str | None, pi_version: str | None) -> None:
    name: targets.TargetName = "pi" if target == "pi" else "sim"
    directory = make_owned_directory(PROBE_PREFIX)
    try:
        probe = targets.make_target(
            name, extension, directory / "machine", seed=0, system=system, pi_version=pi_version
        )
        try:
            probe.start(Scenario(name="setup-probe"))
        except targets.TargetStartError as error:
            reason = (str(error).splitlines() or ["Pi refused to start"])[0]
            raise SetupError(f"--extension {extension}: the implementation does not load: {reason}") from None
        except targets.TargetUnavailableError as error:
            raise SetupError(f"--target {target}: {error}") from None
        except ImplementationError as error:
            raise SetupError(str(error)) from None
        finally:
            probe.close()
    finally:
        remove_owned(directory)
