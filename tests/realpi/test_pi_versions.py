"""The real-Pi target across Pi releases (issue 14): the version check, the install layout, the
per-release profiles and the capabilities they give the target, and, live on every release in
``$PI_HARNESS_PI_VERSIONS`` (default ``1.5.2,1.6.0``, installed on first use), the adaptations.

The tests above the line need no Pi; the ``realpi`` ones below it drive each release.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from pi_continuity_harness.cli import main
from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import Operation, normalise_operation_input
from pi_continuity_harness.targets.realpi import PiTarget
from pi_continuity_harness.targets.realpi import install as installer
from pi_continuity_harness.targets.realpi.install import (
    NODE_VERSION,
    PI_VERSION,
    SUPPORTED_PI_VERSIONS,
    PiInstallError,
    UnsupportedPiVersionError,
    check_pi_version,
    find_installation,
    install_pi,
    pi_dir_for,
)
from pi_continuity_harness.targets.realpi.versions import HOST_CAPABILITIES, PROFILES, profile_for
from pi_continuity_harness.targets.target import CAPABILITIES

EXTENSIONS = Path(__file__).parent / "extensions"
_OPS: TypeAdapter[Any] = TypeAdapter(Operation)
LIVE_VERSIONS = [
    v.strip() for v in os.environ.get("PI_HARNESS_PI_VERSIONS", "1.5.2,1.6.0").split(",") if v.strip()
]
_SUPPORTED = r"1\.0\.3, 1\.3\.0, 1\.4\.0, 1\.5\.0, 1\.5\.2, 1\.6\.0"


# ----------------------------------------------------------------------------- the version check
@pytest.mark.parametrize("bad", ["0.73.1", "0.87.1", "1.1.0", "1.5.1", "2.0.0", "latest", ""])
def test_an_unsupported_version_is_one_error_naming_it_and_the_supported_ones(bad: str) -> None:
    with pytest.raises(
        UnsupportedPiVersionError, match=rf"Pi '{re.escape(bad)}' is not supported: .*{_SUPPORTED}"
    ):
        check_pi_version(bad)


def test_the_default_and_a_leading_v() -> None:
    assert check_pi_version(None) == PI_VERSION == "1.6.0"
    assert check_pi_version("v1.5.2") == "1.5.2"
    assert (
        tuple(sorted(SUPPORTED_PI_VERSIONS, key=lambda v: tuple(map(int, v.split(".")))))
        == SUPPORTED_PI_VERSIONS
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["install-pi", "--pi-version", "0.73.0", "--quiet"],
        ["run", "--target", "pi", "--pi-version", "9.9.9"],
        ["compare", "--pi-version", "1.1.0"],
        ["matrix", "--pi-versions", "1.5.2,0.73.0"],
    ],
)
def test_bad_versions_exit_2_naming_the_version_and_the_supported_ones(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(cache))
    assert main(argv) == 2
    err = capsys.readouterr().err
    bad = next(a for a in argv[2:] if a[0].isdigit()).split(",")[-1]
    assert f"Pi '{bad}' is not supported" in err and re.search(_SUPPORTED, err), err
    assert len(err.strip().splitlines()) == 1
    assert not cache.exists()  # nothing installed, nothing written


def test_pi_version_needs_the_real_pi_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--pi-version", "1.5.2"]) == 2
    assert "only with --target pi" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "--target", "pi"], ["compare"]])
def test_a_release_not_installed_is_one_setup_error_naming_its_install_command(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The setup check before any scenario (features/preflight.py) asks for the release the run
    drives, not the pinned one: nothing is installed implicitly, nothing is written."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(cache))
    assert main([*argv, "--pi-version", "1.5.0", "--tags", "smoke"]) == 2
    err = capsys.readouterr().err
    assert "real Pi 1.5.0 is not installed" in err, err
    assert "install-pi --pi-version 1.5.0" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not cache.exists()


# ----------------------------------------------------------------------------- the install layout
def test_each_release_has_its_own_npm_project_beside_the_others(tmp_path: Path) -> None:
    dirs = [pi_dir_for(tmp_path, v) for v in SUPPORTED_PI_VERSIONS]
    assert [d.name for d in dirs] == [f"pi-{v}" for v in SUPPORTED_PI_VERSIONS]
    assert all(d.parent == tmp_path for d in dirs)


def test_1_0_3_installs_with_overrides_and_the_others_as_published(tmp_path: Path) -> None:
    installer._pi_project(tmp_path / "old", "1.0.3")
    manifest = json.loads((tmp_path / "old" / "package.json").read_text(encoding="utf-8"))
    # package.json:50 of 1.0.3 needs @earendil-works/chord@^1.0.3, which the registry never had;
    # its own packages are caret ranges that would float to the newest 1.x.
    assert manifest["overrides"]["@earendil-works/chord"] == "0.87.1"
    assert {k: v for k, v in manifest["overrides"].items() if "/pi-" in k} == {
        f"@earendil-works/pi-{name}": "1.0.3" for name in ("agent-core", "ai", "codemode", "mcp", "tui")
    }
    for version in SUPPORTED_PI_VERSIONS[1:]:
        installer._pi_project(tmp_path / version, version)
        assert json.loads((tmp_path / version / "package.json").read_text(encoding="utf-8")) == {
            "private": True
        }


def _fake_install(pi_dir: Path, marker: Path, version: str, cache: Path) -> None:
    package = pi_dir / "node_modules" / "@earendil-works" / "pi-coding-agent"
    (package / "dist").mkdir(parents=True)
    (package / "dist" / "cli.js").write_text("", encoding="utf-8")
    (package / "package.json").write_text(json.dumps({"bin": {"pi": "dist/cli.js"}}), encoding="utf-8")
    node = cache / "node22" / "node_modules" / ".bin" / "node"
    node.parent.mkdir(parents=True, exist_ok=True)
    node.write_text("", encoding="utf-8")
    marker.write_text(json.dumps({"node_version": NODE_VERSION, "pi_version": version}), encoding="utf-8")


def test_releases_are_found_beside_each_other_and_the_old_layout_still_counts_for_1_6_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The single-release layout of harness 0.1 (``pi/`` + ``install.json``, Pi 1.6.0) is still
    recognised, so an existing cache stays valid; each release has its own marker."""
    cache = tmp_path / "cache"
    _fake_install(cache / "pi", cache / "install.json", "1.6.0", cache)
    _fake_install(cache / "pi-1.5.2", cache / "pi-1.5.2" / "harness-install.json", "1.5.2", cache)
    # Verification runs `node --version` and `pi --version`; here each package answers its own.
    monkeypatch.setattr(
        installer,
        "_verify",
        lambda _node, cli, _cache: (NODE_VERSION, "1.5.2" if "pi-1.5.2" in str(cli) else "1.6.0"),
    )
    legacy = find_installation(cache)
    assert legacy is not None and legacy.pi_version == "1.6.0" and legacy.pi_package_dir.parts[-4] == "pi"
    beside = find_installation(cache, version="1.5.2")
    assert (
        beside is not None and beside.pi_version == "1.5.2" and beside.pi_package_dir.parts[-4] == "pi-1.5.2"
    )
    assert find_installation(cache, version="1.5.0") is None
    # A marker that names another release does not count.
    (cache / "pi-1.5.2" / "harness-install.json").write_text(
        json.dumps({"node_version": NODE_VERSION, "pi_version": "1.5.0"}), encoding="utf-8"
    )
    assert find_installation(cache, version="1.5.2") is None
    with pytest.raises(UnsupportedPiVersionError):
        find_installation(cache, version="0.73.0")


