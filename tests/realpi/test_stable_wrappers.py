"""The extension wrappers real Pi loads do not change from run to run, so jiti's transpile cache
serves them (``targets/realpi/wrappers.py``).

jiti names a cached transpile after the file's path and checks it against a hash of the file's
text (``getCache``, ``jiti/dist/jiti.cjs`` 2.7.0). Wrappers written into each run's directory,
with the run's options in their text, missed every time: each Pi start loaded Babel (about 70
ms of CPU) and the cache gained a file per run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import CommandOp
from pi_continuity_harness.targets.realpi import PiInstallation, PiTarget
from pi_continuity_harness.targets.realpi.install import cache_tmp_dir
from pi_continuity_harness.targets.realpi.wrappers import bridge_wrapper, competitor_wrapper, wrappers_dir


def test_a_bridge_wrapper_has_the_same_path_and_bytes_whatever_the_run_and_its_options(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first_run, second_run = tmp_path / "one", tmp_path / "two"
    first_run.mkdir()
    second_run.mkdir()
    first = bridge_wrapper(cache, first_run, "0-impl", {"spec": "a:b", "slot": "0-impl", "faults": "/x"})
    text = first.read_bytes()
    second = bridge_wrapper(cache, second_run, "0-impl", {"spec": "c:d", "slot": "0-impl", "faults": "/y"})
    assert second == first and second.read_bytes() == text
    assert first.is_relative_to(wrappers_dir(cache)) and not first.is_relative_to(first_run)
    assert json.loads((first_run / "0-impl.json").read_text(encoding="utf-8"))["spec"] == "a:b"
    assert json.loads((second_run / "0-impl.json").read_text(encoding="utf-8"))["spec"] == "c:d"
    assert b"a:b" not in text and b"c:d" not in text, "the options are not in the wrapper's text"
    other = bridge_wrapper(cache, first_run, "2-module", {"spec": "m:f", "slot": "2-module"})
    assert other != first, "each slot has its own wrapper (Pi loads each path once)"


def test_a_changed_wrapper_is_rewritten_and_an_unchanged_one_is_left_alone(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = competitor_wrapper(cache, "1-competitor-cancel", "cancel")
    good = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    assert competitor_wrapper(cache, "1-competitor-cancel", "cancel").stat().st_mtime_ns == stamp
    path.write_text("export default 1;\n", encoding="utf-8")
    assert competitor_wrapper(cache, "1-competitor-cancel", "cancel").read_bytes() == good
    assert [p.name for p in path.parent.iterdir()] == [path.name], "no temporary file left"


@pytest.mark.realpi
def test_a_second_run_loads_every_wrapper_from_jitis_cache(
    tmp_path: Path, command_probe: Callable[[str, str], tuple[str, PiInstallation]]
) -> None:
    spec, installation = command_probe("wrapper_probe", "hello through a cached wrapper")
    jiti = cache_tmp_dir(installation.cache_dir) / "jiti"
    scenario = parse_scenario(
        {
            "name": "wrappers",
            "models": [{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000}],
            "extensions": [{"implementation": True}, {"competitor": "cancel"}],
        }
    )
    cached: list[set[str]] = []
    for run in ("one", "two"):
        target = PiTarget(spec, tmp_path / run, installation=installation)
        try:
            target.start(scenario)
            outcome = target.perform(CommandOp.model_validate({"command": "/hello"}))
            notes = target.observe().notifications
        finally:
            target.close()
        assert outcome.ok and ("hello through a cached wrapper", "info") in notes
        cached.append({p.name for p in jiti.iterdir()})
    assert any("0-impl" in name for name in cached[0]), f"jiti cached the wrapper: {sorted(cached[0])}"
    assert cached[1] == cached[0], f"the second run transpiled again: {sorted(cached[1] - cached[0])}"
    wrappers = {p.stem for p in wrappers_dir(installation.cache_dir).iterdir()}
    assert wrappers == {"0-impl", "1-competitor-cancel"}
