"""``json_copy`` is ``json.loads(json.dumps(value))`` (``simulator/json_copy.py``): the copy the
simulated host keeps of every RPC event."""

from __future__ import annotations

import enum
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.operations import PromptOp
from pi_continuity_harness.simulator.json_copy import EventCopies, js_loads, json_copy
from pi_continuity_harness.targets import make_target
from pi_continuity_harness.targets.sim import SimTarget

from .helpers import base, noop


class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.sampled_from([Level.LOW, Name("n"), -0.0])
)
_keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(_keys, inner, max_size=4)
        | st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=20,
)


def _same(copied: Any, expected: Any) -> None:
    """Equal values of equal types (NaN equal to NaN, -0.0 told from 0.0)."""
    assert type(copied) is type(expected)
    if isinstance(expected, dict):
        assert list(copied) == list(expected)
        for key in expected:
            _same(copied[key], expected[key])
    elif isinstance(expected, list):
        assert len(copied) == len(expected)
        for a, b in zip(copied, expected, strict=True):
            _same(a, b)
    elif isinstance(expected, float):
        assert (math.isnan(copied) and math.isnan(expected)) or (
            copied == expected and math.copysign(1, copied) == math.copysign(1, expected)
        )
    else:
        assert copied == expected


@given(_values)
def test_it_gives_what_json_gives(value: Any) -> None:
    _same(json_copy(value), json.loads(json.dumps(value)))


@given(st.dictionaries(st.text(), _values, max_size=4))
def test_the_copy_shares_nothing_mutable(value: dict[str, Any]) -> None:
    copied = json_copy(value)
    expected = json.loads(json.dumps(value))
    for item in value.values():
        if isinstance(item, dict):
            item["changed later"] = True
        elif isinstance(item, list):
            item.append("changed later")
    value["changed later"] = True
    _same(copied, expected)


def test_what_json_refuses_it_refuses_alike() -> None:
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        json_copy({"a": [1, {2}]})
    with pytest.raises(TypeError, match="keys must be"):
        json_copy({"a": {(1, 2): 3}})
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        json_copy({"a": cycle})


@given(st.lists(st.dictionaries(st.text(), _values, max_size=4), min_size=1, max_size=4))
def test_event_copies_give_what_json_gives_at_each_event(messages: list[dict[str, Any]]) -> None:
    """``EventCopies`` (the host's copy of each RPC event) gives ``json.loads(json.dumps(event))``
    as it was at the event: a message named again unchanged is the copy made before, one
    changed in place since (a value, a key added or removed) is copied anew."""
    copies = EventCopies()
    kept: list[tuple[Any, Any]] = []

    def record(event: dict[str, Any]) -> None:
        try:
            expected = json.loads(json.dumps(event))
        except (TypeError, ValueError):
            with pytest.raises((TypeError, ValueError)):
                copies.copy(event)
            return
        kept.append((copies.copy(event), expected))

    for message in messages:
        record({"type": "message_end", "message": message})
    record({"type": "turn_end", "message": messages[-1], "toolResults": messages[:-1]})
    messages[0]["changed later"] = [1]
    messages[-1].pop(next(iter(messages[-1]), None), None)
    record({"type": "agent_end", "messages": messages, "willRetry": False})
    for message in messages:
        message["changed after the last event"] = True
    for copied, expected in kept:
        _same(copied, expected)


@given(st.lists(st.tuples(_values, _values), min_size=1, max_size=4))
def test_an_update_is_the_copy_of_its_message_update_event(updates: list[tuple[Any, Any]]) -> None:
    """``EventCopies.update(usage, delta)`` (a streamed delta's RPC event, copied without making
    the event) gives what ``copy`` gives of ``{"type": "message_update", "usage": usage,
    "assistantMessageEvent": delta}``, keys in that order, errors included, and shares the copy of
    an unchanged usage as ``copy`` does."""
    by_update, by_copy = EventCopies(), EventCopies()
    for usage, delta in updates:
        event = {"type": "message_update", "usage": usage, "assistantMessageEvent": delta}
        try:
            expected = by_copy.copy(event)
        except (TypeError, ValueError) as error:
            with pytest.raises(type(error)):
                by_update.update(usage, delta)
            continue
        copied = by_update.update(usage, delta)
        _same(copied, expected)
        _same(copied, json.loads(json.dumps(event)))
    usage = {"input": 1, "cost": {"total": 0}}
    first, second = by_update.update(usage, {"type": "x"}), by_update.update(usage, {"type": "y"})
    assert second["usage"] is first["usage"] and first["usage"] is not usage


