"""What ``tool_result`` handlers return becomes the tool call's result, by Pi 1.6.0's rules
(``emitToolResult``, runner.js:913-969; ``_afterToolCall``, agent-session.js:406-440;
``finalizeExecutedToolCall``, pi-agent-core agent-loop.js:598-630): the simulator's
``simulator/tool_result_hooks.py``. The differential twin on real Pi is
``tests/realpi/test_differential_tool_result_handlers.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, ToolDefinition, ToolResult
from pi_continuity_harness.simulator.tool_result_hooks import after_tool_call, apply_handler_result

from .helpers import agent_requests, base, entries, run, session_records

BASH = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
BASH_STRUCTURED = {"output": "hi\n", "truncated": False, "exit_code": 0, "wall_time_seconds": 0}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def _run(tmp_path: Path, *handlers: Any, calls: list[dict[str, Any]] | None = None, tool: Any = None) -> Any:
    """One prompt whose reply makes ``calls`` (default: the scripted bash call), then ``DONE``;
    ``handlers`` are the extension's ``tool_result`` handlers in order. The result's ``ends``:
    each ``tool_execution_end``'s ``result`` as an extension sees it (agent-session.js:1036-1045),
    with the ``isError`` of the call's entry."""
    ends: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        if tool is not None:
            params = {"type": "object", "properties": {}}
            pi.register_tool(ToolDefinition("probe", "probe", "Probes.", params, tool))
        for handler in handlers:
            pi.on("tool_result", handler)
        pi.on("tool_execution_end", lambda event, ctx: ends.append(event.result))

    replies = [{"text": "t", "tool_calls": calls or [BASH]}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "hello"}]), extension)
    result.ends = ends
    return result


def _ends(result: Any) -> list[tuple[Any, Any]]:
    """``(result, isError)`` of each call: its ``tool_execution_end`` result, its entry's ``isError``."""
    return [(end, m["isError"]) for end, m in zip(result.ends, _messages(result), strict=True)]


def _messages(result: Any) -> list[dict[str, Any]]:
    keys = ("content", "details", "usage", "isError")
    found = [e["message"] for e in entries(result) if e.get("message", {}).get("role") == "toolResult"]
    return [{k: m[k] for k in keys if k in m} for m in found]


def test_each_tool_result_handler_sees_what_the_handlers_before_it_changed(tmp_path: Path) -> None:
    """runner.js:915-945: one ``currentEvent`` for all handlers; the last change of each key wins
    and is the call's result (``tool_execution_end``, the entry, the next request)."""
    seen: list[Any] = []

    def first(event: Any, ctx: Any) -> Any:
        seen.append((event.content, event.details, event.is_error))
        return {"content": text("one"), "details": {"by": "first"}}

    def second(event: Any, ctx: Any) -> Any:
        seen.append((event.content, event.details, event.is_error))
        return {"details": {"by": "second"}, "isError": True}

    def third(event: Any, ctx: Any) -> None:
        seen.append((event.content, event.details, event.is_error))

    result = _run(tmp_path, first, second, third)
    assert seen == [
        (text("hi\n"), None, False),
        (text("one"), {"by": "first"}, False),
        (text("one"), {"by": "second"}, True),
    ]
    assert _ends(result) == [({"content": text("one"), "details": {"by": "second"}}, True)]
    assert _messages(result) == [{"content": text("one"), "details": {"by": "second"}, "isError": True}]
    [_, last] = agent_requests(result)
    assert [m["content"] for m in last.messages if m["role"] == "toolResult"] == [text("one")]


def test_a_handlers_none_is_seen_by_the_next_handler_and_the_tools_own_value_is_kept(tmp_path: Path) -> None:
    """``!== undefined`` (runner.js:923-941): ``None`` (JSON ``null``) replaces an earlier
    handler's change; then ``??`` (agent-session.js:421, agent-loop.js:615-617, 627) takes the
    tool's own content, details and isError."""
    seen: list[Any] = []

    def first(event: Any, ctx: Any) -> Any:
        return {"content": text("one"), "details": {"by": "first"}, "isError": True}

    def second(event: Any, ctx: Any) -> Any:
        return {"content": None, "details": None, "isError": None}

    def third(event: Any, ctx: Any) -> None:
        seen.append((event.content, event.details, event.is_error))

    result = _run(
        tmp_path, first, second, third, calls=[{"name": "probe", "arguments": {}, "id": "p1"}], tool=_probe
    )
    assert seen == [([], None, False)]
    assert _ends(result) == [({"content": text("probe out"), "details": {"n": 1}}, False)]
    assert _messages(result) == [{"content": text("probe out"), "details": {"n": 1}, "isError": False}]


