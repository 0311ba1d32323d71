"""Differential fidelity of the extension API's edge cases: real Pi 1.6 against the simulator.

Each test runs the same operations on both targets with a probe of
``extensions/probe_fidelity.py``: the commands of ``surface`` notify what the API returned as
JSON; ``mutator``, ``keeper``, ``tool_keeper`` and ``call_keeper`` change in place what Pi gave
them or what they gave Pi; ``imager`` sends a user message with an image part; ``odd_data``
hands Pi data JSON cannot take as it is; ``input_imager``'s first ``input`` handler changes the
prompt's images in place; ``input_untexted`` transforms without a text; ``returner`` returns a
compaction and a tool result JSON cannot take as they are; ``loose_args`` calls the API with
arguments of other types; ``unsubscriber``'s first ``agent_end`` handler unsubscribes the
second; ``thrower`` makes the calls where Pi's API throws. Each test asserts real Pi's answer
explicitly (so a mistake both targets share cannot pass) and then that the simulator's whole
observation is the same (:func:`realpi.test_differential_fidelity.assert_equivalent`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from realpi.extensions.probe_fidelity import PIXEL
from realpi.test_differential_fidelity import LONG, Targets, assert_equivalent, play, scenario

from pi_continuity_harness.simulator.model_service import pi_builtin_models

pytestmark = pytest.mark.realpi

SURFACE = "probe_fidelity:surface"
TOOL = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n"}
#: The scenario's first model as the bridge carries it (``modelToWire``) and ``Model.to_json`` writes it.
FAKE_MODEL: dict[str, Any] = {
    "api": "openai-completions",
    "contextWindow": 20000,
    "id": "fake-model",
    "input": ["text"],
    "maxTokens": 1000,
    "name": "fake-model",
    "provider": "fake",
    "reasoning": False,
}


def notes(observation: Any) -> dict[str, Any]:
    """The ``label: json`` notifications by label (the last one of a label wins)."""
    found: dict[str, Any] = {}
    for message, _ in observation.notifications:
        label, sep, rest = message.partition(": ")
        if sep and label.isidentifier():
            found[label] = json.loads(rest)
    return found


def test_session_manager_lookups_of_unknown_ids_and_the_header(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "hello back"}]})
    real, sim = play(targets, sc, [{"command": "/sm"}, {"prompt": "hello"}, {"command": "/sm"}], SURFACE)
    sm = notes(real)["sm"]
    # getBranch/getEntry of an unknown id: [] and undefined (session-manager.js:1029-1031, 1083-1094);
    # the header is not an entry (byId holds entries only).
    assert sm["branchUnknown"] == [] and sm["entryUnknown"] is None and sm["entryHeader"] is False
    assert sm["headerKeys"] == ["cwd", "id", "timestamp", "type", "version"]
    assert (sm["headerVersion"], sm["headerCwd"], sm["headerId"], sm["cwd"]) == (3, True, True, True)
    assert sm["leafIsLast"] and sm["leafType"] == "message" and sm["name"] is None
    assert sm["branchFirst"] == ["model_change"]
    assert sm["branchLeaf"] == len(sm["branch"]) == len(sm["entries"])
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_set_session_name_sanitises_line_breaks_as_pi_does(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/name"}], SURFACE)
    named = notes(real)["name"]
    # appendSessionInfo: name.replace(/[\r\n]+/g, " ").trim() (session-manager.js:935-946);
    # getSessionName: entry.name?.trim() || undefined (:948-958). JavaScript's trim() takes
    # U+00A0 but not U+001F.
    assert named["stored"] == ["a b", "x   y", "tab\there", "nbsp", "\x1fsep\x1f", "", ""]
    assert named["seen"] == [
        ["a b", "a b"],
        ["x   y", "x   y"],
        ["tab\there", "tab\there"],
        ["nbsp", "nbsp"],
        ["\x1fsep\x1f", "\x1fsep\x1f"],
        [None, None],
        [None, None],
    ]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_append_entry_with_data_of_every_json_kind(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/entries"}], SURFACE)
    entries = notes(real)["entries"]
    # appendCustomEntry (session-manager.js:922-933): type, customType, data, id, parentId,
    # timestamp; undefined data (the bridge passes None as undefined) has no key.
    assert [e["keys"] for e in entries][:2] == [
        ["type", "customType", "id", "parentId", "timestamp"],
        ["type", "customType", "data", "id", "parentId", "timestamp"],
    ]
    assert [e["data"] for e in entries] == [
        None,
        {},
        {"a": {"b": [1, 2.5, None, True]}},
        [1, "two"],
        "text",
        0,
        False,
        1.5,
    ]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_state_getters_before_and_after_a_turn(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "hello back", "usage": {"input": 1200, "output": 30}}]})
    real, sim = play(
        targets, sc, [{"command": "/state"}, {"prompt": "hello"}, {"command": "/state"}], SURFACE
    )
    states = [json.loads(m.partition(": ")[2]) for m, _ in real.notifications if m.startswith("state: ")]
    before, after = states
    assert before["thinking"] == "off" and before["pending"] is False and before["idle"] is True
    # (0 / 20000) * 100 is the JavaScript number 0 (agent-session.js:3642): an int in Python.
    assert before["usage"] == {"tokens": 0, "percent": 0, "window": 20000}
    assert type(before["usage"]["percent"]) is int
    assert after["usage"]["tokens"] == 1230
    assert before["settings"]["compaction"] == {
        "enabled": True,
        "keepRecentTokens": 100,
        "reserveTokens": 4000,
    }
    sim_states = [json.loads(m.partition(": ")[2]) for m, _ in sim.notifications if m.startswith("state: ")]
    assert sim_states == states
    assert_equivalent(real, sim)


def test_ui_notify_types_status_none_widgets_and_dialog_defaults(targets: Targets) -> None:
    answers = [{"input": "typed"}, {"input": "edited"}]
    real, sim = play(targets, scenario({}), [{"command": {"text": "/ui", "answers": answers}}], SURFACE)
    assert real.notifications[:3] == [
        ("kind info", "info"),
        ("kind warning", "warning"),
        ("kind error", "error"),
    ]
    assert notes(real)["ui"] == {"input": "typed", "editor": "edited", "unanswered": None}
    assert real.statuses == {"kept": "on"}
    assert (real.notifications, real.statuses) == (sim.notifications, sim.statuses)
    assert_equivalent(real, sim)


def test_pi_set_model_to_a_model_without_auth_returns_false(targets: Targets) -> None:
    sc = scenario(
        {},
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "fake/fake-big", "context_window": 40000, "max_tokens": 1000},
            {"id": "locked/big", "context_window": 40000, "max_tokens": 1000, "auth": False},
        ],
    )
    real, sim = play(targets, sc, [{"command": "/setmodel"}], SURFACE)
    # pi.setModel: false without configured auth, no model change (agent-session.js:2911-2916).
    assert notes(real)["setmodel"] == {
        "lockedFound": True,
        "lockedAuth": False,
        "locked": False,
        "afterLocked": "fake/fake-model",
        "big": True,
        "again": True,
        "afterBig": "fake/fake-big",
        "thinking": "off",
        "available": ["fake/fake-model", "fake/fake-big"],
    }
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_is_idle_pending_and_usage_inside_run_handlers(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": "first", "usage": {"input": 1000, "output": 10}},
                {"text": "second", "usage": {"input": 1100, "output": 10}},
            ]
        }
    )
    ops = [{"command": "/watch"}, {"prompt": "one"}, {"command": "/queue"}]
    real, sim = play(targets, sc, ops, SURFACE)
    labels = [m.partition(": ")[0] for m, _ in real.notifications]
    assert labels[:3] == ["agent_start", "turn_end", "agent_end"]
    first = [json.loads(m.partition(": ")[2]) for m, _ in real.notifications[:3]]
    assert [f["idle"] for f in first] == [False, False, False]
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)


def test_what_the_api_returns_and_takes_is_a_copy(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "hello back"}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}, {"command": "/alias"}, {"prompt": "again"}], SURFACE)
    alias = notes(real)["alias"]
    # A Python extension talks to Pi in JSON (the bridge): append_entry's data is the data as it
    # was at the call (a tuple a list), and changing an entry the session manager returned
    # changes no entry of Pi's.
    assert alias == {
        "data": [{"n": 1, "inner": {"k": [1]}}, [1, 2]],
        "tupleType": "list",
        "types": ["model_change", "thinking_level_change", *["message"] * 3, "custom", "custom"],
        "header": "session",
        "leaf": "custom",
        "leafHasId": True,
        "enabled": True,
    }
    lines = real.session_file_entries()
    assert [line.get("data") for line in lines if line["type"] == "custom"] == alias["data"]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_has_pending_messages_after_queueing_in_a_handler(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": "first", "usage": {"input": 1000, "output": 10}},
                {"text": "after steer", "usage": {"input": 1100, "output": 10}},
                {"text": "after follow-up", "usage": {"input": 1200, "output": 10}},
            ]
        }
    )
    real, sim = play(targets, sc, [{"command": "/watch steer"}, {"prompt": "one"}], SURFACE)
    # While the agent streams, sendUserMessage queues a steer or a follow-up (prompt ->
    # _preparePrompt -> _queueSteer/_queueFollowUp, agent-session.js:1757-1770); by the next
    # handler hasPendingMessages counts them (pendingMessageCount, :2065-2067, :2932).
    assert notes(real)["steer"] == {"before": False, "after": True, "idle": False}
    users = [e["message"]["content"] for e in real.entries if e.get("message", {}).get("role") == "user"]
    assert len(users) == 3
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_context_usage_after_a_compaction_is_unknown_until_the_next_reply(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": "second", "usage": {"input": 1100, "output": 10}},
            ],
            "summary": [{"text": "S1"}],
        }
    )
    ops = [
        {"prompt": "one " + LONG},
        "compact",
        {"command": "/state"},
        {"prompt": "two"},
        {"command": "/state"},
    ]
    real, sim = play(targets, sc, ops, SURFACE)
    states = [json.loads(m.partition(": ")[2]) for m, _ in real.notifications if m.startswith("state: ")]
    # getContextUsage: tokens and percent null after a compaction until an assistant replied
    # after it (agent-session.js:3621-3640).
    assert real.operations[1].ok
    assert states[0]["usage"] == {"tokens": None, "percent": None, "window": 20000}
    assert states[1]["usage"]["tokens"] == 1110
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)


def test_changing_an_event_in_a_handler_changes_nothing_of_pis(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": "calling", "tool_calls": [TOOL], "usage": {"input": 1100, "output": 10}},
                {"text": "second", "usage": {"input": 1200, "output": 10}},
            ],
            "summary": [{"text": "S1"}],
        }
    )
    ops = [{"prompt": "one " + LONG}, "compact", {"prompt": "two"}]
    real, sim = play(targets, sc, ops, "probe_fidelity:mutator")
    [result] = [e["message"] for e in real.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["content"] == [{"type": "text", "text": "hi\n"}]
    assert all(o.ok for o in real.operations)
    text = json.dumps(real.session_file_entries()) + json.dumps(
        [r.request.messages for r in real.model_requests]
    )
    assert "MUTATED" not in text and '"mutated"' not in text
    assert_equivalent(real, sim)


def test_what_an_extension_gave_pi_does_not_change_when_the_extension_changes_it(targets: Targets) -> None:
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": "second", "usage": {"input": 1100, "output": 10}},
            ]
        }
    )
    ops = [
        {"prompt": "one " + LONG},
        {"command": "/keep"},
        "compact",
        {"command": "/kept"},
        {"prompt": "two"},
    ]
    real, sim = play(targets, sc, ops, "probe_fidelity:keeper")
    assert all(o.ok for o in real.operations)
    assert notes(real)["kept"] == {
        "custom": [[{"type": "text", "text": "ORIGINAL"}]],
        "details": [{"state": "ORIGINAL", "list": [1]}],
    }
    last = real.requests("agent")[-1].request.messages
    assert "ORIGINAL" in json.dumps(last) and "CHANGED" not in json.dumps(last)
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_a_tool_that_changes_its_params_and_its_kept_result_changes_nothing_of_pis(targets: Targets) -> None:
    call = {"name": "keep_items", "arguments": {"items": ["a"]}}
    sc = scenario(
        {
            "agent": [
                {"text": "calling", "tool_calls": [call], "usage": {"input": 1000, "output": 10}},
                {"text": "done", "usage": {"input": 1100, "output": 10}},
                {"text": "again", "usage": {"input": 1200, "output": 10}},
            ]
        }
    )
    real, sim = play(targets, sc, [{"prompt": "one"}, {"prompt": "two"}], "probe_fidelity:tool_keeper")
    assert all(o.ok for o in real.operations)
    text = json.dumps(real.session_file_entries()) + json.dumps(
        [r.request.messages for r in real.model_requests]
    )
    assert "ADDED-BY-EXECUTE" not in text and "CHANGED" not in text and "ORIGINAL" in text
    assert_equivalent(real, sim)


def test_complete_with_a_reused_message_list(targets: Targets) -> None:
    sc = scenario({"extension": [{"text": "ONE"}, {"text": "TWO"}]})
    real, sim = play(targets, sc, [{"command": "/twice"}], "probe_fidelity:call_keeper")
    assert real.notifications == [('["stop", "stop"]', "info")]
    first, second = real.requests("extension")
    assert "CHANGED" not in json.dumps(first.request.messages)
    assert "CHANGED-REQUEST" in json.dumps(second.request.messages)
    assert_equivalent(real, sim)


def test_send_user_message_with_an_image_part(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": "seen"}]},
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
    )
    real, sim = play(targets, sc, [{"command": "/img"}], "probe_fidelity:imager")
    # sendUserMessage: text parts joined, the other parts are the prompt's images
    # (agent-session.js:2021-2049).
    [request] = real.requests("agent")
    user = request.request.messages[-1]
    assert [part["type"] for part in user["content"]] == ["text", "image"]
    assert_equivalent(real, sim)


ODD = "probe_fidelity:odd_data"


def test_data_json_cannot_take_as_it_is_reaches_pi_as_the_bridge_encodes_it(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/odd"}, {"command": "/oddmsg"}], ODD)
    odd = notes(real)["odd"]
    # The bridge's json.dumps (api/wire_json.py): a set, frozenset or tuple a list, int, float,
    # bool and None keys their JSON text, bytes and a path their str(), a dataclass its fields;
    # a tuple key raises TypeError at the call. Pi parses numbers as doubles and writes them
    # back with JSON.stringify: 1.0 is 1, -0.0 is 0, 2**64 rounded, 10**400 Infinity -> null.
    assert odd["outcomes"] == {
        "set": "ok",
        "frozenset": "ok",
        "nested-set": "ok",
        "int-keys": "ok",
        "float-key": "ok",
        "bool-key": "ok",
        "none-key": "ok",
        "tuple-key": "TypeError",
        "bytes": "ok",
        "path": "ok",
        "dataclass": "ok",
        "numbers": "ok",
    }
    assert odd["entries"] == [
        ["set", [1, 2, 3], True],
        ["frozenset", ["a"], True],
        ["nested-set", {"s": [5], "t": [1, [2, 3]]}, True],
        ["int-keys", {"1": "one", "2": {"3": "three"}}, True],
        ["float-key", {"2.5": "x"}, True],
        ["bool-key", {"true": "t", "false": "f"}, True],
        ["none-key", {"null": "n"}, True],
        ["bytes", "b'ab'", True],
        ["path", "a/b", True],
        ["dataclass", {"x": 1, "y": [2]}, True],
        ["numbers", [1, 0, 18446744073709552000, None, 1e21, 1e300, 0.1, 9007199254740992], True],
    ]
    numbers = odd["entries"][-1][1]
    assert [type(n).__name__ for n in numbers[:3]] == ["int", "int", "int"]
    assert notes(real)["oddmsg"] == {"outcome": "ok", "details": [{"s": [1], "b": "b'x'"}]}
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_append_entry_with_nan_or_infinity_never_reaches_pi(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/nan"}], ODD)
    # The bridge writes NaN/Infinity, JSON.parse throws and bridge.ts drops the line: no entry,
    # no message, no notification, no status, no error in the extension.
    assert notes(real)["nan"] == {
        "outcomes": ["ok"] * 6,
        "entries": [["one", 1, True]],
        "messages": [],
    }
    assert [message.partition(": ")[0] for message, _ in real.notifications] == ["nan"]
    assert real.statuses == {}
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_input_handlers_each_get_their_own_images(targets: Targets) -> None:
    sc = scenario(
        {"agent": [{"text": "seen"}]},
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
    )
    op = {"prompt": {"text": "look", "images": [{"data": PIXEL, "mimeType": "image/png"}]}}
    real, sim = play(targets, sc, [op], "probe_fidelity:input_imager")
    # emitInput (runner.js:1214-1249) hands each handler the images; through the bridge each
    # handler's event is parsed anew, so the first handler's in-place change reaches neither
    # the second handler nor the prompt (one image, no "extra"), and the images the second
    # returned crossed as JSON: the third handler's change to them is not Pi's.
    assert real.notifications == [
        ('input: {"text": "look", "images": [["data", "mimeType", "type"]]}', "info")
    ]
    [request] = real.requests("agent")
    user = request.request.messages[-1]
    assert [part["type"] for part in user["content"]] == ["text", "image"]
    assert user["content"][0]["text"] == "look (transformed)"
    assert user["content"][1]["data"] == PIXEL
    assert "MUTATED" not in json.dumps(real.session_file_entries())
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)


def test_an_input_transform_without_a_text_fails_the_prompt(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "answered"}]})
    ops: list[Any] = []
    for kind in ("missing", "none", "number", "result", "off"):
        ops += [{"command": f"/how {kind}"}, {"prompt": f"p-{kind}"}]
    real, sim = play(targets, sc, ops, "probe_fidelity:input_untexted")
    # emitInput: currentText = result.text (runner.js:1232), so a transform without a string
    # text leaves none; prompt() expands skills on it (_expandSkillCommand, agent-session.js:
    # 1754, 1821: text.startsWith) and throws V8's TypeError. The next Python handler reads ""
    # (the bridge's str(text or "")), or "5".
    prompts = [o for o in real.operations if o.name == "prompt"]
    assert [(o.ok, o.error) for o in prompts] == [
        (False, "Cannot read properties of undefined (reading 'startsWith')"),
        (False, "Cannot read properties of null (reading 'startsWith')"),
        (False, "text.startsWith is not a function"),
        (False, "Cannot read properties of undefined (reading 'startsWith')"),
        (True, None),
    ]
    assert [json.loads(m.partition(": ")[2])["text"] for m, _ in real.notifications] == [
        "",
        "",
        "5",
        "",
        "p-off",
    ]
    assert len(real.requests("agent")) == 1
    assert (sim.operations, sim.notifications) == (real.operations, real.notifications)
    assert_equivalent(real, sim)


def _sent_and_later(observation: Any) -> tuple[list[Any], list[tuple[str | None, str | None]]]:
    """The user messages' content and each assistant reply's (stopReason, errorMessage), as
    the session file holds them."""
    messages = [e["message"] for e in observation.session_file_entries() if e["type"] == "message"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    replies = [(m.get("stopReason"), m.get("errorMessage")) for m in messages if m["role"] == "assistant"]
    return users, replies


UNDEFINED_LENGTH = "Cannot read properties of undefined (reading 'length')"


def test_a_user_message_sent_without_a_text_fails_every_later_request_until_compacted(
    targets: Targets,
) -> None:
    sc = scenario({"agent": [{"text": "answered"}]})
    ops: list[Any] = [
        {"command": "/how missing"},
        {"command": "/send"},
        {"command": "/how off"},
        {"prompt": "one " + LONG},
        "restart",
        {"prompt": "two " + LONG},
        "compact",
        {"prompt": "after"},
    ]
    real, sim = play(targets, sc, ops, "probe_fidelity:input_untexted")
    # sendUserMessage does not expand templates (agent-session.js:2045), so nothing reads the
    # transform's text until the run: _runInputHandlers takes it as it is (:1670-1671) and
    # _prepareRun builds {type: "text", text: undefined} (:1571-1581), which JSON.stringify
    # stores as {"type": "text"}. pi-ai's estimate in streamSimple (clampMaxTokensToContext,
    # api/simple-options.js:13-23, 36) reads block.text.length (utils/estimate.js:15-21) for
    # every later request too, and lazyStream ends each with the TypeError (api/lazy.js:2-21,
    # 45-66): no request is sent, the reply is empty, not retried; after a restart the same
    # (the session file's block has no text). A compaction that summarises the message away
    # (contentText gives "", serializeConversation leaves it out) heals the session.
    users, replies = _sent_and_later(real)
    assert users[0] == [{"type": "text"}]
    assert replies == [("error", UNDEFINED_LENGTH)] * 3 + [("stop", None)]
    assert all(o.ok for o in real.operations)
    assert [r.kind for r in real.model_requests] == ["summary", "agent"]
    [summary] = real.requests("summary")
    assert "<conversation>\n[User]: one " in summary.request.messages[0]["content"][0]["text"]
    assert [json.loads(m.partition(": ")[2])["text"] for m, _ in real.notifications][:1] == [""]
    assert not any(e["type"].startswith("auto_retry") for e in real.rpc_events)
    assert_equivalent(real, sim)


@pytest.mark.parametrize("kind", ["none", "number"])
def test_a_user_message_sent_with_a_null_or_numeric_text(targets: Targets, kind: str) -> None:
    sc = scenario({"agent": [{"text": "answered"}, {"text": "again"}]})
    ops: list[Any] = [
        {"command": f"/how {kind}"},
        {"command": "/send"},
        {"command": "/how off"},
        {"prompt": "later"},
    ]
    real, sim = play(targets, sc, ops, "probe_fidelity:input_untexted")
    users, replies = _sent_and_later(real)
    if kind == "none":
        # null stays in the session file; block.text.length throws on it (utils/estimate.js:20).
        assert users[0] == [{"type": "text", "text": None}]
        assert replies == [("error", "Cannot read properties of null (reading 'length')")] * 2
        assert real.model_requests == []
    else:
        # A number's length is undefined: the estimate is NaN, so max_tokens is NaN and left out
        # (openai-completions.js:578), and convertMessages drops the block and the message
        # (item.text.length > 0, :927, 944-945). The next request counts from the reply's usage.
        assert users[0] == [{"type": "text", "text": 5}]
        assert replies == [("stop", None), ("stop", None)]
        first, second = real.requests("agent")
        assert (first.request.max_tokens, second.request.max_tokens) == (None, 1000)
        assert [m["role"] for m in first.request.messages] == []
    assert_equivalent(real, sim)


def test_a_lone_surrogate_reaches_pi_and_its_session_file_escaped(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "answered"}]})
    ops = [{"command": "/surrogate"}, {"prompt": "hi"}, {"command": "/surrogate"}]
    real, sim = play(targets, sc, ops, "probe_fidelity:surrogate")
    # A JavaScript string may hold a lone surrogate, and JSON.stringify writes it as the escape
    # \ud800 (well-formed JSON.stringify), so Pi keeps it and its session file is UTF-8. (The
    # bridge used to take the UnicodeEncodeError for a closed pipe: the call was lost and every
    # later one failed with "Pi has exited".)
    data = ["lone \ud800 surrogate", "plain"]
    assert notes(real)["surrogate"] == {"outcomes": ["ok", "ok"], "data": data + data}
    assert [
        line.get("data") for line in real.session_file_entries() if line["type"] == "custom"
    ] == data + data
    for observed in (real, sim):
        assert observed.session_file is not None
        raw = observed.session_file.read_bytes()
        assert b'"lone \\ud800 surrogate"' in raw
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_what_a_handler_or_a_tool_returns_reaches_pi_as_the_bridge_encodes_it(targets: Targets) -> None:
    call = {"name": "odd_result", "arguments": {}}
    sc = scenario(
        {
            "agent": [
                {"text": LONG, "usage": {"input": 1000, "output": 10}},
                {"text": "calling", "tool_calls": [call], "usage": {"input": 1100, "output": 10}},
                {"text": "done", "usage": {"input": 1200, "output": 10}},
            ],
        }
    )
    ops = [{"prompt": "one " + LONG}, "compact", {"prompt": "two"}]
    real, sim = play(targets, sc, ops, "probe_fidelity:returner")
    # The bridge's reply is json.dumps with its default (api/wire_json.py): a set or a tuple a
    # list, bytes their str(); Pi reads 2.0 as the number 2 and stores it so.
    assert all(o.ok for o in real.operations)
    [compaction] = real.entries_of("compaction")
    assert compaction["details"] == {"s": [1, 2], "f": 2, "b": "b'x'", "t": [1, 2]}
    [result] = [e["message"] for e in real.entries_of("message") if e["message"]["role"] == "toolResult"]
    assert result["details"] == {"s": [3], "f": 1} and type(result["details"]["f"]) is int
    assert_equivalent(real, sim)


def test_api_calls_with_arguments_of_other_types(targets: Targets) -> None:
    real, sim = play(targets, scenario({}), [{"command": "/loose"}], "probe_fidelity:loose_args")
    loose = json.loads(real.notifications[-1][0].partition(": ")[2])
    # Fire-and-forget calls: Pi's appendSessionInfo throws on a name that is not a string
    # (name.replace, session-manager.js:935-936), inside Pi; the extension sees no error.
    assert loose.pop("customs") == [[7, {"x": 1}]]  # a custom type Pi stores as given
    assert loose == {
        "name-int": "ok",
        "name-none": "ok",
        "name-tuple": "ok",
        "notify-dict": "ok",
        "notify-bogus": "ok",
        "status-int": "ok",
        "widget-tuple": "ok",
        "entry-type-int": "ok",
        "name": None,
        "infos": [],
    }
    # RPC carries a message that is not a string as its JSON; PiTarget records it as str().
    assert real.notifications[:2] == [("{'a': 1}", "info"), ("bogus kind", "bogus")]
    assert real.statuses == {"k": "5"}
    assert (sim.notifications, sim.statuses) == (real.notifications, real.statuses)
    assert_equivalent(real, sim)


def test_a_handler_unsubscribed_by_an_earlier_one_of_the_same_dispatch_does_not_run(targets: Targets) -> None:
    sc = scenario({"agent": [{"text": "one"}, {"text": "two"}]})
    real, sim = play(targets, sc, [{"prompt": "a"}, {"prompt": "b"}], "probe_fidelity:unsubscriber")
    # Pi snapshots its handlers per dispatch (runner.js snapshotEventHandlers) and keeps the
    # bridge's handler after an unsubscribe; that handler answers undefined once its Python slot
    # is empty (bridge_api.py BridgeExtensionAPI.on), so the second handler never runs.
    assert real.notifications == [("first ran", "info"), ("first ran", "info")]
    assert sim.notifications == real.notifications
    assert_equivalent(real, sim)


# ====================================================================== Pi's thrown Errors
THROWER = "probe_fidelity:thrower"


def test_an_error_pi_throws_is_the_apis_pi_error_on_both_targets(targets: Targets) -> None:
    """Where Pi's API throws, a Python extension catches :class:`~pi_continuity_harness.api.PiError`
    with Pi's message on both targets (it was the simulator's ``ValueError``/``PromptRejectedError``
    and the bridge's ``BridgeCallError``): ``theme.fg`` of an unknown token (``tokenAnsi``,
    theme.js:212-215), ``navigate_tree`` to an unknown entry (agent-session.js:3386-3389), and the
    Error ``ctx.compact`` hands ``on_error`` (agent-session.js:2352-2356, 2936-2948)."""
    real, sim = play(targets, scenario({}), [{"command": "/throws"}], THROWER)
    said = notes(real)
    assert said["idle"] == {
        "theme": [True, "Unknown theme color: bogus"],
        "navigate": [True, "Entry nope not found"],
    }
    assert said["compact"] == [True, "Nothing to compact (session too small)"]
    assert notes(sim) == said
    assert_equivalent(real, sim)


def test_an_error_pi_throws_while_a_reply_streams_is_the_apis_pi_error(targets: Targets) -> None:
    """``/throws busy`` while the reply streams: ``reload`` (agent-session.js:3105-3107) and
    ``navigate_tree`` (:3371-3373) throw Pi's Errors, a ``PiError`` on both targets."""
    sc = scenario({"agent": [{"text": "reply", "latency_ms": 300, "during": [{"command": "/throws busy"}]}]})
    real, sim = play(targets, sc, [{"prompt": "one"}], THROWER)
    assert notes(real)["busy"] == {
        "reload": [True, "Wait for the current response to finish before reloading."],
        "navigate": [True, "Wait for the current response to finish before navigating the session tree."],
    }
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_models_the_registry_does_not_know_reach_pi_as_given(targets: Targets) -> None:
    """``/unknown`` hands ``complete``, ``has_configured_auth`` and ``pi.set_model`` models made
    with ``dataclasses.replace(ctx.model, ...)``, as a TypeScript extension's
    ``{...ctx.model, id: "other-model"}``. Pi looks none up: ``setModel`` checks the provider's
    auth and sets the object (``dist/core/agent-session.js:2911-2915, 2119-2136``),
    ``hasConfiguredAuth`` asks the provider (``model-registry.js:31-32``,
    ``model-runtime.js:366-368``), ``complete`` prepares the request for the provider
    (``model-runtime.js:459-469``, a setup failure resolves as pi-ai's error message,
    ``pi-ai/dist/api/lazy.js:2-21, 55-65``). The bridge threw ``unknown model`` for every one
    of them but the registry's own; the simulator gave an unknown provider auth."""
    sc = scenario({"agent": [{"text": "from other"}], "extension": [{"text": "noted"}] * 2})
    real, sim = play(targets, sc, [{"command": "/unknown"}, {"prompt": "hi"}], SURFACE)
    seen = notes(real)["unknown"]
    model = dict(FAKE_MODEL)

    def failed(provider: str, model_id: str, error: str) -> dict[str, Any]:
        complete = {"errorMessage": error, "model": model_id, "provider": provider, "stopReason": "error"}
        return {"complete": complete, "text": "", "auth": False, "set": False, "after": model}

    assert seen["stranger"] == failed("nowhere", "x", "Unknown provider: nowhere")
    assert seen["builtin"] == failed("anthropic", "claude-x", "Provider is not configured: anthropic")
    for label, after in (
        ("narrow", {**model, "maxTokens": 77, "name": "Narrow"}),
        ("other", {**model, "id": "other-model"}),
    ):
        assert seen[label]["complete"] == {
            "errorMessage": None,
            "model": after["id"],
            "provider": "fake",
            "stopReason": "length",
        }
        assert (seen[label]["auth"], seen[label]["set"], seen[label]["after"]) == (True, True, after)
    assert seen["builtinAuth"] == []
    # The requests reached the fake server under the models' ids; the turn after uses other-model.
    assert [(r.kind, r.request.model, r.request.max_tokens) for r in real.model_requests] == [
        ("extension", "fake/fake-model", 64),
        ("extension", "fake/other-model", 64),
        ("agent", "fake/other-model", 1000),
    ]
    changes = [(e["provider"], e["modelId"]) for e in real.entries if e["type"] == "model_change"]
    assert changes == [("fake", "fake-model")] * 2 + [("fake", "other-model")]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_the_registry_lists_and_finds_pi_s_built_in_models(targets: Targets) -> None:
    """``/catalog``: ``getAll()`` is ``runtime.getModels()`` (``dist/core/model-registry.js:18-20``),
    every provider in ``providerIds()`` order, pi-ai's built-in ones first and models.json's
    after them (``dist/core/model-runtime.js:134-142, 174-179``); ``find`` is ``getModel``
    (``model-registry.js:24-26``, ``model-runtime.js:292-294``) and finds a built-in model too.
    No built-in provider has auth in the harness's environment: ``getAvailable()`` lists the
    scenario's models only, ``setModel`` of a built-in model is false and ``complete`` fails
    with "Provider is not configured" (``model-runtime.js:459-469``). The simulator listed and
    found the scenario's models only."""
    real, sim = play(targets, scenario({}), [{"command": "/catalog"}], SURFACE)
    seen = notes(real)["catalog"]
    stored = [m.to_json() for m in pi_builtin_models()]
    fake = dict(FAKE_MODEL)
    big = {**fake, "id": "fake-big", "name": "fake-big", "contextWindow": 40000}
    rows = json.dumps([*stored, fake, big], sort_keys=True).encode()
    assert seen["count"] == len(stored) + 2 > 1000
    assert seen["digest"] == hashlib.sha256(rows).hexdigest()
    assert seen["first"] == stored[0] and seen["last"] == "fake/fake-big"
    assert seen["providers"][-1] == "fake" and "anthropic" in seen["providers"]
    assert seen["builtin"] == {
        "api": "anthropic-messages",
        "contextWindow": 200000,
        "id": "claude-sonnet-4-5",
        "input": ["text", "image"],
        "maxTokens": 64000,
        "name": "Claude Sonnet 4.5 (latest)",
        "provider": "anthropic",
        "reasoning": True,
    }
    assert seen["missing"] is False and seen["fake"] == fake
    assert seen["available"] == ["fake/fake-model", "fake/fake-big"]
    assert (seen["builtinAuth"], seen["builtinSet"]) == (False, False)
    assert seen["builtinComplete"] == ["error", "Provider is not configured: anthropic"]
    assert seen["after"] == "fake/fake-model"
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


