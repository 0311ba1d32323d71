"""Bad input and the docs checks, without Pi (issue 13: "not a package ... one clear error naming
the file, exit 2"; spec §19)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.package import BLITZ_README_TOPICS, README_TOPICS, open_package
from pi_continuity_harness.package.docs import Topic, docs_checks

from .variants import FIXTURE


def _cli_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``package ARGS`` in a process of its own: what it writes to its stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "pi_continuity_harness.cli", "package", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``package ARGS`` through ``cli.main`` in this process, as :func:`_cli_process` runs it:
    each of these is refused before anything runs, so a process's start-up (0.5 of each test's
    0.6 CPU-s, issue 16) bought nothing; the exit status and what is printed are the same, and
    :func:`_cli_process` checks them as a process once."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli(["package", *args])
        except SystemExit as exit_:  # argparse's refusal of an option, as the process exits
            code = exit_.code if isinstance(exit_.code, int) else 1
    return subprocess.CompletedProcess(["package", *args], code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "package.json: no such file (not a package directory)"),
        (
            lambda d: (d / "package.json").write_text('{ "name": ', encoding="utf-8") and d,
            "package.json: invalid JSON",
        ),
        (
            lambda d: (d / "package.json").write_text("[1]", encoding="utf-8") and d,
            "package.json: not a JSON object",
        ),
        (
            lambda d: (d / "package.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8") and d,
            "package.json: invalid JSON (nested too deeply to read)",
        ),
        (lambda d: (d / "x.tgz").write_bytes(b"not gzip\n") and d / "x.tgz", "x.tgz: not a package tarball"),
    ],
    ids=["no-package-json", "invalid-json", "not-an-object", "nested-too-deeply", "not-a-tarball"],
)
@pytest.mark.filterwarnings("ignore")
def test_bad_input_is_one_error_naming_the_file_exit_2(make: object, message: str, tmp_path: Path) -> None:
    target = make(tmp_path)  # type: ignore[operator]
    before = sorted((p.name, p.stat().st_size) for p in tmp_path.rglob("*"))
    done = _cli(str(target))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(tmp_path) in lines[0], done.stderr
    assert sorted((p.name, p.stat().st_size) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("extra", [[], ["--command", "/foo"]], ids=["plain", "with-command"])
def test_an_error_is_prefixed_with_the_package_command(extra: list[str], tmp_path: Path) -> None:
    """Before: ``--command``'s value took the place of the subcommand's name in the message
    (``pi-continuity-harness continuity: ...``, ``pi-continuity-harness /foo: ...``)."""
    missing = tmp_path / "nonexist"
    done = _cli_process(str(missing), *extra)
    assert (done.returncode, done.stderr) == (
        2,
        f"pi-continuity-harness package: {missing}: no such file or directory\n",
    )


@pytest.mark.parametrize("static", [["--static"], []], ids=["static", "full-gate"])
def test_a_with_package_that_is_not_a_package_is_refused_before_the_gate(
    static: list[str], tmp_path: Path
) -> None:
    """Before: ``--static`` ignored it (exit 0), and the full gate found it only once the
    registry had started."""
    missing = tmp_path / "nonexist"
    done = _cli(str(FIXTURE), *static, "--with-package", str(missing))
    problem = (
        "--with-package: not with --static, which publishes nothing, installs nothing and runs no suite"
        if static
        else f"--with-package {missing}: no such file or directory"
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"pi-continuity-harness package: {problem}\n",
    )


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--sources", "npm"], "--sources"),
        (["--with-package", str(FIXTURE)], "--with-package"),
        (["--keep-going"], "--keep-going"),
        (["--suite", "smoke"], "--suite"),
        (["-k", "threshold"], "-k"),
        (["--sources", "local", "--suite", "none", "--keep-going"], "--sources, --keep-going, --suite"),
    ],
)
def test_an_option_static_would_ignore_is_refused_naming_it(
    options: list[str], named: str, tmp_path: Path
) -> None:
    """Before: ``--static --sources npm`` (and the others) exited 0, gating none of it."""
    done = _cli(str(FIXTURE), "--static", *options, "--json", str(tmp_path / "out.json"))
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"pi-continuity-harness package: {named}: not with --static, which publishes nothing, "
        "installs nothing and runs no suite\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_tarball_without_a_package_is_bad_input(tmp_path: Path) -> None:
    tarball = tmp_path / "empty.tgz"
    (tmp_path / "readme.txt").write_text("x", encoding="utf-8")
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(tmp_path / "readme.txt", arcname="readme.txt")
    done = _cli(str(tarball))
    assert done.returncode == 2 and "no package/package.json" in done.stderr


def test_every_readme_topic_of_the_fixture_is_found_and_two_wait_for_a_person() -> None:
    with open_package(FIXTURE) as package:
        checks = docs_checks(package)
    assert len(checks) == len(README_TOPICS) + 2
    assert {c.status for c in checks} == {"pass", "needs-a-person"}


@pytest.mark.parametrize("topic", [t for t in README_TOPICS], ids=lambda t: t.id)
def test_a_readme_without_a_topic_fails_that_topic(topic: object, tmp_path: Path) -> None:
    """Each topic's patterns removed from the README fail that topic's check (the check can fail)."""
    source = tmp_path / "pkg"
    shutil.copytree(FIXTURE, source)
    readme = (source / "README.md").read_text(encoding="utf-8")
    first = topic.patterns[0]  # type: ignore[attr-defined]
    stripped = "\n".join(line for line in readme.splitlines() if not re.search(first, line))
    (source / "README.md").write_text(stripped, encoding="utf-8")
    with open_package(source) as package:
        statuses = {c.name: c.status for c in docs_checks(package)}
    assert statuses[f"docs.readme:{topic.id}"] == "fail"  # type: ignore[attr-defined]


def test_a_changelog_without_the_version_and_a_license_that_is_not_mit_fail(tmp_path: Path) -> None:
    source = tmp_path / "pkg"
    shutil.copytree(FIXTURE, source)
    manifest = json.loads((source / "package.json").read_text(encoding="utf-8"))
    manifest["version"] = "0.3.0"
    (source / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (source / "LICENSE").write_text("Apache License 2.0\n", encoding="utf-8")
    with open_package(source) as package:
        statuses = {c.name: c.status for c in docs_checks(package)}
    assert statuses["docs.changelog-version"] == "fail" and statuses["docs.license-mit"] == "fail"


#: The documentation of a pi-blitz-handoff package (README, CHANGELOG, LICENSE; no code).
BLITZ_DOCS = Path(__file__).parent / "blitz_docs"
BLITZ = "pi-blitz-handoff"


def test_a_blitz_readme_is_checked_against_blitz_topics_and_passes() -> None:
    """Before: every package was held to Pi Session Continuity's topics (``/continuity``,
    ``session-continuity.json``), so a correct pi-blitz-handoff README failed."""
    with open_package(BLITZ_DOCS) as package:
        checks = docs_checks(package, BLITZ)
        psc = {c.name: c.status for c in docs_checks(package)}
    assert len(checks) == len(BLITZ_README_TOPICS) + 2
    assert {c.status for c in checks} == {"pass", "needs-a-person"}, [c for c in checks if c.status == "fail"]
    assert psc["docs.readme:quick-start"] == "fail"  # the PSC topics are not the blitz README's


def test_the_psc_fixture_readme_fails_the_blitz_topics() -> None:
    with open_package(FIXTURE) as package:
        statuses = {c.name: c.status for c in docs_checks(package, BLITZ)}
    assert statuses["docs.readme:settings"] == statuses["docs.readme:command-reference"] == "fail"


@pytest.mark.parametrize("topic", list(BLITZ_README_TOPICS), ids=lambda t: t.id)
def test_a_blitz_readme_without_a_topic_fails_that_topic(topic: Topic, tmp_path: Path) -> None:
    """Every pattern of a topic, removed alone, fails that topic (each pattern is needed)."""
    for pattern in topic.patterns:
        source = tmp_path / f"pkg{topic.patterns.index(pattern)}"
        shutil.copytree(BLITZ_DOCS, source)
        readme = (source / "README.md").read_text(encoding="utf-8")
        stripped = "\n".join(line for line in readme.splitlines() if not re.search(pattern, line))
        (source / "README.md").write_text(stripped, encoding="utf-8")
        with open_package(source) as package:
            statuses = {c.name: c.status for c in docs_checks(package, BLITZ)}
        assert statuses[f"docs.readme:{topic.id}"] == "fail", pattern


def test_an_unknown_system_is_one_error_naming_the_known_ones() -> None:
    """Before: an unknown ``--system`` silently got Pi Session Continuity's README topics."""
    done = _cli(str(FIXTURE), "--system", "blitz")
    assert done.returncode == 2
    assert "argument --system: invalid choice: 'blitz'" in done.stderr and "pi-blitz-handoff" in done.stderr
