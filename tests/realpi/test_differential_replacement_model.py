"""Differential: the model and thinking level of a new session and of a fork, real Pi 1.6 against
the simulator.

Pi builds every runtime with the same factory (main.js ``createRuntime``, :650-770), which runs
``buildSessionOptions`` again: a process started with ``--model`` (the real-Pi target starts a
new session so) puts each new session and each fork back on that model, whatever ``set_model``
chose since; a process restarted with ``--session <file>`` has no ``--model``, so a new session
gets ``findInitialModel``'s choice (the first available model here) and a fork the branch's
model (sdk.js:83-143). The simulator kept the current model for both until differential
exploration found it (seed 9704: ``set_model``, ``new_session``, a prompt answered by the
``--model`` model on real Pi). Each test fails on the simulator before the fix
(``HostRuntimes._choose_model_and_thinking``); each also pins real Pi's own answer.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

_REPLIES = {"agent": [{"text": f"answer {n}"} for n in range(1, 5)]}


def _answered_by(observation: Observation) -> list[str]:
    """The model of each agent request, in order."""
    return [r.request.model for r in observation.model_requests if r.kind == "agent"]


def _levels(observation: Observation) -> list[tuple[str, Any]]:
    """Each ``model_change`` and ``thinking_level_change`` of the last session's file, in order."""
    out: list[tuple[str, Any]] = []
    for entry in observation.entries:
        if entry.get("type") == "model_change":
            out.append(("model", entry["modelId"]))
        elif entry.get("type") == "thinking_level_change":
            out.append(("thinking", entry["thinkingLevel"]))
    return out


def test_a_new_session_is_back_on_the_model_pi_was_started_with(targets: Targets) -> None:
    sc = scenario(_REPLIES)
    ops = [{"set_model": "fake/fake-big"}, {"prompt": "one"}, {"new_session": {}}, {"prompt": "two"}]
    real, sim = play(targets, sc, ops)

    assert _answered_by(real) == ["fake/fake-big", "fake/fake-model"]
    assert _answered_by(sim) == _answered_by(real)
    assert _levels(sim) == _levels(real) == [("model", "fake-model"), ("thinking", "off")]
    assert_equivalent(real, sim)


def test_a_fork_is_back_on_the_model_pi_was_started_with(targets: Targets) -> None:
    sc = scenario(_REPLIES)
    ops = [{"prompt": "one"}, {"set_model": "fake/fake-big"}, {"prompt": "two"}, {"fork": {"message": -1}}]
    real, sim = play(targets, sc, [*ops, {"prompt": "three"}])

    assert _answered_by(real) == ["fake/fake-model", "fake/fake-big", "fake/fake-model"]
    assert _answered_by(sim) == _answered_by(real)
    assert_equivalent(real, sim)


def test_after_a_restart_a_new_session_gets_the_first_available_model(targets: Targets) -> None:
    """Restarted with ``--session <file>`` (no ``--model``): the session restores its model, and
    a new session then gets ``findInitialModel``'s, the first model of models.json, not the
    one in use."""
    sc = scenario(_REPLIES, active_model="fake/fake-big")
    ops = [{"prompt": "one"}, {"restart": {}}, {"prompt": "two"}, {"new_session": {}}, {"prompt": "three"}]
    real, sim = play(targets, sc, ops)

    assert _answered_by(real) == ["fake/fake-big", "fake/fake-big", "fake/fake-model"]
    assert _answered_by(sim) == _answered_by(real)
    assert_equivalent(real, sim)


