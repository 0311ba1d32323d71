"""The whole release gate: static checks, pack, a registry on 127.0.0.1, Pi installs, the
suite through the installed package, removal; one :class:`GateResult` for the record.

Order and why: the static checks and ``npm pack`` come first, and a package failing one is not
published or installed (a release gate does not ship what it already rejected; the install
checks are then ``not-run``; ``keep_going`` installs it anyway, to see what a user would meet).
Then Verdaccio starts on 127.0.0.1, the ``--with-package``
dependencies and the package's tarball are published to it, and each install source runs in its
own workspace (:mod:`.install`). The suite (optional) runs through the npm install, with the
registry in ``PI_HARNESS_NPM_REGISTRY``. Verdaccio is stopped in ``finally``.
"""

from __future__ import annotations

import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.package.install import SOURCES, SourceRun, Transcript, gate_source, python_env
from pi_continuity_harness.package.model import Check, failed
from pi_continuity_harness.package.pack import pack
from pi_continuity_harness.package.registry import VERDACCIO_VERSION, publish, running_registry
from pi_continuity_harness.package.source import PackageInput, open_package
from pi_continuity_harness.package.static import StaticResult, static_gate
from pi_continuity_harness.targets.realpi import PiInstallation

__all__ = ["GateResult", "SuiteHook", "SuiteOutcome", "run_gate"]


@dataclass
class SuiteOutcome:
    """What the suite run through the installed package reported, for the record."""

    command: str
    checks: list[Check]
    #: The suite's own results (``SuiteRun.to_json()``).
    results: dict[str, Any]
    seconds: float


#: Runs the suite through ``npm:<name>@<version>`` served by the registry URL.
SuiteHook = Callable[[str, str], SuiteOutcome]


@dataclass
class GateResult:
    name: str
    version: str
    input: str
    static: StaticResult
    environment: dict[str, str]
    registry: dict[str, Any] = field(default_factory=dict)
    published: list[Transcript] = field(default_factory=list)
    sources: list[SourceRun] = field(default_factory=list)
    suite: SuiteOutcome | None = None
    timings: dict[str, float] = field(default_factory=dict)
    #: Why the install half did not run (None: it ran).
    stopped: str | None = None

    @property
    def checks(self) -> list[Check]:
        out = list(self.static.checks)
        for run in self.sources:
            out.extend(run.checks)
        if self.suite is not None:
            out.extend(self.suite.checks)
        return out

    @property
    def ok(self) -> bool:
        return not failed(self.checks) and self.stopped is None


def _version(argv: list[str], env: dict[str, str]) -> str:
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip().lstrip("v") or "unknown"


def environment(installation: PiInstallation, npm_env: dict[str, str]) -> dict[str, str]:
    return {
        "pi": installation.pi_version,
        "node": installation.node_version,
        "npm": _version(["npm", "--version"], npm_env),
        "verdaccio": VERDACCIO_VERSION,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
    }


def run_gate(
    package: PackageInput,
    installation: PiInstallation,
    workdir: Path,
    npm_env: dict[str, str],
    *,
    sources: Sequence[str] = SOURCES,
    with_packages: Sequence[Path] = (),
    command: str = "continuity",
    static_only: bool = False,
    keep_going: bool = False,
    suite: SuiteHook | None = None,
    log: Callable[[str], None] = lambda _line: None,
    system: str | None = None,
) -> GateResult:
    started = time.monotonic()
    static = static_gate(package, installation, workdir / "pack", npm_env, system)
    result = GateResult(
        package.name, package.version, package.display, static, environment(installation, npm_env)
    )
    result.timings["static+pack"] = round(time.monotonic() - started, 2)
    if static_only:
        return result
    if failed(static.checks) and not keep_going:
        result.stopped = "a static check failed: the package was not published or installed"
        return result
    log(f"packed {static.packed.tarball.name}; starting Verdaccio {VERDACCIO_VERSION} on 127.0.0.1")
    step = time.monotonic()
    with running_registry(installation, workdir / "registry", npm_env) as registry:
        result.registry = {"url": registry.url, "start_s": registry.start_s, "verdaccio": VERDACCIO_VERSION}
        for index, extra in enumerate(with_packages):
            with open_package(extra, tmp_dir=workdir) as dependency:
                packed = pack(dependency, workdir / "pack" / f"with-{index}", npm_env)
                output = publish(registry, packed.tarball, npm_env)
                result.published.append(
                    Transcript("publish", f"npm publish {packed.tarball.name}", "", 0, output, 0.0)
                )
        output = publish(registry, static.packed.tarball, npm_env)
        result.published.append(
            Transcript("publish", f"npm publish {static.packed.tarball.name}", "", 0, output, 0.0)
        )
        result.timings["registry+publish"] = round(time.monotonic() - step, 2)
        bridge = python_env(installation)
        for source in sources:
            step = time.monotonic()
            log(f"== install source {source}")
            result.sources.append(
                gate_source(
                    source,
                    installation,
                    workdir / "sources" / source,
                    name=package.name,
                    version=package.version,
                    tarball=static.packed.tarball,
                    registry_url=registry.url,
                    npm_cache=Path(npm_env["npm_config_cache"]),
                    bridge_env=bridge,
                    command=command,
                    tree=None if package.tarball is not None else package.root,
                    repository=package.manifest.get("repository"),
                    log=log,
                )
            )
            result.timings[f"source:{source}"] = round(time.monotonic() - step, 2)
        if suite is not None:
            step = time.monotonic()
            log("== the suite through the installed package")
            result.suite = suite(f"npm:{package.name}@{package.version}", registry.url)
            result.timings["suite"] = round(time.monotonic() - step, 2)
    result.timings["total"] = round(time.monotonic() - started, 2)
    return result
