"""A run records the thinking level in force when its branch says another (``_recordSelection``,
agent-session.js:1517 and :323-367; Pi #11451): tree navigation can leave the branch's last
``thinking_level_change`` on another branch. Compared with real Pi in
``tests/realpi/test_differential_thinking_record.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .helpers import base, run

_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
    {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000, "reasoning": True},
]
_AGENT = {"agent": [{"text": f"answer {n}"} for n in range(1, 5)]}


def _parent_of_three(result: Any) -> tuple[str, Any]:
    entries = result.final_manager.get_entries()
    by_id = {e["id"]: e for e in entries}
    three = next(
        e
        for e in entries
        if e.get("type") == "message"
        and e["message"].get("role") == "user"
        and e["message"]["content"][0].get("text") == "three"
    )
    parent = by_id[three["parentId"]]
    if parent.get("type") == "thinking_level_change":
        return ("thinking", parent["thinkingLevel"])
    return (str(parent.get("type")), parent["message"].get("role"))


def test_a_run_records_the_level_in_force_when_the_branch_says_another(tmp_path: Path) -> None:
    scenario = base(
        models=_MODELS,
        thinking_level="low",
        operations=[
            {"prompt": "one"},
            {"prompt": "two"},
            {"set_model": "fake/fake-model"},
            {"tree": {"to": 2}},
            {"prompt": "three"},
        ],
        model=_AGENT,
    )
    assert _parent_of_three(run(tmp_path, scenario)) == ("thinking", "off")


def test_a_run_records_nothing_when_the_branch_agrees(tmp_path: Path) -> None:
    scenario = base(
        models=_MODELS,
        thinking_level="low",
        operations=[{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 2}}, {"prompt": "three"}],
        model=_AGENT,
    )
    assert _parent_of_three(run(tmp_path, scenario)) == ("message", "assistant")
