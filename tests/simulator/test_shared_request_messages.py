"""Recorded requests share their equal messages (simulator/model_service.py ``_shared``).

Every request carries the whole conversation and a run keeps every request (wire body and
parsed messages) for its observation; without sharing, memory grew with the square of the
session's length (bisected to 7d747eb: 400 turns, 8.0 -> 99.6 MiB traced; ~10 MiB with
sharing, bench/bench_simulator.py). The shared objects must be equal to what each request
sent, so the request files and traces keep their bytes.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.simulation import simulate

FILLER = " The work continues with more detail about the parser, the tests and the build."


def _scenario(prompts: int) -> dict[str, Any]:
    agent: list[dict[str, Any]] = []
    for i in range(prompts + 5):
        agent.append(
            {"text": f"step {i}", "tool_calls": [{"name": "bash", "arguments": {"command": f"echo {i}"}}]}
        )
        agent.append({"text": f"step {i} done." + FILLER})
    return {
        "name": "shared-messages",
        "seed": 1,
        "models": [{"id": "fake/fake-model", "context_window": 200000, "max_tokens": 1000}],
        "model": {"agent": agent},
        "operations": [{"prompt": {"text": f"prompt {i}:" + FILLER}} for i in range(prompts)],
    }


def _none(_pi: Any) -> None:
    """No extension."""


def test_equal_messages_of_later_requests_are_one_object(tmp_path: Path) -> None:
    result = simulate(parse_scenario(_scenario(12)), workdir=tmp_path / "run", implementation=_none)
    requests = result.host.service.requests
    assert len(requests) >= 20
    first, last = requests[0], requests[-1]
    assert last.messages[0] == first.messages[0] and last.messages[0] is first.messages[0]
    assert last.body["messages"][1] is first.body["messages"][1]
    # Distinct message objects grow with the conversation, not with the sum of its requests.
    parsed = {id(m) for r in requests for m in r.messages}
    wire = {id(m) for r in requests for m in r.body["messages"]}
    total = sum(len(r.messages) for r in requests)
    assert len(parsed) <= len(requests[-1].messages) + len(requests) and len(parsed) < total // 4
    assert len(wire) < total // 4


def test_what_each_request_sent_is_kept_as_it_was_sent(tmp_path: Path) -> None:
    """Sharing changes no request: each one's messages are the ones its file holds."""
    result = simulate(parse_scenario(_scenario(6)), workdir=tmp_path / "run", implementation=_none)
    requests = result.host.service.requests
    for earlier, later in itertools.pairwise(requests):
        assert later.messages[: len(earlier.messages) - 1] == earlier.messages[: len(earlier.messages) - 1]
    roles = [m["role"] for m in requests[-1].messages]
    assert roles.count("user") == 6 and "toolResult" in roles
