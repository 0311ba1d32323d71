"""Differential: the steering and follow-up queue modes, real Pi 1.6 against the simulator.

pi-agent-core's ``PendingMessageQueue`` (agent.js:60-86) hands the loop one queued message per
turn (``one-at-a-time``, the default) or all of them (``all``). The mode comes from the
settings' ``steeringMode``/``followUpMode`` when the session is made (sdk.js:283-284; a legacy
``queueMode`` is migrated to ``steeringMode``, settings-manager.js:283-286) and from RPC
``set_steering_mode``/``set_follow_up_mode`` (rpc-mode.js:429-436), which also write the global
settings file. The simulator took one message per turn whatever the settings said.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi


def _held(*during: Any) -> dict[str, Any]:
    return {"text": "a reply that waits " * 6, "stream": {"upto": 20, "then": "hold"}, "during": list(during)}


def _queued(text: str, behavior: str) -> dict[str, Any]:
    return {"prompt": {"text": text, "streaming_behavior": behavior}}


def _users_per_request(observation: Observation) -> list[list[str]]:
    """The user texts each agent request ends with, after the last assistant message."""
    out = []
    for request in observation.requests("agent"):
        tail: list[str] = []
        for message in request.request.messages:
            if message.get("role") == "assistant":
                tail = []
            elif message.get("role") == "user":
                content = message.get("content")
                tail.append(content if isinstance(content, str) else str(content[0].get("text")))
        out.append(tail)
    return out


@pytest.mark.parametrize(
    ("settings", "ops", "together"),
    [
        ({}, [], False),
        ({"steeringMode": "all"}, [], True),
        ({"queueMode": "all"}, [], True),  # migrated to steeringMode when Pi reads the file
        ({}, [{"set_steering_mode": "all"}], True),
        ({"steeringMode": "all"}, [{"set_steering_mode": "one-at-a-time"}], False),
    ],
    ids=["default", "settings-all", "legacy-queueMode", "rpc-all", "rpc-back"],
)
def test_steering_messages_come_one_per_turn_or_all_at_once(
    targets: Targets, settings: dict[str, Any], ops: list[Any], together: bool
) -> None:
    held = _held(_queued("steer one", "steer"), _queued("steer two", "steer"))
    replies = [held, {"text": "after the steering"}, {"text": "after the second"}]
    sc = scenario({"agent": replies if not together else replies[:2]}, settings={"global": settings})
    real, sim = play(targets, sc, [*ops, {"prompt": "go"}])
    users = _users_per_request(real)
    if together:
        assert users[1:] == [["steer one", "steer two"]]
    else:
        assert users[1:] == [["steer one"], ["steer two"]]
    assert_equivalent(real, sim)


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
def test_follow_ups_come_one_per_turn_or_all_at_once(targets: Targets, mode: str) -> None:
    held = _held(_queued("later one", "followUp"), _queued("later two", "followUp"))
    together = mode == "all"
    replies = [held, {"text": "first follow-up answered"}] + ([] if together else [{"text": "second"}])
    sc = scenario({"agent": replies})
    real, sim = play(targets, sc, [{"set_follow_up_mode": mode}, {"prompt": "go"}])
    users = _users_per_request(real)
    assert users[1:] == ([["later one", "later two"]] if together else [["later one"], ["later two"]])
    settings = real.on_disk(real.agent_dir / "settings.json").read_text(encoding="utf-8")
    assert f'"followUpMode": "{mode}"' in settings
    assert settings == sim.on_disk(sim.agent_dir / "settings.json").read_text(encoding="utf-8")
    assert_equivalent(real, sim)


def test_clear_queue_drops_the_queued_steering_and_follow_up_messages(targets: Targets) -> None:
    """RPC ``clear_queue`` (agent-session.js:2055-2063) while a reply is held: neither queued
    message reaches the model, and the run ends after the held reply."""
    held = _held(_queued("steer dropped", "steer"), _queued("later dropped", "followUp"), "clear_queue")
    sc = scenario({"agent": [held, {"text": "the answer to next"}]})
    real, sim = play(targets, sc, [{"prompt": "go"}, {"prompt": "next"}])
    assert _users_per_request(real) == [["go"], ["next"]]
    assert [(h.outcome.name, h.outcome.ok) for h in real.held_operations][-1] == ("clear_queue", True)
    assert_equivalent(real, sim)
