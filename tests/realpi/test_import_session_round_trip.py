"""Issue 12 item 9 on real Pi: a session recorded on real Pi 1.6, imported, replayed on the simulator.

``tests/fixtures/sessions/record*.yaml`` are played on real Pi with the null implementation; the
session file Pi writes is imported (``import-session``'s check, with the windows and the settings
the recording ran with) and simulated; the replay must have the same entry sequence:
types, order, parent links, compaction entries, the replies' stop reasons and usage
(:func:`session_shape`). The committed fixtures (``recorded-*.jsonl``, which the tests without
real Pi replay) must have the shape of a fresh recording, so they stay what real Pi writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_continuity_harness.commands.import_session import checked_import
from pi_continuity_harness.scenario import load_scenario, session_shape
from pi_continuity_harness.simulator.simulation import simulate
from pi_continuity_harness.targets.realpi import PiTarget
from pi_continuity_harness.targets.sim import SimTarget

pytestmark = pytest.mark.realpi

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
SETTINGS = json.loads((FIXTURES / "settings.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("record", "fixture"),
    [
        ("record.yaml", "recorded-on-pi-1.6.jsonl"),
        ("record-automatic.yaml", "recorded-automatic-on-pi-1.6.jsonl"),
        ("record-mid-run.yaml", "recorded-mid-run-on-pi-1.6.jsonl"),
    ],
)
def test_a_session_recorded_on_real_pi_replays_after_import(
    targets: Callable[..., PiTarget | SimTarget], tmp_path: Path, record: str, fixture: str
) -> None:
    scenario = load_scenario(FIXTURES / record)
    pi = targets("pi", "null")
    pi.start(scenario)
    for op in scenario.operations:
        assert pi.perform(op).ok
    [recorded] = sorted(Path(pi.observe().session_dir).glob("*.jsonl"))
    shape = session_shape(recorded)
    assert "compaction" in [item[0] for item in shape]

    imported, verdict = checked_import(
        str(recorded), context_window=20000, max_tokens=1000, settings=SETTINGS
    )
    assert verdict == f"replay check: the simulator reproduces all {len(shape)} entries"
    result = simulate(imported, workdir=tmp_path / "replay", implementation="null")
    [replayed] = result.session_files()
    assert session_shape(replayed) == shape
    assert session_shape(FIXTURES / fixture) == shape