def test_a_verification_is_reused_by_other_processes_only_while_its_files_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``harness-verified.json`` spares a process ``pi --version`` when another verified the same
    files; a changed Node, CLI, package manifest, bundle directory or ``node_modules`` (or a
    record of other answers) runs the check again."""
    cache = tmp_path / "cache"
    pi_dir = cache / "pi-1.5.2"
    _fake_install(pi_dir, pi_dir / "harness-install.json", "1.5.2", cache)
    package = pi_dir / "node_modules" / "@earendil-works" / "pi-coding-agent"
    node = cache / "node22" / "node_modules" / ".bin" / "node"
    # An hour old, so that a change below gives a new modification time even within one tick
    # of the file system's clock.
    for path in (
        node,
        package / "dist" / "cli.js",
        package / "package.json",
        package / "dist",
        pi_dir / "node_modules",
    ):
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns - 3600 * 10**9, stat.st_mtime_ns - 3600 * 10**9))
    checks: list[Path] = []

    def verify(_node: Path, cli: Path, _cache: Path) -> tuple[str, str]:
        checks.append(cli)
        return NODE_VERSION, "1.5.2"

    monkeypatch.setattr(installer, "_verify", verify)

    def another_process() -> None:
        monkeypatch.setattr(installer, "_VERIFIED", {})
        found = find_installation(cache, version="1.5.2")
        assert found is not None and found.pi_version == "1.5.2"

    another_process()
    assert len(checks) == 1 and (pi_dir / "harness-verified.json").is_file()
    another_process()
    assert len(checks) == 1, "the same files were checked again"
    changes = [
        lambda: (package / "dist" / "cli.js").write_text("// another build\n", encoding="utf-8"),
        lambda: node.write_text("#!another node\n", encoding="utf-8"),
        lambda: (package / "package.json").write_text(
            json.dumps({"bin": {"pi": "dist/cli.js"}, "version": "x"}), encoding="utf-8"
        ),
        lambda: (package / "dist" / "chunk.js").write_text("", encoding="utf-8"),
        (pi_dir / "node_modules" / "a-dependency").mkdir,
    ]
    for number, change in enumerate(changes, start=2):
        change()
        another_process()
        assert len(checks) == number, f"change {number - 1} was not checked again"
        another_process()
        assert len(checks) == number
    record = json.loads((pi_dir / "harness-verified.json").read_text(encoding="utf-8"))
    record["pi_version"] = "1.5.0"
    (pi_dir / "harness-verified.json").write_text(json.dumps(record), encoding="utf-8")
    monkeypatch.setattr(installer, "_VERIFIED", {})
    assert find_installation(cache, version="1.5.2") is None, "a record of another release counted"
    assert len(checks) == len(changes) + 1


def test_install_without_npm_names_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(PiInstallError, match="npm is not on PATH"):
        install_pi(tmp_path / "cache", version="1.5.2")


# ----------------------------------------------------------------------------- the profiles
def test_every_supported_release_has_a_profile_and_1_6_0_lacks_nothing() -> None:
    assert set(PROFILES) == set(SUPPORTED_PI_VERSIONS)
    assert set(CAPABILITIES) >= HOST_CAPABILITIES
    assert profile_for(None) is PROFILES["1.6.0"]
    assert PROFILES["1.6.0"].capabilities == HOST_CAPABILITIES and not PROFILES["1.6.0"].lacks


def test_capabilities_only_ever_get_added_from_one_release_to_the_next() -> None:
    previous: frozenset[str] = frozenset()
    for version in SUPPORTED_PI_VERSIONS:
        capabilities = PROFILES[version].capabilities
        assert previous <= capabilities, f"{version} loses {sorted(previous - capabilities)}"
        previous = capabilities


def test_what_each_release_lacks() -> None:
    lacks = {v: set(PROFILES[v].lacks) for v in SUPPORTED_PI_VERSIONS}
    assert lacks["1.5.2"] == {"rpc-session-start-events"}
    assert lacks["1.5.0"] == lacks["1.5.2"] | {"reload-refused-while-busy"}
    assert lacks["1.4.0"] == lacks["1.5.0"] | {"saved-trust-decision", "pi-1.5-system-prompt"}
    assert lacks["1.3.0"] == lacks["1.4.0"] | {"uncapped-summary-output"}
    assert lacks["1.0.3"] == lacks["1.3.0"] | {"agent-settled-aborted", "busy-while-run-starts"}
    twice = [v for v in SUPPORTED_PI_VERSIONS if PROFILES[v].rpc_new_session_binds_twice]
    assert twice == ["1.0.3", "1.3.0", "1.4.0", "1.5.0", "1.5.2"]


def test_every_difference_cites_a_file_and_line_of_the_package() -> None:
    cite = re.compile(r"dist/[\w/.-]+\.js:\d+")
    for version, profile in PROFILES.items():
        for capability, why in profile.lacks.items():
            assert cite.search(why), f"{version} {capability}: {why!r} cites no dist/ file:line"
        if profile.rpc_new_session_binds_twice:
            assert cite.search(profile.rpc_new_session_binds_twice), version


def test_the_target_reports_the_capabilities_of_its_release(tmp_path: Path) -> None:
    new = PiTarget("reference", tmp_path / "a", pi_version="1.6.0", install=False).capabilities()
    old = PiTarget("reference", tmp_path / "b", pi_version="1.0.3", install=False).capabilities()
    assert new >= HOST_CAPABILITIES and new - old == set(PROFILES["1.0.3"].lacks)
    assert {"crash", "held-model-calls", "held-dialogs", "python-implementation", "fs-faults"} <= old
    assert PiTarget("reference", tmp_path / "c", install=False).pi_version == PI_VERSION
    with pytest.raises(UnsupportedPiVersionError):
        PiTarget("reference", tmp_path / "d", pi_version="0.73.0", install=False)


# ----------------------------------------------------------------------------- live, per release
@pytest.fixture(params=LIVE_VERSIONS)
def live_version(request: pytest.FixtureRequest) -> str:
    """A release of ``$PI_HARNESS_PI_VERSIONS``, installed on first use (skipped with the reason
    when it cannot be, a failure with ``PI_HARNESS_REQUIRE_REALPI=1``)."""
    version = str(request.param)
    required = os.environ.get("PI_HARNESS_REQUIRE_REALPI") == "1"
    if shutil.which("npm") is None and find_installation(version=version) is None:
        reason = f"realpi: npm is not on PATH and Pi {version} is not installed"
        if required:
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        install_pi(version=version)
    except PiInstallError as error:
        if required:
            raise
        pytest.skip(f"realpi: cannot install Pi {version}: {error}")
    return version


def _scenario() -> Any:
    return parse_scenario(
        {
            "name": "versions",
            "models": [{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000}],
            "model": {},
        }
    )


@pytest.mark.realpi
def test_a_new_session_runs_session_start_once_and_streams_what_the_release_streams(
    live_version: str, tmp_path: Path
) -> None:
    """RPC ``new_session`` on Pi <= 1.5.2 binds the new session's extensions twice; the target
    starts new sessions through ``ctx.newSession`` there, so every release shows one
    ``session_start``. Whether RPC streams the ``entry_appended`` of an entry the handler wrote is
    the release's own (capability ``rpc-session-start-events``)."""
    profile = profile_for(live_version)
    target = PiTarget(str(EXTENSIONS / "session_start_probe.ts"), tmp_path / "pi", pi_version=live_version)
    try:
        target.start(_scenario())
        outcomes = [
            target.perform(_OPS.validate_python(normalise_operation_input(op)))
            for op in ({"prompt": "hello"}, {"new_session": {"parent": True}})
        ]
        observation = target.observe()
        versions = target.versions()
    finally:
        target.close()
    assert [o.ok for o in outcomes] == [True, True], outcomes
    assert [e.get("reason") for e in observation.events("session_start")] == ["startup", "new"]
    probes = [e for e in observation.entries if e.get("customType") == "probe-start"]
    assert [e["data"] for e in probes] == [{"reason": "new", "n": 1}]
    streamed = {e.get("id") for e in observation.session("entry_appended")}
    assert (probes[0]["id"] in streamed) is ("rpc-session-start-events" in profile.capabilities)
    settled = observation.session("agent_settled")
    assert settled and all(e["aborted"] is False for e in settled)
    assert (versions["pi"], versions["host"]) == (live_version, f"Pi {live_version} (real, RPC)")


