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


def parent_of_three(entries: list[dict[str, Any]]) -> tuple[str, Any]:
    """The parent of the user's message "three" among ``entries`` (its place on the branch, not
    in the file, where the other branch's entries come first): a level change's level, or a
    type and role. The real-Pi differential reads its observation with it too."""
    by_id = {e.get("id"): e for e in entries}
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
    return (str(parent.get("type")), (parent.get("message") or {}).get("role"))


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
    assert parent_of_three(run(tmp_path, scenario).final_manager.get_entries()) == ("thinking", "off")


def test_a_run_records_nothing_when_the_branch_agrees(tmp_path: Path) -> None:
    scenario = base(
        models=_MODELS,
        thinking_level="low",
        operations=[{"prompt": "one"}, {"prompt": "two"}, {"tree": {"to": 2}}, {"prompt": "three"}],
        model=_AGENT,
    )
    assert parent_of_three(run(tmp_path, scenario).final_manager.get_entries()) == ("message", "assistant")
