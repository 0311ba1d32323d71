"""What a Python extension hands Pi crosses the bridge as JSON, on the simulator as on real Pi.

On real Pi a Python extension's ``append_entry``, ``send_message`` and ``send_user_message``
are lines the bridge writes with Python's ``json`` (``api/wire_json.py`` ``wire_dumps``, shared
by both targets) and Pi reads with ``JSON.parse`` (``targets/realpi/bridge.ts`` ``onData``);
each ``input`` handler's event is parsed anew from Pi's JSON (``bridge.ts``
``registerHandler``; Pi's ``emitInput``, ``dist/core/extensions/runner.js:1214-1249``). The
probes of ``tests/realpi/test_differential_api_surface.py`` showed real Pi's answers; these
tests hold the simulator to them without a Pi.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import (
    BeforeCompactResult,
    CompactionResult,
    ExtensionAPI,
    InputResult,
    ToolDefinition,
    ToolResult,
)
from pi_continuity_harness.api.wire_json import reply_line
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.scenario.operations import CommandOp
from pi_continuity_harness.simulator.json_copy import NOT_FOR_PI, bridge_copy
from pi_continuity_harness.targets.sim import SimTarget

from .helpers import agent_requests, base, entries, run, session_entries

#: A 1x1 black RGB PNG.
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC"


@dataclasses.dataclass
class Point:
    x: int
    y: list[int]


def _customs(result: Any) -> list[tuple[str, Any]]:
    return [(e["customType"], e.get("data")) for e in entries(result) if e["type"] == "custom"]


def test_append_entry_data_json_cannot_take_as_it_is_is_what_the_bridge_makes_of_it(tmp_path: Path) -> None:
    """A set or a tuple is a list, an int, float, bool or None key its JSON text, bytes and a
    path their ``str()``, a dataclass its fields (the bridge's ``json.dumps`` default); numbers
    are JavaScript's (1.0 is 1); a tuple key raises ``TypeError`` at the call."""
    raised: list[str] = []

    def factory(pi: ExtensionAPI) -> None:
        async def odd(args: str, ctx: Any) -> None:
            pi.append_entry("set", {3, 1, 2})
            pi.append_entry("keys", {1: "one", None: "n", False: "f", 2.5: {"deep": (1, {5})}})
            pi.append_entry("bytes", b"ab")
            pi.append_entry("path", pathlib.PurePosixPath("a/b"))
            pi.append_entry("dataclass", Point(1, [2]))
            pi.append_entry("numbers", [1.0, -0.0, 2**64, 10**400])
            try:
                pi.append_entry("tuple-key", {(1, 2): "x"})
            except TypeError as error:
                raised.append(type(error).__name__)

        pi.register_command("odd", odd)

    scenario = base(model={"agent": [{"text": "ok"}]}, operations=[{"command": "/odd"}, {"prompt": "hi"}])
    result = run(tmp_path, scenario, factory)
    assert raised == ["TypeError"]
    expected = [
        ("set", [1, 2, 3]),
        ("keys", {"1": "one", "null": "n", "false": "f", "2.5": {"deep": [1, [5]]}}),
        ("bytes", "b'ab'"),
        ("path", "a/b"),
        ("dataclass", {"x": 1, "y": [2]}),
        ("numbers", [1, 0, 18446744073709552000, None]),
    ]
    assert _customs(result) == expected
    assert [type(n) for n in expected[-1][1]] == [int, int, int, type(None)]
    in_file = [(e["customType"], e.get("data")) for e in session_entries(result) if e["type"] == "custom"]
    assert in_file == expected


def test_append_entry_with_nan_or_infinity_is_lost_without_an_error(tmp_path: Path) -> None:
    """The bridge writes ``NaN``/``Infinity``, which ``JSON.parse`` refuses: bridge.ts drops
    the line, so Pi never sees the call and the extension sees no error."""

    def factory(pi: ExtensionAPI) -> None:
        async def nan(args: str, ctx: Any) -> None:
            pi.append_entry("nan", {"x": math.nan})
            pi.append_entry("inf", [-math.inf])
            pi.append_entry("one", 1)
            pi.send_message({"customType": "nan", "content": "c", "display": True, "details": math.nan})

        pi.register_command("nan", nan)

    result = run(tmp_path, base(operations=[{"command": "/nan"}]), factory)
    assert _customs(result) == [("one", 1)]
    assert [e["type"] for e in entries(result)].count("custom_message") == 0
    assert not [r for r in result.host.trace.records if r["name"] == "extension_error"]


def test_send_message_details_with_a_set_and_bytes_cross_as_the_bridge_encodes_them(tmp_path: Path) -> None:
    def factory(pi: ExtensionAPI) -> None:
        async def oddmsg(args: str, ctx: Any) -> None:
            pi.send_message(
                {"customType": "odd", "content": "c", "display": True, "details": {"s": {1}, "b": b"x"}}
            )

        pi.register_command("oddmsg", oddmsg)

    result = run(tmp_path, base(operations=[{"command": "/oddmsg"}]), factory)
    [message] = [e for e in entries(result) if e["type"] == "custom_message"]
    assert message["details"] == {"s": [1], "b": "b'x'"}


def test_an_input_handler_changing_event_images_in_place_changes_neither_the_next_handler_nor_the_prompt(
    tmp_path: Path,
) -> None:
    """runner.js:1214-1249 hands each handler ``currentImages``; a Python handler gets them parsed
    anew from the bridge's JSON, so an in-place change (a key added, an image appended) is its
    own. A transform's images cross back as JSON too: changing them after returning them
    changes nothing of Pi's."""
    seen: list[Any] = []
    returned: list[Any] = []

    def factory(pi: ExtensionAPI) -> None:
        def change(event: Any, ctx: Any) -> None:
            event.images[0]["extra"] = "MUTATED"
            event.images.append(dict(event.images[0]))

        def look(event: Any, ctx: Any) -> Any:
            seen.append([sorted(image) for image in event.images])
            images = [dict(image) for image in event.images]
            returned.append(images)
            return {"action": "transform", "text": event.text + "!", "images": images}

        def later(event: Any, ctx: Any) -> None:
            returned[0][0]["data"] = "CHANGED-AFTER-RETURN"

        pi.on("input", change)
        pi.on("input", look)
        pi.on("input", later)

    scenario = base(
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
        model={"agent": [{"text": "seen"}]},
        operations=[{"prompt": {"text": "look", "images": [{"data": PIXEL, "mimeType": "image/png"}]}}],
    )
    result = run(tmp_path, scenario, factory)
    assert seen == [[["data", "mimeType", "type"]]]
    [request] = agent_requests(result)
    user = request.messages[-1]
    assert user["content"] == [
        {"type": "text", "text": "look!"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ]
    assert "MUTATED" not in json.dumps(session_entries(result))


@pytest.mark.parametrize(
    ("result", "error", "next_sees"),
    [
        ({"action": "transform"}, "Cannot read properties of undefined (reading 'startsWith')", ""),
        ({"action": "transform", "text": None}, "Cannot read properties of null (reading 'startsWith')", ""),
        ({"action": "transform", "text": 5}, "text.startsWith is not a function", "5"),
        (InputResult("transform"), "Cannot read properties of undefined (reading 'startsWith')", ""),
    ],
)
def test_an_input_transform_without_a_string_text_fails_the_prompt(
    tmp_path: Path, result: Any, error: str, next_sees: str
) -> None:
    """``currentText = result.text`` (runner.js:1232): a transform without a string text leaves
    Pi none, and ``prompt()`` throws where it expands skills (agent-session.js:1754, 1821,
    ``text.startsWith``): V8's messages, as real Pi 1.6.0 answered the RPC ``prompt``. The next
    Python handler reads the bridge's ``str(text or "")``."""
    seen: list[str] = []

    def factory(pi: ExtensionAPI) -> None:
        pi.on("input", lambda event, ctx: result)
        pi.on("input", lambda event, ctx: seen.append(event.text))

    scenario = base(model={"agent": [{"text": "never"}]}, operations=[{"prompt": "hello"}])
    outcome = run(tmp_path, scenario, factory)
    [prompt] = [r for r in outcome.host.trace.records if r["kind"] == "op" and r.get("phase") == "end"]
    assert (prompt["ok"], prompt["error"]) == (False, error)
    assert seen == [next_sees]
    assert agent_requests(outcome) == []


def test_a_lone_surrogate_is_kept_and_escaped_in_the_session_file(tmp_path: Path) -> None:
    """``JSON.stringify`` is well-formed: Pi writes a lone surrogate as the escape ``\\ud800``
    (and a surrogate pair as its character), so the session file stays UTF-8 and reads back
    with the surrogate. The simulator's ``json.dumps`` left it raw and writing the line raised
    ``UnicodeEncodeError``."""

    def factory(pi: ExtensionAPI) -> None:
        async def lone(args: str, ctx: Any) -> None:
            pi.append_entry("text", "lone \ud800 surrogate, pair \ud83d\ude00, é")

        pi.register_command("lone", lone)

    scenario = base(model={"agent": [{"text": "ok"}]}, operations=[{"command": "/lone"}, {"prompt": "hi"}])
    result = run(tmp_path, scenario, factory)
    [path] = result.session_files()
    raw = path.read_bytes()
    assert '"lone \\ud800 surrogate, pair \U0001f600, é"'.encode() in raw
    [data] = [e.get("data") for e in session_entries(result) if e["type"] == "custom"]
    assert data == "lone \ud800 surrogate, pair \U0001f600, é"


@pytest.mark.parametrize("as_dataclass", [False, True])
def test_a_compaction_a_handler_returns_with_a_set_in_its_details_is_stored_as_the_bridge_encodes_it(
    tmp_path: Path, as_dataclass: bool
) -> None:
    """The bridge replies with ``json.dumps`` and its default (``result_to_wire``, then
    ``wire_dumps``): a set or a tuple a list, bytes their ``str()``, ``2.0`` the integer 2. The
    simulator kept the set and the compaction failed (``Object of type set is not JSON
    serializable``) where real Pi 1.6.0 stored it."""
    details = {"s": {2, 1}, "f": 2.0, "b": b"x", "t": (1, 2)}

    def factory(pi: ExtensionAPI) -> None:
        def before_compact(event: Any, ctx: Any) -> Any:
            prep = event.preparation
            if as_dataclass:
                compaction = CompactionResult("OWN", prep.first_kept_entry_id, prep.tokens_before, details)
                return BeforeCompactResult(compaction=compaction)
            own = {"summary": "OWN", "firstKeptEntryId": prep.first_kept_entry_id, "details": details}
            return {"compaction": {**own, "tokensBefore": prep.tokens_before}}

        pi.on("session_before_compact", before_compact)

    long = "The quick brown fox jumps over the lazy dog. " * 18
    scenario = base(
        model={"agent": [{"text": long, "usage": {"input": 1000, "output": 10}}]},
        operations=[{"prompt": "one " + long}, "compact"],
    )
    result = run(tmp_path, scenario, factory)
    [compaction] = [e for e in session_entries(result) if e["type"] == "compaction"]
    assert compaction["details"] == {"s": [1, 2], "f": 2, "b": "b'x'", "t": [1, 2]}
    assert type(compaction["details"]["f"]) is int


def test_a_tool_result_with_a_set_in_its_details_is_stored_as_the_bridge_encodes_it(tmp_path: Path) -> None:
    """An extension tool's content and details cross back as JSON (``bridge.ts``
    ``registerTool``): a set is a list and ``1.0`` the integer 1 in the tool result entry."""

    async def execute(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "done"}], details={"s": {3}, "f": 1.0})

    def factory(pi: ExtensionAPI) -> None:
        pi.register_tool(
            ToolDefinition(
                name="odd_result",
                label="Odd result",
                description="Returns odd details.",
                parameters={"type": "object", "properties": {}},
                execute=execute,
            )
        )

    call = {"name": "odd_result", "arguments": {}}
    scenario = base(
        model={"agent": [{"text": "calling", "tool_calls": [call]}, {"text": "done"}]},
        operations=[{"prompt": "go"}],
    )
    result = run(tmp_path, scenario, factory)
    [message] = [
        e["message"]
        for e in session_entries(result)
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert message["details"] == {"s": [3], "f": 1} and type(message["details"]["f"]) is int


def test_set_session_name_with_a_name_that_is_not_a_string_appends_nothing_and_raises_nothing(
    tmp_path: Path,
) -> None:
    """``appendSessionInfo`` calls ``name.replace`` (session-manager.js:935-936): on a number or
    ``null`` it throws inside Pi's fire-and-forget call. The simulator raised ``TypeError`` in
    the extension."""
    raised: list[str] = []

    def factory(pi: ExtensionAPI) -> None:
        async def name(args: str, ctx: Any) -> None:
            for value in (5, None, ("a", "b")):
                try:
                    pi.set_session_name(value)  # type: ignore[arg-type]
                except Exception as error:
                    raised.append(type(error).__name__)
            pi.set_session_name("kept")

        pi.register_command("name", name)

    result = run(tmp_path, base(operations=[{"command": "/name"}]), factory)
    assert raised == []
    assert [e.get("name") for e in entries(result) if e["type"] == "session_info"] == ["kept"]


def test_a_notification_or_status_that_is_not_a_string_is_observed_as_on_real_pi(tmp_path: Path) -> None:
    """RPC carries the message as its JSON (a tuple a list) and PiTarget records ``str()`` of
    it; SimTarget now records the same."""

    def factory(pi: ExtensionAPI) -> None:
        async def loose(args: str, ctx: Any) -> None:
            ctx.ui.notify({"a": (1, 2.0)}, "info")  # type: ignore[arg-type]
            ctx.ui.set_status("k", 5)  # type: ignore[arg-type]
            ctx.ui.notify("x", "info")
            ctx.ui.notify("lone \ud800", "warning")
            ctx.ui.set_status("gone", "soon")
            ctx.ui.set_status("gone", None)
            ctx.ui.set_status("t", ("a", 2.0))  # type: ignore[arg-type]

        pi.register_command("loose", loose)

    target = SimTarget(factory, tmp_path / "sim")
    target.start(parse_scenario(base()))
    target.perform(CommandOp.model_validate({"command": "/loose"}))
    observed = target.observe()
    assert observed.notifications == [("{'a': [1, 2]}", "info"), ("x", "info"), ("lone \ud800", "warning")]
    assert observed.statuses == {"k": "5", "t": "['a', 2]"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, 1),
        (-0.0, 0),
        (2**53 + 1, 2**53),
        (2**64, 18446744073709552000),
        (10**400, None),
        (1e21, 1e21),
        (1e20, 100000000000000000000),
        (0.1, 0.1),
        (-12345, -12345),
        (123456789012345678, 123456789012345680),
    ],
)
def test_a_number_is_what_json_parse_and_json_stringify_make_of_it(value: Any, expected: Any) -> None:
    """ECMA-262 Number::toString: an integral double below 1e21 is written without a fraction
    or exponent, in the shortest digits that read back as the double."""
    copied = bridge_copy([value])[0]
    assert copied == expected and type(copied) is type(expected)


