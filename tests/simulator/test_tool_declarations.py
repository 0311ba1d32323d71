"""Pi 1.6 declares the executable tools on the transcript's system messages
(``declareToolChanges``, pi-agent-core ``dist/agent-loop.js:224-250``): the quirk that a tool an
extension registers reaches the request, and the session file, only through a system message."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_continuity_harness.api.extension_api import ToolDefinition
from pi_continuity_harness.simulator.builtin_tools import BUILTIN_TOOLS
from pi_continuity_harness.simulator.messages import current_tools
from pi_continuity_harness.simulator.system_prompt import builtin_tools
from pi_continuity_harness.simulator.tool_declarations import declare_tool_changes, tool_declaration


async def _never(*_: Any) -> Any:
    raise AssertionError("not run")


FINISH = ToolDefinition(
    name="finish",
    label="Finish",
    description="Submit the dossier.",
    parameters={"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    execute=_never,
)


def _names(messages: list[dict[str, Any]]) -> list[str]:
    return [str(t["name"]) for t in current_tools(messages)]


def test_pi_quirk_a_registered_tool_is_declared_on_the_runs_system_message() -> None:
    system = {
        "role": "system",
        "content": "",
        "sections": {"a": "b"},
        "timestamp": 5,
        "toolsAdded": builtin_tools(),
    }
    user = {"role": "user", "content": "hi", "timestamp": 5}
    tools = [*builtin_tools(), tool_declaration(FINISH)]
    out = declare_tool_changes([], [system, user], tools, 9)
    assert len(out) == 2, "the pending system message carries the changes; no new message"
    assert list(out[0]) == ["role", "content", "sections", "timestamp", "toolsAdded"]
    assert _names(out) == ["read", "bash", "edit", "write", "finish"]
    assert out[0]["toolsAdded"][-1] == {
        "name": "finish",
        "description": "Submit the dossier.",
        "parameters": FINISH.parameters,
    }


def test_pi_quirk_a_later_run_declares_only_the_difference_on_a_new_system_message() -> None:
    transcript = [{"role": "system", "content": "", "timestamp": 1, "toolsAdded": builtin_tools()}]
    user = {"role": "user", "content": "again", "timestamp": 7}
    out = declare_tool_changes(transcript, [user], [*builtin_tools(), tool_declaration(FINISH)], 7)
    assert out[0] == {
        "role": "system",
        "content": "",
        "timestamp": 7,
        "toolsAdded": [tool_declaration(FINISH)],
    }
    assert out[1] is user


def test_pi_quirk_an_unchanged_loadout_adds_nothing() -> None:
    transcript = [{"role": "system", "content": "", "timestamp": 1, "toolsAdded": builtin_tools()}]
    pending = [{"role": "user", "content": "again", "timestamp": 7}]
    assert declare_tool_changes(transcript, pending, builtin_tools(), 7) is pending


def test_pi_quirk_a_redefined_tool_is_a_removal_and_an_addition() -> None:
    old = tool_declaration(FINISH)
    new = {**old, "description": "Submit it."}
    transcript = [{"role": "system", "content": "", "timestamp": 1, "toolsAdded": [old]}]
    out = declare_tool_changes(transcript, [{"role": "user", "content": "x", "timestamp": 2}], [new], 2)
    assert out[0]["toolsAdded"] == [new]
    assert out[0]["toolsRemoved"] == [{"name": "finish"}]
    assert current_tools([*transcript, *out]) == [new]


def test_equal_declarations_are_known_equal_without_encoding_them(monkeypatch: Any) -> None:
    """Declarations read back from a transcript and made anew are equal data whose objects are
    shared differently (interned strings, references): the comparison before every run answers
    from their ``marshal`` bytes, never reaching JSON (issue 16: it always did)."""
    from pi_continuity_harness.simulator import tool_declarations  # noqa: PLC0415

    persisted = json.loads(json.dumps(builtin_tools(), ensure_ascii=False))
    held = [tool["description"] for tool in persisted]  # held elsewhere too, as a session's are
    transcript = [{"role": "system", "content": "", "timestamp": 1, "toolsAdded": persisted}]

    def no_json(*_: Any, **__: Any) -> str:
        raise AssertionError("compared as JSON")

    monkeypatch.setattr(tool_declarations.json, "dumps", no_json)
    pending = [{"role": "user", "content": "hi", "timestamp": 2}]
    assert declare_tool_changes(transcript, pending, list(BUILTIN_TOOLS), 2) is pending
    assert held == [tool["description"] for tool in BUILTIN_TOOLS]


def test_a_declaration_put_on_a_message_is_a_copy_of_the_one_given() -> None:
    """The built-ins are shared (``BUILTIN_TOOLS``); a message gets its own copy of each."""
    pending = [{"role": "user", "content": "hi", "timestamp": 2}]
    system, _ = declare_tool_changes([], pending, list(BUILTIN_TOOLS), 2)
    assert system["toolsAdded"] == list(BUILTIN_TOOLS)
    assert all(a is not b for a, b in zip(system["toolsAdded"], BUILTIN_TOOLS, strict=True))
    assert all(
        a["parameters"] is not b["parameters"]
        for a, b in zip(system["toolsAdded"], BUILTIN_TOOLS, strict=True)
    )


def _changes_comparing_twice(
    previous: list[dict[str, Any]], current: list[dict[str, Any]]
) -> tuple[list[Any], list[Any]]:
    """``_changes`` as it was: each pair compared for the additions and again for the removals."""
    from pi_continuity_harness.simulator.tool_declarations import _same  # noqa: PLC0415

    before = {str(t.get("name")): t for t in previous}
    after = {str(t.get("name")): t for t in current}
    added = [t for t in current if (p := before.get(str(t.get("name")))) is None or not _same(p, t)]
    removed = [
        {"name": t.get("name")}
        for t in previous
        if (c := after.get(str(t.get("name")))) is None or not _same(t, c)
    ]
    return added, removed


_DECLARATIONS = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c", "d"]), "description": st.sampled_from(["x", "y"])}
)


@settings(max_examples=300, deadline=None)
@given(previous=st.lists(_DECLARATIONS, max_size=4), current=st.lists(_DECLARATIONS, max_size=5))
def test_tool_changes_compare_each_pair_once_with_the_same_outcome(
    previous: list[dict[str, Any]], current: list[dict[str, Any]]
) -> None:
    """``_changes`` gives what comparing every pair twice gave (the very objects of ``current``
    added), comparing a name declared before and current once when it is current once."""
    from pi_continuity_harness.simulator import tool_declarations  # noqa: PLC0415

    declared = list({str(t["name"]): t for t in previous}.values())  # as current_tools gives them
    expected = _changes_comparing_twice(declared, current)
    calls: list[tuple[int, int]] = []
    same = tool_declarations._same

    def counting(left: dict[str, Any], right: dict[str, Any]) -> bool:
        calls.append((id(left), id(right)))
        return same(left, right)

    tool_declarations._same = counting
    try:
        added, removed = tool_declarations._changes(declared, current)
    finally:
        tool_declarations._same = same
    assert (added, removed) == expected
    assert all(a is b for a, b in zip(added, expected[0], strict=True))
    names = [str(t["name"]) for t in current]
    if len(set(names)) == len(names):
        assert len(calls) == len({str(t["name"]) for t in declared} & set(names))
