"""The bridge's compiled modules go to the harness's cache, never beside an extension's files
(``targets/realpi/install.py``, ``bytecode_cache_env``).

Every real-Pi scenario starts a bridge that imports the harness and the extension under test;
with ``PYTHONDONTWRITEBYTECODE`` it compiled them all at every start. The cache keeps the
bytecode and the promise that no ``__pycache__`` appears in an extension's directory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import CommandOp
from pi_continuity_harness.targets.realpi import PiInstallation, PiTarget, bytecode_cache_env

pytestmark = pytest.mark.realpi


def test_the_bridge_keeps_bytecode_in_the_cache_and_none_beside_the_extension(
    tmp_path: Path, command_probe: Callable[[str, str], tuple[str, PiInstallation]]
) -> None:
    spec, installation = command_probe("bytecode_probe", "hello from a compiled module")
    extension_dir = tmp_path / "extension"
    target = PiTarget(spec, tmp_path / "run", installation=installation)
    try:
        model = {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000}
        target.start(parse_scenario({"name": "bytecode", "models": [model]}))
        outcome = target.perform(CommandOp.model_validate({"command": "/hello"}))
        notes = target.observe().notifications
    finally:
        target.close()
    assert outcome.ok and ("hello from a compiled module", "info") in notes
    assert not list(extension_dir.rglob("__pycache__")), "no bytecode beside the extension's files"
    prefix = Path(bytecode_cache_env(installation.cache_dir)["PYTHONPYCACHEPREFIX"])
    assert prefix.is_relative_to(installation.cache_dir)
    compiled = [p.name for p in prefix.rglob("bytecode_probe.*.pyc")]
    assert compiled, f"the extension's module compiled into {prefix}"
    assert list(prefix.rglob("bridge_runtime.*.pyc")), "and the bridge's own modules"
