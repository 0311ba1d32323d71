"""Differential: a Python extension's ``context_with_system`` handlers, real Pi 1.6 against the
simulator.

After the ``context`` phase, Pi's ``emitContext`` (runner.js:1049-1077) hands each
``context_with_system`` handler the whole request transcript, its system messages included (the
session's leading system message holds the system prompt and tool declarations). A result's
``messages`` are used as returned; one that drops the leading system message is still sent, and
reported as an ``extension_error`` ("Handler removed the leading system message; ..."); a handler
that raises is an ``extension_error``.

The extension below records the roles and texts each call sees; on the second prompt's request
it returns the transcript without its first message; a second handler raises. The test asserts
real Pi's record, errors and requests explicitly, then that the simulator's are the same (before
the simulator dispatched the event, it had no record and no error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.scenario.transcript import content_text

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content[:20]
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")[:20]


def extension(pi):
    seen = []

    def with_system(event, ctx):
        seen.append([event.type, type(event).__name__, [[m.get("role"), text_of(m)] for m in event.messages]])
        if len(seen) == 2:
            return {"messages": [event.messages[0], event.messages[-1]]}
        if len(seen) == 3 and DROP_SYSTEM:
            return {"messages": event.messages[1:]}
        event.messages.clear()  # an in-place change through the bridge changes nothing
        return None

    def fail(event, ctx):
        raise RuntimeError("context_with_system handler failed")

    def settled(event, ctx):
        ctx.ui.notify("withsystem: " + json.dumps(seen), "info")

    pi.on("context_with_system", with_system)
    pi.on("context_with_system", fail)
    pi.on("agent_settled", settled)
"""

PATH = "with_system_probe:extension"
#: The second test's module (the simulator imports in this process: one name, one source).
DROP_PATH = "with_system_drop_probe:extension"
REMOVED = (
    "Handler removed the leading system message; the request has no prompt or initial tool declarations. "
    "Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage()."
)
FAILED = (PATH, "context_with_system", "context_with_system handler failed")
DROP_FAILED = (DROP_PATH, "context_with_system", "context_with_system handler failed")
ROW = ["context_with_system", "ContextWithSystemEvent"]


def _play(targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drop: bool, prompts: int) -> Any:
    directory = tmp_path / "extension"
    directory.mkdir()
    path = DROP_PATH if drop else PATH
    source = _EXTENSION.replace("DROP_SYSTEM", repr(drop))
    (directory / (path.split(":")[0] + ".py")).write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(directory))  # the bridge inherits it as PYTHONPATH
    replies = [{"text": "first reply"}, {"text": "second reply"}, {"text": "third reply"}]
    sc = scenario({"agent": replies[:prompts]})
    ops: list[Any] = [{"prompt": p} for p in ("one", "two", "three")[:prompts]]
    return play(targets, sc, ops, path)


def _errors(observation: Any) -> list[tuple[str, str, str]]:
    return [(e["extensionPath"], e["event"], e["error"]) for e in observation.session("extension_error")]


def test_a_context_with_system_handler_sees_and_replaces_the_whole_transcript(
    targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two prompts: the handler sees the leading system message and the conversation; on the
    second request it returns the system message and the last user message, which are what
    the model gets (the system prompt and tools kept)."""
    real, sim = _play(targets, tmp_path, monkeypatch, False, 2)
    record = notes(real)["withsystem"]
    assert [r[:2] for r in record] == [ROW, ROW]
    first_seen, second_seen = (r[2] for r in record)
    assert first_seen[0][0] == "system" and first_seen[1:] == [["user", "one"]]
    assert second_seen[0] == first_seen[0]
    assert second_seen[1:] == [["user", "one"], ["assistant", "first reply"], ["user", "two"]]
    assert _errors(real) == [FAILED, FAILED]
    first, second = real.requests("agent")
    assert [m["role"] for m in second.request.messages] == ["user"]
    assert second.request.system_prompt == first.request.system_prompt and second.request.tools
    roles = [e["message"]["role"] for e in real.entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert notes(sim).get("withsystem") == record
    assert _errors(sim) == _errors(real)
    assert [[m["role"] for m in r.request.messages] for r in sim.requests("agent")] == [["user"], ["user"]]
    assert_equivalent(real, sim)


def test_a_context_with_system_result_without_the_leading_system_message_is_sent_and_reported(
    targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three prompts; the third request's handler drops the leading system message: an
    ``extension_error`` (runner.js:1063-1068), and the request goes out without a system
    prompt or tools. The harness's fake server takes a request without tools for an
    extension's (``classify_request``) and answers it from the extension script (its default
    reply here, not the agent script's "third reply"); the simulator's model picks the script
    by the same rule (before, it answered from the agent script: ``assert_equivalent`` failed
    on the third reply and the requests' kinds)."""
    real, sim = _play(targets, tmp_path, monkeypatch, True, 3)
    record = notes(real)["withsystem"]
    assert len(record) == 3 and record[2][2][0][0] == "system"
    assert _errors(real) == [
        DROP_FAILED,
        DROP_FAILED,
        (DROP_PATH, "context_with_system", REMOVED),
        DROP_FAILED,
    ]
    third = real.model_requests[2]
    assert third.request.system_prompt is None and third.request.tools == []
    assert [m["role"] for m in third.request.messages] == ["user", "assistant", "user", "assistant", "user"]

    def shape(observation: Any) -> list[Any]:
        return [
            (r.request.system_prompt is None, r.request.tools, [m["role"] for m in r.request.messages])
            for r in observation.model_requests
        ]

    assert [r.kind for r in real.model_requests] == ["agent", "agent", "extension"]
    replies = [
        e["message"] for e in real.entries if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert "third reply" not in [content_text(m["content"]) for m in replies]
    assert notes(sim).get("withsystem") == record
    assert _errors(sim) == _errors(real)
    assert shape(sim) == shape(real)
    assert_equivalent(real, sim)