def test_event_copies_reuse_the_copy_of_an_unchanged_message() -> None:
    copies = EventCopies()
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    usage: dict[str, Any] = {"input": 1, "cost": {"total": 0}}
    first = copies.copy({"type": "message_update", "usage": usage, "assistantMessageEvent": {"type": "x"}})
    second = copies.copy({"type": "message_update", "usage": usage, "assistantMessageEvent": {"type": "y"}})
    assert second["usage"] is first["usage"] and second["usage"] is not usage
    end = copies.copy({"type": "message_end", "message": message})
    turn = copies.copy({"type": "turn_end", "message": message, "toolResults": []})
    assert turn["message"] is end["message"]
    message["content"][0]["text"] = "changed"
    after = copies.copy({"type": "agent_end", "messages": [message]})
    assert after["messages"][0] is not end["message"]
    assert (
        end["message"]["content"][0]["text"] == "hi"
        and after["messages"][0]["content"][0]["text"] == "changed"
    )


def test_an_observation_carries_each_event_as_it_was_when_rpc_wrote_it(tmp_path: Path) -> None:
    target = make_target("sim", noop, tmp_path / "machine")
    assert isinstance(target, SimTarget)
    target.start(parse_scenario(base()))
    target.perform(PromptOp(prompt="hello"))
    message: dict[str, Any] = {"role": "custom", "content": [{"type": "text", "text": "before"}]}
    target.simulation.host.record_rpc({"type": "message_end", "message": message})
    message["content"][0]["text"] = "after"
    observation = target.observe()
    assert observation.rpc_events[-1]["message"]["content"] == [{"type": "text", "text": "before"}]
    assert "agent_end" in [e["type"] for e in observation.rpc_events]
    target.close()


def test_rpc_streams_each_delta_between_the_assistants_start_and_end(tmp_path: Path) -> None:
    """Every streamed delta reaches RPC as a ``message_update`` (``AgentSession`` hands it to the
    public listeners only, without an extension event), in order, inside the assistant's
    ``message_start``/``message_end``, with the message's usage of that moment."""
    text = "A reply long enough to be streamed in more than one delta. " * 8
    target = make_target("sim", noop, tmp_path / "machine")
    assert isinstance(target, SimTarget)
    target.start(parse_scenario(base(model={"agent": [{"text": text}]})))
    target.perform(PromptOp(prompt="hello"))
    events = target.observe().rpc_events
    target.close()
    types = [e["type"] for e in events]
    start = max(i for i, e in enumerate(events) if e["type"] == "message_start")
    end = types.index("message_end", start)
    assert events[start]["message"]["role"] == "assistant"
    updates = [e for e in events if e["type"] == "message_update"]
    assert updates == events[start + 1 : end]
    kinds = [e["assistantMessageEvent"]["type"] for e in updates]
    assert kinds[0] == "text_start" and kinds[-1] == "text_end" and kinds.count("text_delta") > 1
    deltas = "".join(
        e["assistantMessageEvent"]["delta"] for e in updates if "delta" in e["assistantMessageEvent"]
    )
    assert deltas == text == events[end]["message"]["content"][0]["text"]
    assert all(set(e) == {"type", "usage", "assistantMessageEvent"} for e in updates)


