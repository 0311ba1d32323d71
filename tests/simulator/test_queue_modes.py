"""The steering and follow-up queue modes on the simulator (pi-agent-core agent.js:60-86): one
queued message per turn by default, all of them in mode ``all``, from the settings when the
session is made (sdk.js:283-284) or from RPC ``set_steering_mode``/``set_follow_up_mode``.
Compared with real Pi in ``tests/realpi/test_differential_queue_modes.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.simulator.settings import SettingsManager

from .helpers import base, run


def _held(*during: dict[str, Any]) -> dict[str, Any]:
    return {"text": "a reply that waits " * 6, "stream": {"upto": 20, "then": "hold"}, "during": list(during)}


def _agent_requests(result: Any) -> int:
    records = result.host.trace.records
    return sum(
        1 for r in records if r["kind"] == "model" and r["name"] == "request" and r.get("caller") == "agent"
    )


@pytest.mark.parametrize(("mode", "requests"), [("one-at-a-time", 3), ("all", 2)])
def test_two_steering_messages_take_two_turns_or_one(tmp_path: Path, mode: str, requests: int) -> None:
    steer = [{"prompt": {"text": f"steer {n}", "streaming_behavior": "steer"}} for n in (1, 2)]
    scenario = base(
        operations=[{"set_steering_mode": mode}, {"prompt": "go"}],
        model={"agent": [_held(*steer), {"text": "a"}, {"text": "b"}][:requests]},
    )
    result = run(tmp_path, scenario)
    assert _agent_requests(result) == requests


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("{}", "one-at-a-time"),
        ('{"steeringMode": ""}', "one-at-a-time"),  # ``||``: an empty string takes the default
        ('{"steeringMode": "all"}', "all"),
        ('{"queueMode": "all"}', "all"),  # migrated when read
        ('{"queueMode": "all", "steeringMode": "one-at-a-time"}', "one-at-a-time"),
    ],
)
def test_the_steering_mode_read_from_the_settings(tmp_path: Path, text: str, mode: str) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(text, encoding="utf-8")
    manager = SettingsManager.create(
        str(tmp_path / "project"), str(tmp_path / "agent"), project_trusted=False
    )
    assert manager.get_steering_mode() == mode