@pytest.mark.realpi
@pytest.mark.parametrize(
    ("replacement", "reason"), [("fork", "fork"), ("clone", "fork"), ("switch_session", "resume")]
)
def test_a_fork_a_clone_and_a_resume_run_session_start_once_on_every_release(
    live_version: str, tmp_path: Path, replacement: str, reason: str
) -> None:
    """RPC ``fork``, ``clone`` and ``switch_session`` on Pi <= 1.5.2 call ``rebindSession()`` after
    the runtime host already rebound (rpc-mode.js:496-520 in 1.5.2), so every ``session_start``
    handler ran twice there; the target replaces the session through the observer's
    ``ctx.fork``/``ctx.switchSession`` commands on those releases, as a user's ``/fork`` and
    ``/resume`` do."""
    target = PiTarget(str(EXTENSIONS / "session_start_probe.ts"), tmp_path / "pi", pi_version=live_version)
    ops: list[Any] = [{"prompt": "hello"}]
    ops += ["new_session", {"prompt": "again"}] if replacement == "switch_session" else []
    try:
        target.start(_scenario())
        outcomes = [
            target.perform(_OPS.validate_python(normalise_operation_input(op))) for op in [*ops, replacement]
        ]
        observation = target.observe()
    finally:
        target.close()
    assert [o.ok for o in outcomes] == [True] * len(outcomes), outcomes
    assert [e.get("reason") for e in observation.events("session_start")][-1] == reason
    probes = [e["data"] for e in observation.entries if e.get("customType") == "probe-start"]
    assert probes[-1] == {"reason": reason, "n": 1}
    assert [p["reason"] for p in probes].count(reason) == 1


