"""Differential: a Python extension's ``message_update`` handler, real Pi 1.6 against the simulator.

Real Pi hands every streamed delta to the extensions (agent-session.js:990-996:
``{type: "message_update", message, assistantMessageEvent}`` through an awaited
``_extensionRunner.emit``); the bridge drops the delta event's ``partial`` (bridge.ts
``registerHandler``). The extension below, defined here, records per ``message_update`` the
event's type and class, the delta event's type, ``contentIndex`` and ``delta``, whether it still
has ``partial``, the message's role, and whether the message's text starts with the deltas so
far; it notifies the list at the assistant's ``message_end``, with whether each delta's message
text is a prefix of the final text. The test asserts real Pi's lists explicitly, then that the
simulator's are the same.

The message's text itself is not compared: on real Pi it is racy. ``{...partialMessage}``
(pi-agent-core agent-loop.js:305-310) copies the message but not its ``content`` blocks, which
pi-ai goes on filling while the loop awaits the extension (the bridge's round trip to Python),
so the JSON the bridge makes holds whatever the provider has read by then: with the fake
server's whole reply at once, every delta, ``text_start`` included, already saw the full text.
The simulator gives the message as it stands at the delta, one of the outcomes real Pi can give
(a slow network's).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.scenario.chat_wire import TEXT_CHUNK

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def text_of(message):
    return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")


def extension(pi):
    seen = []
    texts = []
    deltas = []

    def update(event, ctx):
        delta = event.assistant_message_event
        if delta.get("type") == "text_delta":
            deltas.append(delta.get("delta"))
        text = text_of(event.message)
        texts.append(text)
        seen.append(
            [
                event.type,
                type(event).__name__,
                delta.get("type"),
                delta.get("contentIndex"),
                delta.get("delta"),
                "partial" in delta,
                event.message.get("role"),
                text.startswith("".join(deltas)),
            ]
        )
        # A handler changing the message in place changes nothing of Pi's (it got a copy).
        event.message["content"] = []

    def end(event, ctx):
        if event.message.get("role") == "assistant":
            final = text_of(event.message)
            ctx.ui.notify("updates: " + json.dumps(seen), "info")
            ctx.ui.notify("prefixes: " + json.dumps([final.startswith(t) for t in texts]), "info")
            seen.clear()
            texts.clear()
            deltas.clear()

    pi.on("message_update", update)
    pi.on("message_end", end)
"""


def test_message_update_reaches_a_python_extension_delta_by_delta(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("message_update_probe", _EXTENSION)
    text = "".join(chr(ord("a") + i % 26) for i in range(TEXT_CHUNK * 2 + 10))
    sc = scenario({"agent": [{"text": text}]})
    real, sim = play(targets, sc, [{"prompt": "hello"}], "message_update_probe:extension")

    pieces = [text[i : i + TEXT_CHUNK] for i in range(0, len(text), TEXT_CHUNK)]
    assert len(pieces) == 3
    row = ["message_update", "MessageUpdateEvent"]
    expected: list[Any] = [[*row, "text_start", 0, None, False, "assistant", True]]
    expected += [[*row, "text_delta", 0, piece, False, "assistant", True] for piece in pieces]
    expected += [[*row, "text_end", 0, None, False, "assistant", True]]
    # Real Pi: one handler call per delta, in order, the delta event without ``partial``, the
    # message holding at least the deltas so far and no more than the final text.
    assert notes(real)["updates"] == expected, json.dumps(notes(real).get("updates"), indent=1)
    assert notes(real)["prefixes"] == [True] * len(expected)
    # The handler's in-place change reached neither the stream nor the persisted message.
    assert any(
        entry.get("type") == "message"
        and entry["message"].get("role") == "assistant"
        and entry["message"]["content"] == [{"type": "text", "text": text}]
        for entry in real.entries
    )
    assert notes(sim).get("updates") == notes(real)["updates"]
    assert notes(sim).get("prefixes") == notes(real)["prefixes"]
    assert_equivalent(real, sim)
