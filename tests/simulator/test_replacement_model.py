"""Which model and thinking level a new session and a fork get (main.js ``createRuntime``,
:650-770; sdk.js ``createAgentSession``, :83-143 and :291-303): the process's ``--model`` and
``--thinking`` when it was started with them, else the branch's, else the settings' defaults.
Compared with real Pi in ``tests/realpi/test_differential_replacement_model.py``; these run the
same rules on the simulator alone, with what each session's file records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .helpers import base, run

_AGENT = {"agent": [{"text": f"answer {n}"} for n in range(1, 6)]}


def _selections(path: Path) -> list[tuple[str, str]]:
    """The ``model_change`` and ``thinking_level_change`` entries of one session file."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "model_change":
            out.append(("model", entry["modelId"]))
        elif entry.get("type") == "thinking_level_change":
            out.append(("thinking", entry["thinkingLevel"]))
    return out


def _answered_by(result: Any) -> list[str]:
    return [r.model for r in result.host.service.requests if r.kind == "agent"]


def test_a_new_session_takes_the_model_of_the_command_line_not_the_one_in_use(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"set_model": "fake/fake-big"}, {"prompt": "one"}, "new_session", {"prompt": "two"}],
        model=_AGENT,
    )
    result = run(tmp_path, scenario)
    assert _answered_by(result) == ["fake/fake-big", "fake/fake-model"]
    newest = sorted(result.session_files())[-1]
    assert _selections(newest) == [("model", "fake-model"), ("thinking", "off")]


def test_a_fork_takes_the_model_of_the_command_line_not_the_one_in_use(tmp_path: Path) -> None:
    scenario = base(
        operations=[
            {"prompt": "one"},
            {"set_model": "fake/fake-big"},
            {"prompt": "two"},
            "fork",
            {"prompt": "three"},
        ],
        model=_AGENT,
    )
    result = run(tmp_path, scenario)
    assert _answered_by(result) == ["fake/fake-model", "fake/fake-big", "fake/fake-model"]


def test_without_a_command_line_model_a_new_session_takes_the_first_available_model(tmp_path: Path) -> None:
    scenario = base(
        active_model="fake/fake-big",
        operations=[{"prompt": "one"}, "restart", "new_session", {"prompt": "two"}],
        model=_AGENT,
    )
    result = run(tmp_path, scenario)
    assert _answered_by(result) == ["fake/fake-big", "fake/fake-model"]


def test_without_a_command_line_model_the_settings_default_model_comes_first(tmp_path: Path) -> None:
    """``findInitialModel`` (model-resolver.js:396-410): ``defaultProvider``/``defaultModel``
    before the first available model."""
    scenario = base(
        active_model="fake/fake-big",
        operations=[{"prompt": "one"}, "restart", "new_session", {"prompt": "two"}],
        model=_AGENT,
    )
    scenario["models"].append({"id": "fake/fake-other", "context_window": 20000, "max_tokens": 1000})
    scenario["settings"]["project"].update({"defaultProvider": "fake", "defaultModel": "fake-other"})
    result = run(tmp_path, scenario)
    assert _answered_by(result) == ["fake/fake-big", "fake/fake-other"]


def test_without_a_command_line_model_a_fork_takes_its_branchs_model(tmp_path: Path) -> None:
    scenario = base(
        operations=[
            {"prompt": "one"},
            {"set_model": "fake/fake-big"},
            {"prompt": "two"},
            "restart",
            {"prompt": "three"},
            {"set_model": "fake/fake-model"},
            {"fork": {"message": 3}},
            {"prompt": "four"},
        ],
        model=_AGENT,
    )
    result = run(tmp_path, scenario)
    assert _answered_by(result) == ["fake/fake-model", "fake/fake-big", "fake/fake-big", "fake/fake-big"]


def test_a_new_session_takes_the_thinking_level_of_the_command_line(tmp_path: Path) -> None:
    scenario = base(
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
        ],
        thinking_level="low",
        operations=[{"set_model": "fake/fake-big"}, {"prompt": "one"}, "new_session", {"prompt": "two"}],
        model=_AGENT,
    )
    result = run(tmp_path, scenario)
    newest = sorted(result.session_files())[-1]
    assert _selections(newest) == [("model", "fake-model"), ("thinking", "low")]


def test_a_fork_before_the_first_message_keeps_the_selection_entries_it_copies(tmp_path: Path) -> None:
    """The branch up to the first prompt's parent holds Pi's first entries, the system prompt's
    message among them, so it has messages (sdk.js:84-85) and the fork appends no selection of
    its own (real Pi agrees: ``tests/realpi/test_differential_replacement_model.py``)."""
    scenario = base(operations=[{"prompt": "one"}, {"fork": {"message": 1}}, {"prompt": "two"}], model=_AGENT)
    result = run(tmp_path, scenario)
    newest = sorted(result.session_files())[-1]
    assert _selections(newest) == [("model", "fake-model"), ("thinking", "off")]