@pytest.mark.realpi
def test_the_matrix_command_runs_each_release_and_names_the_lowest_passing_one(
    live_version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One scenario per implementation, on the live release: the progress line, the table, the
    JSON shape the report renders."""
    out_json = tmp_path / "matrix.json"
    code = main(
        [
            "matrix",
            "--pi-versions",
            live_version,
            "--extension",
            "reference",
            "--extension",
            "blitz",
            "-k",
            "manualcheckpointwritesartifact or newsessionstartseachextensiononce",
            "--json",
            str(out_json),
            "--report",
            str(tmp_path / "record"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"Pi {live_version} · reference: 1 passed, 0 failed, 0 skipped" in out
    assert f"Pi {live_version} · blitz: 1 passed, 0 failed, 0 skipped" in out
    assert f"reference: lowest Pi version on which everything that can run passes: {live_version}" in out
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["simulator_models"] == "1.6.0"
    [psc, blitz] = data["implementations"]
    assert (psc["system"], blitz["system"]) == ("pi-session-continuity", "pi-blitz-handoff")
    assert psc["lowest_passing_version"] == live_version and psc["pi_versions"] == [live_version]
    [row] = psc["rows"]
    assert row["assertion"] == "manual-checkpoint-writes-artifact"
    assert row["cells"][live_version]["status"] == "passed"
    record = json.loads((tmp_path / "record" / "validation-record.json").read_text(encoding="utf-8"))
    assert record["implementations"] == data["implementations"]
    assert (tmp_path / "record" / "reference" / live_version / "validation-record.md").is_file()