async def _probe(call_id: str, params: Any, signal: Any, ctx: Any) -> ToolResult:
    return ToolResult(content=text("probe out"), details={"n": 1})


def test_a_raising_tool_result_handler_is_an_extension_error_and_the_next_handler_runs(
    tmp_path: Path,
) -> None:
    """runner.js:947-955: reported (``emitError``), the event as the handlers before it left it."""
    seen: list[Any] = []

    def first(event: Any, ctx: Any) -> Any:
        return {"content": text("one")}

    def fail(event: Any, ctx: Any) -> Any:
        raise RuntimeError("handler failed")

    def last(event: Any, ctx: Any) -> None:
        seen.append(event.content)

    result = _run(tmp_path, first, fail, last)
    assert seen == [text("one")]
    errors = [(r["event"], r["error"]) for r in session_records(result, "extension_error")]
    assert errors == [("tool_result", "handler failed")]
    assert _messages(result) == [{"content": text("one"), "isError": False}]


def test_a_tool_result_handlers_result_that_is_not_an_object_with_the_keys_changes_nothing(
    tmp_path: Path,
) -> None:
    """runner.js:921-945: a falsy result is skipped, a list's or a string's ``.content`` is
    ``undefined``, and other keys (``is_error``, ``terminate``) are not read: the result stays
    the tool's, structured content included."""
    values = iter([["x"], "text", 0, True, {"is_error": True, "terminate": True}])

    def handler(event: Any, ctx: Any) -> Any:
        return next(values)

    result = _run(tmp_path, *[handler] * 5)
    assert _ends(result) == [({"content": text("hi\n"), "structuredContent": BASH_STRUCTURED}, False)]


def test_a_tool_result_content_that_is_not_a_list_fails_the_call(tmp_path: Path) -> None:
    """``normalizeToolResultImages`` (tool-result-images.js:13-15) calls ``content.some``: a
    string content throws there, and ``finalizeExecutedToolCall`` makes the call an error result
    (agent-loop.js:623-626: the message, ``details: {}``). The next handler's event lists the
    string's characters (the bridge's ``list(content or [])``)."""
    seen: list[Any] = []
    result = _run(
        tmp_path, lambda event, ctx: {"content": "ab"}, lambda event, ctx: seen.append(event.content)
    )
    assert seen == [["a", "b"]]
    failed = {"content": text("content.some is not a function"), "details": {}}
    assert _ends(result) == [(failed, True)]
    assert _messages(result) == [{**failed, "isError": True}]


def test_a_null_block_in_a_tool_result_content_fails_the_call() -> None:
    """tool-result-images.js:14: ``block.type`` of a ``null`` block throws."""
    out, is_error = after_tool_call({"content": text("x")}, False, {"content": [None], "isError": False})
    assert (out, is_error) == (
        {"content": text("Cannot read properties of null (reading 'type')"), "details": {}},
        True,
    )


def test_a_tool_result_handlers_is_error_is_kept_as_given(tmp_path: Path) -> None:
    """agent-session.js:437, agent-loop.js:627: ``isError`` is the handler's value as it is
    (``"yes"`` in ``tool_execution_end`` and the entry); a Python handler's event and a
    ``tool_execution_end`` handler see the bridge's ``bool()`` of it."""
    seen: list[Any] = []

    def extension_end(event: Any, ctx: Any) -> None:
        seen.append(event.is_error)

    def first(event: Any, ctx: Any) -> Any:
        return {"isError": "yes"}

    def second(event: Any, ctx: Any) -> None:
        seen.append(event.is_error)

    def extension(pi: ExtensionAPI) -> None:
        pi.on("tool_result", first)
        pi.on("tool_result", second)
        pi.on("tool_execution_end", extension_end)

    replies = [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]
    result = run(tmp_path, base(model={"agent": replies}, operations=[{"prompt": "hello"}]), extension)
    assert seen == [True, True]
    assert [r["isError"] for r in session_records(result, "tool_execution_end")] == ["yes"]
    assert _messages(result)[0]["isError"] == "yes"