def test_an_update_copies_a_usage_changed_in_place_since_the_last_update_anew() -> None:
    """``update`` keeps the last delta's usage and its copy, and reuses that copy only while the
    usage is unchanged: one changed in place since (a count, a nested cost, a key added) is
    copied anew, and each record holds the usage as it was at its delta."""
    copies = EventCopies()
    usage: dict[str, Any] = {"input": 1, "cost": {"total": 0}}
    first = copies.update(usage, {"type": "text_delta", "delta": "a"})
    usage["input"] = 2
    second = copies.update(usage, {"type": "text_delta", "delta": "b"})
    usage["cost"]["total"] = 0.5
    third = copies.update(usage, {"type": "text_delta", "delta": "c"})
    usage["extra"] = None
    fourth = copies.update(usage, {"type": "text_delta", "delta": "d"})
    fifth = copies.update(usage, {"type": "text_delta", "delta": "e"})
    assert [event["usage"] for event in (first, second, third, fourth)] == [
        {"input": 1, "cost": {"total": 0}},
        {"input": 2, "cost": {"total": 0}},
        {"input": 2, "cost": {"total": 0.5}},
        {"input": 2, "cost": {"total": 0.5}, "extra": None},
    ]
    assert fifth["usage"] is fourth["usage"] and fourth["usage"] is not usage
    assert fourth["usage"]["cost"] is not usage["cost"]


def test_a_messages_usage_is_the_copy_its_deltas_made_while_unchanged() -> None:
    """A message copied anew (its content grew since ``message_start``) takes the copy of its
    ``usage`` that the deltas before made, while that usage is unchanged; one changed in place
    since is copied anew, and a usage first seen in a message is reused by the next delta."""
    copies = EventCopies()
    usage: dict[str, Any] = {"input": 0, "cost": {"total": 0}}
    message: dict[str, Any] = {"role": "assistant", "content": [], "usage": usage}
    start = copies.copy({"type": "message_start", "message": message})
    update = copies.update(usage, {"type": "text_delta", "delta": "a"})
    assert update["usage"] is start["message"]["usage"]
    message["content"].append({"type": "text", "text": "a"})
    end = copies.copy({"type": "message_end", "message": message})
    assert end["message"] is not start["message"] and end["message"]["usage"] is update["usage"]
    usage["cost"]["total"] = 1
    message["content"].append({"type": "text", "text": "b"})
    again = copies.copy({"type": "message_end", "message": message})
    assert again["message"]["usage"] == {"input": 0, "cost": {"total": 1}}
    assert end["message"]["usage"] == {"input": 0, "cost": {"total": 0}} == start["message"]["usage"]
    assert [len(event["message"]["content"]) for event in (start, end, again)] == [0, 1, 2]


_index_like = st.sampled_from(["0", "1", "2", "7", "10", "07", "-1", "1.5", "4294967294", "4294967295", "١"])
_js_objects = st.recursive(
    st.integers(-(2**53), 2**53) | st.text(max_size=3),
    lambda inner: st.dictionaries(_index_like | st.text(max_size=3), inner, max_size=6),
    max_leaves=12,
)


def _js_key_order(keys: list[str]) -> list[str]:
    """ECMA-262 OrdinaryOwnPropertyKeys: array indexes (canonical, below 2**32 - 1) ascending,
    then the rest in insertion order."""
    indexes = [k for k in keys if re.fullmatch(r"0|[1-9][0-9]*", k) and int(k) <= 2**32 - 2]
    return sorted(indexes, key=int) + [k for k in keys if k not in indexes]


def _assert_js_ordered(parsed: Any, plain: Any) -> None:
    if isinstance(plain, dict):
        assert list(parsed) == _js_key_order(list(plain))
        for key in plain:
            _assert_js_ordered(parsed[key], plain[key])


@given(_js_objects)
def test_js_loads_orders_array_index_keys_first_as_json_parse_does(value: Any) -> None:
    """``JSON.parse`` of the bridge's text or a model's arguments: the same value, each object's
    array-index keys first, ascending (``"07"``, ``"-1"``, ``"4294967295"`` and ``"١"`` are no
    indexes); a key of digits inside a string value changes nothing."""
    text = json.dumps(value)
    parsed = js_loads(text)
    assert parsed == json.loads(text)
    _assert_js_ordered(parsed, json.loads(text))
    quoted = js_loads(json.dumps({"b": 'a "7": b', "a": 1}))
    assert list(quoted) == ["b", "a"]