def test_bridge_copy_of_nan_anywhere_is_not_for_pi() -> None:
    assert bridge_copy({"a": [1, {"b": math.inf}]}) is NOT_FOR_PI
    assert bridge_copy(["NaN", "Infinity"]) == ["NaN", "Infinity"]  # strings are not numbers


def test_a_users_own_nonfinite_keys_in_a_reply_with_a_nan_are_escaped_so_no_marker_collides() -> None:
    """``reply_line``: in a reply holding a NaN, a NaN is the ``{"$nonfinite": "NaN"}`` marker
    and every key of the user's made of ``$``s and ``nonfinite`` gets one more ``$``, which
    ``bridge.ts`` ``reviveNonFinite`` takes off (tests/realpi/test_differential_nonfinite_marker_escape.py);
    a reply without one is plain JSON, its keys as given."""
    value = {
        "n": math.nan,
        "user": {"$nonfinite": "Infinity"},
        "flag": {"$nonfinite": True},
        "e": {"$$nonfinite": 1},
    }
    line = json.loads(reply_line({"type": "result", "id": "1", "value": value}))
    assert line == {
        "type": "result",
        "id": "1",
        "value": {
            "n": {"$nonfinite": "NaN"},
            "user": {"$$nonfinite": "Infinity"},
            "flag": {"$$nonfinite": True},
            "e": {"$$$nonfinite": 1},
        },
        "$nonfinite": True,
    }
    plain = {"user": {"$nonfinite": "Infinity"}}
    assert json.loads(reply_line({"type": "result", "value": plain})) == {"type": "result", "value": plain}
