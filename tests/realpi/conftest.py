"""Fixtures for the tests that drive a real Pi (marker ``realpi``): 1.6.0, or the supported
release named by ``$PI_HARNESS_PI_VERSION``.

Pi and Node 22 are installed once per session with ``install_pi()`` into the default cache
(``$PI_CONTINUITY_HARNESS_CACHE`` or ``~/.cache/pi-continuity-harness``). Without npm (and no
cached installation) or when the registry is unreachable, the tests are skipped with the
reason; set ``PI_HARNESS_REQUIRE_REALPI=1`` to make that a failure instead. Where a release
behaves differently, a test asks that release's profile (``targets/realpi/versions.py``)
what to expect, so the profile's claims are checked live.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from realpi.bridge_driver import started_zygote

from pi_continuity_harness.scenario.implementations import SESSION_CONTINUITY
from pi_continuity_harness.scenario.model_script import ModelOutcome, ModelRequest, ModelScript
from pi_continuity_harness.targets.realpi import (
    FakeModel,
    FakeModelServer,
    PiEnvironment,
    PiInstallation,
    PiInstallError,
    PiRpcProcess,
    PiTarget,
    PiVersionProfile,
    find_installation,
    install_pi,
    profile_for,
)
from pi_continuity_harness.targets.realpi.bridge_zygote import BridgeZygote
from pi_continuity_harness.targets.sim import SimTarget

EXTENSIONS = Path(__file__).parent / "extensions"

_COMMAND_PROBE = """\
def extension(pi):
    async def hello(args, ctx):
        ctx.ui.notify({message!r}, "info")

    pi.register_command("hello", hello)
"""


@pytest.fixture(scope="session")
def pi_installation() -> PiInstallation:
    required = os.environ.get("PI_HARNESS_REQUIRE_REALPI") == "1"
    version = os.environ.get("PI_HARNESS_PI_VERSION") or None
    if shutil.which("npm") is None and find_installation(version=version) is None:
        reason = "realpi: npm is not on PATH and no cached Pi installation exists (needs Node/npm)"
        if required:
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        return install_pi(version=version)
    except PiInstallError as exc:
        if required:
            raise
        pytest.skip(f"realpi: cannot install Node 22 / Pi {version or '1.6.0'}: {exc}")


@pytest.fixture(scope="session")
def pi_profile(pi_installation: PiInstallation) -> PiVersionProfile:
    """What the installed release lacks (``targets/realpi/versions.py``)."""
    return profile_for(pi_installation.pi_version)


@dataclass
class RealPi:
    server: FakeModelServer
    env: PiEnvironment
    pi: PiRpcProcess


OnHold = Callable[[PiRpcProcess, ModelRequest, ModelOutcome], None]


@pytest.fixture
def realpi(pi_installation: PiInstallation, tmp_path: Path) -> Iterator[Callable[..., RealPi]]:
    """Factory: fake server + isolated workspace + started Pi; all stopped at teardown."""
    stack = contextlib.ExitStack()
    counter = [0]

    def make(
        script: ModelScript,
        *,
        models: Sequence[FakeModel] = (FakeModel("fake-model", 20000, 1000),),
        project_settings: dict[str, Any] | None = None,
        extensions: Sequence[str | Path] = (),
        on_hold: OnHold | None = None,
        trust: Any = "always",
    ) -> RealPi:
        counter[0] += 1
        # The probes' extension calls are Brief syntheses: the continuity writer answers them.
        server = FakeModelServer(script, replies=SESSION_CONTINUITY.extension_replies)
        stack.callback(server.stop)
        server.start()
        env = PiEnvironment(
            pi_installation,
            server.base_url,
            models,
            root=tmp_path / f"ws{counter[0]}",
            trust=trust,
            project_settings=project_settings,
        )
        pi = env.process(extensions)
        stack.callback(pi.close)
        if on_hold is not None:
            hold = on_hold
            server.on_hold = lambda request, outcome: hold(pi, request, outcome)
        pi.start()
        return RealPi(server=server, env=env, pi=pi)

    try:
        yield make
    finally:
        stack.close()


@pytest.fixture
def python_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], str]:
    """Factory: ``python_extension(module, source)`` writes ``source`` as
    ``<tmp_path>/extension/<module>.py``, puts that directory first on ``sys.path`` (the
    simulator imports the extension from there; the bridge process inherits it as
    ``PYTHONPATH``) and returns the implementation spec ``"<module>:extension"``: the set-up of
    every differential test that defines its own extension."""
    directory = tmp_path / "extension"

    def make(module: str, source: str) -> str:
        directory.mkdir(exist_ok=True)
        (directory / f"{module}.py").write_text(source, encoding="utf-8")
        monkeypatch.syspath_prepend(str(directory))
        return f"{module}:extension"

    return make


@pytest.fixture
def targets(
    pi_installation: PiInstallation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., PiTarget | SimTarget]]:
    """Factory: ``targets("pi"|"sim", implementation)``; every target is closed at teardown.

    ``tests/realpi/extensions`` is put on ``sys.path`` first, so ``probe_ext:extension`` resolves
    in the simulator and (through the inherited ``PYTHONPATH``) in the bridge process.
    """
    monkeypatch.syspath_prepend(str(EXTENSIONS))
    made: list[PiTarget | SimTarget] = []

    def make(kind: str = "pi", implementation: str = "probe_ext:extension") -> PiTarget | SimTarget:
        workdir = tmp_path / f"{kind}{len(made)}"
        target: PiTarget | SimTarget
        if kind == "pi":
            target = PiTarget(implementation, workdir, installation=pi_installation)
        else:
            target = SimTarget(implementation, workdir)
        made.append(target)
        return target

    try:
        yield make
    finally:
        for target in made:
            target.close()


@pytest.fixture
def command_probe(
    tmp_path: Path, pi_installation: PiInstallation, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str, str], tuple[str, PiInstallation]]:
    """``make(module, message)``: a one-module Python extension in ``tmp_path/extension``, on the
    bridge's path, whose ``/hello`` command notifies ``message``; returns its spec and the
    installation with a private cache (``tmp_path/cache``), so what a run leaves in the cache
    (bytecode, jiti's transpiles, wrappers) is this test's alone."""

    def make(module: str, message: str) -> tuple[str, PiInstallation]:
        directory = tmp_path / "extension"
        directory.mkdir(exist_ok=True)
        (directory / f"{module}.py").write_text(_COMMAND_PROBE.format(message=message), encoding="utf-8")
        monkeypatch.syspath_prepend(str(directory))  # the bridge inherits it as PYTHONPATH
        return f"{module}:extension", dataclasses.replace(pi_installation, cache_dir=tmp_path / "cache")

    return make


@pytest.fixture
def zygote() -> Iterator[BridgeZygote]:
    """A bridge zygote for the test extensions (``tests/realpi/bridge_driver.py``)."""
    yield from started_zygote()
