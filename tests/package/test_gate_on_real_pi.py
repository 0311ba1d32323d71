"""The release gate through Pi's own package manager (issue 13 items 3-5; spec §20).

The passing fixture goes through the whole gate — pack, Verdaccio on 127.0.0.1, ``pi install``
from the npm source, ``-l``, a local path and ``pi -e npm:``, the load from the installed package,
a subset of the suite through the installed package, ``pi remove`` — and its validation record is
written. This is the gate CI runs. The variant that fails to load after install fails exactly
its load check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.targets.realpi import PiInstallation

from .variants import FIXTURE, FIXTURE_DEP, VARIANTS, make_variant

pytestmark = [pytest.mark.realpi, pytest.mark.slow(seconds=22)]

#: The suite subset CI gates through the installed package (a full smoke + install run takes
#: about 8 minutes here; these two scenarios exercise a competitor loaded after the package and
#: the §20 status assertion).
CI_SUITE = "archives or status-reports"


def _gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_continuity_harness.cli", "package", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )


def test_the_passing_fixture_installs_loads_passes_the_suite_and_is_removed(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    report = tmp_path / "record"
    done = _gate(
        str(FIXTURE),
        "--with-package",
        str(FIXTURE_DEP),
        "-k",
        CI_SUITE,
        "--workdir",
        str(tmp_path / "work"),
        "--report",
        str(report),
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    record = json.loads((report / "validation-record.json").read_text(encoding="utf-8"))
    assert record["verdict"] == "pass"
    checks = {c["name"]: c for c in record["checks"]}
    for source in ("npm", "project", "local", "git"):
        for step in ("install", "settings", "load", "remove", "home-untouched"):
            assert checks[f"{step}:{source}"]["status"] == "pass", checks[f"{step}:{source}"]
    assert checks["load:one-run"]["status"] == "pass"
    suite = [c for c in record["checks"] if c["phase"] == "suite"]
    assert suite and all(c["status"] == "pass" for c in suite), suite
    assert record["environment"]["pi"] == "1.6.0" and record["environment"]["verdaccio"] == "6.10.4"
    npm = next(s for s in record["sources"] if s["source"] == "npm")
    assert npm["install_command"] == "npm:pi-session-continuity@0.2.0"
    assert "/continuity" in "\n".join(t["output"] for t in npm["transcripts"] if t["step"] == "load")
    git = next(s for s in record["sources"] if s["source"] == "git")
    assert git["install_command"] == "git:github.com/bernardofortes/pi-session-continuity@v0.2.0"
    assert (
        (report / "validation-record.md")
        .read_text(encoding="utf-8")
        .startswith("# Release gate: pi-session-continuity@0.2.0")
    )


def test_a_package_that_fails_to_load_after_install_fails_exactly_its_load_check(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    variant = next(v for v in VARIANTS if v.phase == "load")
    source = make_variant(variant, tmp_path / "src")
    json_path = tmp_path / "gate.json"
    done = _gate(
        str(source),
        "--with-package",
        str(FIXTURE_DEP),
        "--sources",
        "npm",
        "--suite",
        "none",
        "--workdir",
        str(tmp_path / "work"),
        "--json",
        str(json_path),
    )
    assert done.returncode == 1, done.stdout[-3000:]
    record = json.loads(json_path.read_text(encoding="utf-8"))
    failing = [c for c in record["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failing] == ["load:npm"], failing
    assert "Failed to load extension" in failing[0]["detail"]
    assert {c["name"]: c["status"] for c in record["checks"]}["remove:npm"] == "pass"


def test_a_static_failure_stops_the_gate_before_anything_is_published(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    variant = next(v for v in VARIANTS if v.name == "postinstall-script")
    json_path = tmp_path / "gate.json"
    done = _gate(str(make_variant(variant, tmp_path / "src")), "--json", str(json_path))
    assert done.returncode == 1
    record = json.loads(json_path.read_text(encoding="utf-8"))
    assert record["stopped"] and record["sources"] == [] and record["registry"] == {}


def test_an_install_script_that_writes_outside_the_agent_dir_is_caught_at_run_time(
    pi_installation: PiInstallation, tmp_path: Path
) -> None:
    """The static check stops a postinstall script; installed anyway (``--keep-going``), npm runs
    it during ``pi install`` (measured: npm 11 only warns) and ``home-untouched`` sees the file it
    left in HOME: the run-time check can fail on its own."""
    variant = next(v for v in VARIANTS if v.name == "postinstall-script")
    source = make_variant(variant, tmp_path / "src")
    manifest = json.loads((source / "package.json").read_text(encoding="utf-8"))
    manifest["scripts"]["postinstall"] = (
        "node -e \"require('fs').writeFileSync(require('os').homedir() + '/LEFT-BEHIND', 'x')\""
    )
    (source / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    json_path = tmp_path / "gate.json"
    done = _gate(
        str(source),
        "--with-package",
        str(FIXTURE_DEP),
        "--keep-going",
        "--sources",
        "npm",
        "--suite",
        "none",
        "--workdir",
        str(tmp_path / "work"),
        "--json",
        str(json_path),
    )
    assert done.returncode == 1
    record = json.loads(json_path.read_text(encoding="utf-8"))
    failing = [c for c in record["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failing] == ["manifest.no-install-scripts", "home-untouched:npm"], failing
    assert "LEFT-BEHIND" in failing[1]["detail"]


def test_settings_and_remove_checks_fail_when_pi_does_not_do_them(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``settings:*`` and ``remove:*`` judge what Pi did, and no package can make Pi's package
    manager misbehave, so the fault is planted in Pi's place: for the npm source ``pi remove``
    is replaced by ``pi list`` (a remove that removes nothing), for the local source the settings
    file loses its ``packages`` from ``pi install`` until ``pi list`` has run (it lists none). Each
    fails exactly its own check."""
    from pi_continuity_harness.cli import main  # noqa: PLC0415
    from pi_continuity_harness.package import install  # noqa: PLC0415

    real_run = install._Workspace.run
    kept: list[str] = []

    def faulty_run(
        self: install._Workspace, run: install.SourceRun, step: str, argv: list[str], **kw: object
    ) -> install.Transcript:
        if run.source == "npm" and step == "remove":
            argv = ["list"]
        settings = self.pi.agent_dir / "settings.json"
        done = real_run(self, run, step, argv, **kw)  # type: ignore[arg-type]
        if run.source == "local" and step == "install":
            kept.append(settings.read_text(encoding="utf-8"))
            settings.write_text(json.dumps({**json.loads(kept[0]), "packages": []}), encoding="utf-8")
        if run.source == "local" and step == "list":  # put back what Pi wrote: the rest goes on
            settings.write_text(kept.pop(), encoding="utf-8")
        return done

    monkeypatch.setattr(install._Workspace, "run", faulty_run)
    json_path = tmp_path / "gate.json"
    code = main(
        [
            "package", str(FIXTURE), "--with-package", str(FIXTURE_DEP), "--sources", "npm,local",
            "--suite", "none", "--keep-going", "--workdir", str(tmp_path / "work"), "--json", str(json_path),
            "--quiet",
        ]
    )  # fmt: skip
    assert code == 1
    record = json.loads(json_path.read_text(encoding="utf-8"))
    status = {c["name"]: c["status"] for c in record["checks"] if ":" in c["name"]}
    failing = sorted(name for name, s in status.items() if s == "fail")
    assert failing == ["remove:npm", "settings:local"], status
    assert status["settings:npm"] == status["remove:local"] == status["load:local"] == "pass"