def test_a_tool_result_handlers_terminate_is_not_taken(tmp_path: Path) -> None:
    """``_afterToolCall`` returns no ``terminate`` (agent-session.js:434-440), so a handler's
    ``ToolResult(terminate=True)`` does not end the run: the model is asked again."""
    result = _run(tmp_path, lambda event, ctx: ToolResult(content=text("done"), terminate=True))
    assert len(agent_requests(result)) == 2
    # A ToolResult is all its keys: details null (the tool's kept), isError false.
    assert _ends(result) == [({"content": text("done")}, False)]


def test_a_content_without_structured_content_drops_the_tools_structured_content(tmp_path: Path) -> None:
    """runner.js:923-937 and agent-loop.js:613-621: a new content without a structuredContent
    drops the tool's (it may no longer match); details alone keep it, a handler's own one
    replaces it, and a ``None`` one drops it."""
    cases = [
        ({"content": text("one")}, {"content": text("one")}),
        (
            {"details": {"d": 1}},
            {"content": text("hi\n"), "details": {"d": 1}, "structuredContent": BASH_STRUCTURED},
        ),
        (
            {"content": text("one"), "structuredContent": {"s": 1}},
            {"content": text("one"), "structuredContent": {"s": 1}},
        ),
        ({"structuredContent": None}, {"content": text("hi\n")}),
    ]
    for index, (returned, expected) in enumerate(cases):
        result = _run(tmp_path / str(index), lambda event, ctx, returned=returned: returned)
        assert _ends(result) == [(expected, False)], returned


def test_a_tool_result_handlers_usage_reaches_the_tool_result_message(tmp_path: Path) -> None:
    """runner.js:942-945, agent-loop.js:617 and :662: ``usage`` is the result's and the
    message's."""
    usage = {"input": 1, "output": 2}
    result = _run(tmp_path, lambda event, ctx: {"usage": usage})
    assert _ends(result)[0][0]["usage"] == usage
    assert _messages(result) == [{"content": text("hi\n"), "usage": usage, "isError": False}]


def test_a_tool_result_handler_that_changes_its_event_in_place_changes_nothing(tmp_path: Path) -> None:
    """The bridge hands a Python handler a JSON copy of Pi's event (``build_event``): a handler
    that changes its event's content blocks and details in place and returns ``None`` changes
    neither the next handler's event nor the call's result; only a returned value counts."""
    seen: list[Any] = []

    def first(event: Any, ctx: Any) -> None:
        event.content[0]["text"] = "changed"
        event.details["n"] = 2

    def second(event: Any, ctx: Any) -> None:
        seen.append((event.content, event.details))

    result = _run(
        tmp_path, first, second, calls=[{"name": "probe", "arguments": {}, "id": "p1"}], tool=_probe
    )
    assert seen == [(text("probe out"), {"n": 1})]
    assert _ends(result) == [({"content": text("probe out"), "details": {"n": 1}}, False)]
    assert _messages(result) == [{"content": text("probe out"), "details": {"n": 1}, "isError": False}]
    current: dict[str, Any] = {"content": text("x"), "isError": False}
    assert apply_handler_result(current, None) is False
    assert apply_handler_result(current, []) is False
    assert current == {"content": text("x"), "isError": False}


def test_a_hooks_details_stands_after_the_content_as_in_pis_spread() -> None:
    """agent-loop.js:611-616 ``{...result, content, details, usage, terminate}``: Pi's tools'
    results have a ``details`` key after ``content`` (bash.js:333), so it keeps that place."""
    out, _ = after_tool_call(
        {"content": text("x"), "structuredContent": {"s": 1}},
        False,
        {"details": {"d": 1}, "structuredContent": {"s": 1}, "isError": False},
    )
    assert list(out) == ["content", "details", "structuredContent"]