def _new_session_after_a_restart(targets: Targets, third: dict[str, Any], default: str) -> list[str]:
    """Started on ``fake-big``, restarted (no ``--model``), then a new session: the models that
    answered on real Pi, once both targets agree. ``third`` joins the two fake models;
    ``default`` (``provider/id``) is the settings' default model."""
    models = [
        {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
        {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
        third,
    ]
    provider, model_id = default.split("/")
    settings = {
        "project": {
            "compaction": {"enabled": True, "reserveTokens": 4000, "keepRecentTokens": 100},
            "defaultProvider": provider,
            "defaultModel": model_id,
        }
    }
    sc = scenario(_REPLIES, models=models, settings=settings, active_model="fake/fake-big")
    ops = [{"prompt": "one"}, {"restart": {}}, {"new_session": {}}, {"prompt": "two"}]
    real, sim = play(targets, sc, ops)
    assert _answered_by(sim) == _answered_by(real)
    assert_equivalent(real, sim)
    return _answered_by(real)


def test_after_a_restart_a_new_session_takes_the_settings_default_model_first(targets: Targets) -> None:
    """``findInitialModel`` (model-resolver.js:396-410): ``defaultProvider``/``defaultModel``
    come before the first available model."""
    other = {"id": "fake/fake-other", "context_window": 20000, "max_tokens": 1000}
    assert _new_session_after_a_restart(targets, other, "fake/fake-other") == [
        "fake/fake-big",
        "fake/fake-other",
    ]


def test_a_settings_default_model_without_auth_is_passed_over(targets: Targets) -> None:
    """``findInitialModel`` takes the settings' default only when its provider has auth
    (model-resolver.js:397-399); else the first available model (:412-424), here ``fake-model``,
    not the locked default nor the model in use before the restart."""
    locked = {"id": "locked/big", "context_window": 40000, "max_tokens": 1000, "auth": False}
    assert _new_session_after_a_restart(targets, locked, "locked/big") == ["fake/fake-big", "fake/fake-model"]


def test_after_a_restart_a_fork_takes_its_branchs_model(targets: Targets) -> None:
    """No ``--model`` after a restart: the fork restores the model its branch last chose
    (``getBranchSelection``: the reply before the fork point, ``fake-big``), not the one in use
    (``fake-model`` again) nor the one Pi first started with."""
    sc = scenario(_REPLIES)
    ops = [
        {"prompt": "one"},
        {"set_model": "fake/fake-big"},
        {"prompt": "two"},
        {"restart": {}},
        {"prompt": "three"},
        {"set_model": "fake/fake-model"},
        {"fork": {"message": 3}},
        {"prompt": "four"},
    ]
    real, sim = play(targets, sc, ops)

    assert _answered_by(real) == ["fake/fake-model", "fake/fake-big", "fake/fake-big", "fake/fake-big"]
    assert _answered_by(sim) == _answered_by(real)
    assert_equivalent(real, sim)


def test_a_new_session_takes_the_level_pi_was_started_with(targets: Targets) -> None:
    """``--thinking low`` on the command line: a new session is back on ``low`` after an
    extension-free switch to a model whose switch turned thinking off."""
    models = [
        {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
        {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
    ]
    sc = scenario(_REPLIES, models=models, thinking_level="low")
    ops = [{"set_model": "fake/fake-big"}, {"prompt": "one"}, {"new_session": {}}, {"prompt": "two"}]
    real, sim = play(targets, sc, ops)

    assert _levels(real) == [("model", "fake-model"), ("thinking", "low")]
    assert _levels(sim) == _levels(real)
    assert_equivalent(real, sim)


def test_a_fork_before_the_first_message_keeps_the_selection_entries_it_copies(targets: Targets) -> None:
    """The branch up to the first prompt's parent holds Pi's first entries (the model and level
    selections and the system prompt's message), so the fork appends no selection of its own:
    it restores them (sdk.js:84-85, :291-296)."""
    sc = scenario(_REPLIES)
    real, sim = play(targets, sc, [{"prompt": "one"}, {"fork": {"message": 1}}, {"prompt": "two"}])

    assert _levels(real) == [("model", "fake-model"), ("thinking", "off")]
    assert _levels(sim) == _levels(real)
    assert_equivalent(real, sim)


def test_a_restart_without_a_session_file_starts_at_the_level_pi_is_started_with(targets: Targets) -> None:
    """An in-memory session leaves no file to resume, so the restarted Pi is a new process with
    ``--model`` and ``--thinking low`` again: back on ``low`` after ``set_model`` turned thinking
    off (the simulator carried ``off`` into the new process; its in-process explorer's traces of
    PSC seeds 18 and 21 changed with the fix)."""
    models = [
        {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
        {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
    ]
    sc = scenario(_REPLIES, models=models, thinking_level="low", session="memory")
    ops = [
        {"prompt": "one"},
        {"set_model": "fake/fake-model"},
        {"prompt": "two"},
        {"restart": {}},
        {"prompt": "three"},
    ]
    real, sim = play(targets, sc, ops)

    def reasoning(observation: Observation) -> list[Any]:
        return [r.request.reasoning for r in observation.model_requests if r.kind == "agent"]

    assert reasoning(real) == ["low", None, "low"]
    assert reasoning(sim) == reasoning(real)
    assert_equivalent(real, sim)