def test_a_scenario_provider_named_as_a_built_in_one_overlays_its_models(targets: Targets) -> None:
    """A models.json provider with a built-in provider's name keeps the built-in's place in
    ``getAll()``, its models upserted by id into the built-in list (replaced in place, else
    appended: ``composeModelProvider``'s ``applyModelsJson``, ``dist/core/provider-composer.js:357``,
    ``dist/core/model-runtime.js:156-173``), and its key gives auth to every model of it:
    ``getAvailable()`` lists the built-in ones too (``model-runtime.js:181-188``)."""
    sc = scenario(
        {"extension": [{"text": "noted"}]},
        models=[
            {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
            {"id": "anthropic/claude-sonnet-4-5", "context_window": 30000, "max_tokens": 1000},
            {"id": "anthropic/brand-new", "context_window": 30000, "max_tokens": 1000},
        ],
    )
    real, sim = play(targets, sc, [{"command": "/catalog"}], SURFACE)
    seen = notes(real)["catalog"]
    anthropic = [m.full_id for m in pi_builtin_models() if m.provider == "anthropic"]
    assert seen["count"] == len(pi_builtin_models()) + 2 and seen["last"] == "fake/fake-model"
    assert seen["builtin"] == {
        "api": "openai-completions",
        "contextWindow": 30000,
        "id": "claude-sonnet-4-5",
        "input": ["text"],
        "maxTokens": 1000,
        "name": "claude-sonnet-4-5",
        "provider": "anthropic",
        "reasoning": False,
    }
    assert seen["available"] == [*anthropic, "anthropic/brand-new", "fake/fake-model"]
    assert (seen["builtinAuth"], seen["builtinSet"], seen["after"]) == (
        True,
        True,
        "anthropic/claude-sonnet-4-5",
    )
    assert seen["builtinComplete"] == ["length", None]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)
