"""The static half of the release gate (issue 13 items 1, 2, 5; spec §16, §17, §19).

Each broken variant of the fixture package fails exactly its own check and nothing else; the
passing fixture fails none; bad input is one error naming the file, exit status 2.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pi_continuity_harness.package import Check, failed, npm_env, open_package, static_gate
from pi_continuity_harness.targets.realpi import BRIDGE_PATH, PiInstallation
from pi_continuity_harness.targets.realpi.install import cache_tmp_dir

from .variants import FIXTURE, VARIANTS, Variant, make_variant

pytestmark = pytest.mark.realpi

#: Checks only a person can judge on the passing fixture (listed, never passed).
PERSON = {"docs.readme:product-paragraph", "docs.readme:core-invariant"}


def gate(installation: PiInstallation, path: Path, tmp: Path) -> list[Check]:
    env = npm_env(
        installation.env_path(), installation.cache_dir / "npm-cache", cache_tmp_dir(installation.cache_dir)
    )
    with open_package(path, tmp_dir=tmp) as package:
        return static_gate(package, installation, tmp / "pack", env).checks


def test_the_passing_fixture_fails_no_check_and_leaves_judgement_to_a_person(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    checks = gate(pi_installation, FIXTURE, tmp_path)
    assert failed(checks) == []
    assert {c.name for c in checks if c.status == "needs-a-person"} == PERSON
    assert {c.status for c in checks} == {"pass", "needs-a-person"}
    names = {c.name for c in checks}
    for expected in (
        "manifest.license",
        "manifest.type",
        "manifest.pi.extensions",
        "entry.default-export-factory",
        "deps.host-peer:@earendil-works/pi-coding-agent",
        "deps.runtime:pi-continuity-fixture-dep",
        "pack.imports-shipped",
        "docs.readme:troubleshooting",
        "docs.changelog-version",
        "docs.license-mit",
    ):
        assert expected in names


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.phase == "static"], ids=lambda v: v.name)
def test_each_broken_variant_fails_exactly_its_own_check(
    variant: Variant, pi_installation: PiInstallation, tmp_path: Path
) -> None:
    checks = gate(pi_installation, make_variant(variant, tmp_path / "src"), tmp_path)
    bad = failed(checks)
    assert [c.name for c in bad] == [variant.fails], [(c.name, c.detail) for c in bad]
    assert bad[0].file and bad[0].field


def test_a_package_that_fails_to_load_passes_every_static_check(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    """Its failure is the load after install (test_gate_on_real_pi), invisible statically."""
    variant = next(v for v in VARIANTS if v.phase == "load")
    assert failed(gate(pi_installation, make_variant(variant, tmp_path / "src"), tmp_path)) == []


def test_the_files_check_names_the_module_left_out(pi_installation: PiInstallation, tmp_path: Path) -> None:
    variant = next(v for v in VARIANTS if v.name == "files-omit-imported-module")
    (check,) = failed(gate(pi_installation, make_variant(variant, tmp_path / "src"), tmp_path))
    assert "src/bridge.ts" in check.detail and check.field == "files"


def test_a_tarball_is_gated_as_it_ships(pi_installation: PiInstallation, tmp_path: Path) -> None:
    """The tarball of the variant that leaves out an imported module: the import no longer
    resolves in what ships, so the same check fails."""
    variant = next(v for v in VARIANTS if v.name == "files-omit-imported-module")
    source = make_variant(variant, tmp_path / "src")
    tarball = tmp_path / "variant.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source).as_posix()
            if path.is_file() and not relative.startswith("src/") and relative not in ("package-lock.json",):
                tar.add(path, arcname=f"package/{relative}")
    (tmp_path / "t").mkdir()
    assert [c.name for c in failed(gate(pi_installation, tarball, tmp_path / "t"))] == [
        "pack.imports-shipped"
    ]


def test_an_entry_that_does_not_parse_fails_the_factory_check(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    source = make_variant(VARIANTS[0], tmp_path / "src")  # any copy; restore pi.extensions below
    (source / "package.json").write_text(
        (FIXTURE / "package.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    entry = source / "extensions/session-continuity/index.ts"
    entry.write_text("export default function (pi) { const x: number = ; }\n", encoding="utf-8")
    bad = failed(gate(pi_installation, source, tmp_path))
    assert "entry.default-export-factory" in [c.name for c in bad]


def test_the_fixture_ships_the_harness_bridge_verbatim() -> None:
    """The fixture is the Python reference behind the bridge: its copy must be the bridge."""
    assert (FIXTURE / "src" / "bridge.ts").read_bytes() == BRIDGE_PATH.read_bytes()


# ------------------------------------------------------------------------------------ bad input
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_continuity_harness.cli", "package", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


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
        (lambda d: (d / "x.tgz").write_bytes(b"not gzip\n") and d / "x.tgz", "x.tgz: not a package tarball"),
    ],
    ids=["no-package-json", "invalid-json", "not-an-object", "not-a-tarball"],
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


def test_a_tarball_without_a_package_is_bad_input(tmp_path: Path) -> None:
    tarball = tmp_path / "empty.tgz"
    (tmp_path / "readme.txt").write_text("x", encoding="utf-8")
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(tmp_path / "readme.txt", arcname="readme.txt")
    done = _cli(str(tarball))
    assert done.returncode == 2 and "no package/package.json" in done.stderr
