"""What ``tool_result`` handlers' results do to a tool call's result, as Pi 1.6.0 applies them.

Three steps of Pi's package, each a function here:

* ``emitToolResult`` (``dist/core/extensions/runner.js:913-969``): the handlers run in turn on
  one event object, ``currentEvent``, so each sees what the handlers before it changed. Of a
  handler's result, each of ``content``, ``details``, ``structuredContent``, ``isError`` and
  ``usage`` that is not ``undefined`` replaces the event's (a ``null``, Python's ``None``, too:
  ``!== undefined``, :923-945); a ``content`` without a ``structuredContent`` drops the
  event's ``structuredContent`` (:926-927). A falsy result is skipped (:921); anything else
  (a list, a string) has none of the keys. A handler that throws is reported
  (``emitError``, :947-955) and the next one runs. When no handler changed anything the
  result is ``undefined`` (:959-961), else the five values (:962-968):
  :func:`apply_handler_result`, :func:`hook_result`.
* ``_afterToolCall`` (``dist/core/agent-session.js:406-440``): the content is the hook's, else
  the tool's (``??``: a ``null`` hook content means the tool's), and goes through
  ``normalizeToolResultImages`` (``dist/utils/tool-result-images.js:13-15``), which calls
  ``content.some(block => block.type === "image")``: a content that is not an array throws
  ``content.some is not a function``, a ``null`` block ``Cannot read properties of null
  (reading 'type')``. ``isError`` is the hook's ``??`` the tool's.
* ``finalizeExecutedToolCall`` (pi-agent-core ``dist/agent-loop.js:598-630``): ``details`` and
  ``usage`` are the hook's ``??`` the tool's (a ``null`` keeps the tool's), ``terminate`` stays
  the tool's (``_afterToolCall`` returns none), ``structuredContent`` the hook's or none; a
  throw in ``_afterToolCall`` makes the result ``createErrorToolResult(message)`` (``details:
  {}``) with ``isError: true`` (:623-626). ``isError`` is kept as given (``"yes"`` stays a
  string in ``tool_execution_end`` and the ``toolResult`` message).

:func:`after_tool_call` is the last two. A Python handler on real Pi gets the event as the
bridge builds it from Pi's JSON (``targets/realpi/wire.py`` ``build_event``: ``content`` is
``list(content or [])``, ``is_error`` ``bool(isError)``): :func:`python_event`.

Not modelled: the image normalization itself (a handler's large image is resized on Pi, kept
here), and a NaN a handler returns (the simulator holds ``None``, see ``json_copy``).
"""

from __future__ import annotations

from typing import Any, Final

from pi_continuity_harness.api.events import ToolResultEvent
from pi_continuity_harness.simulator.agent_loop import error_tool_result

__all__ = ["RESULT_KEYS", "after_tool_call", "apply_handler_result", "hook_result", "python_event"]

#: The keys of a handler's result ``emitToolResult`` takes, in its order (runner.js:923-945).
RESULT_KEYS: Final = ("content", "details", "structuredContent", "isError", "usage")


def _nullish(value: Any, present: bool) -> bool:
    """JavaScript's ``value == null``: ``undefined`` (an absent key) or ``null`` (``None``)."""
    return not present or value is None


def _coalesce(first: dict[str, Any], second: dict[str, Any], key: str) -> tuple[bool, Any]:
    """``first[key] ?? second[key]``, as (defined, value): absent keys are ``undefined``."""
    if not _nullish(first.get(key), key in first):
        return True, first[key]
    return key in second, second.get(key)


def apply_handler_result(current: dict[str, Any], value: Any) -> bool:
    """One handler's result applied to ``current`` (the event's result keys; an absent key is
    ``undefined``), as runner.js:921-945 applies it; ``True`` when it changed something.
    ``value`` is the result as Pi has it (the bridge's reply: ``None`` is ``undefined``)."""
    if not isinstance(value, dict):
        return False  # falsy, or without the keys: a list's or a string's ``.content`` is undefined
    modified = False
    if "content" in value:
        current["content"] = value["content"]
        if "structuredContent" not in value:
            current.pop("structuredContent", None)
        modified = True
    for key in RESULT_KEYS[1:]:
        if key in value:
            current[key] = value[key]
            modified = True
    return modified


def hook_result(current: dict[str, Any]) -> dict[str, Any]:
    """runner.js:962-968: the five values of the event, ``undefined`` ones absent."""
    return {key: current[key] for key in RESULT_KEYS if key in current}


def python_event(
    tool_call_id: str,
    tool_name: str,
    args: dict[str, Any],
    current: dict[str, Any],
    *,
    parent: str | None = None,
) -> ToolResultEvent:
    """The event a Python handler gets on real Pi: ``build_event`` of the event's JSON
    (``targets/realpi/wire.py``): ``list(content or [])`` (a string its characters; a number
    raises ``TypeError`` there, which Pi reports as that handler's error), ``bool(isError)``."""
    return ToolResultEvent(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        input=args,
        content=list(current.get("content") or []),
        details=current.get("details"),
        is_error=bool(current.get("isError")),
        parent_tool_call_id=parent,
    )


def _content_error(content: Any) -> str | None:
    """What ``normalizeToolResultImages(content)`` throws (tool-result-images.js:13-15), if
    anything: ``content.some`` of a non-array, ``block.type`` of a ``null`` block."""
    if not isinstance(content, list):
        return "content.some is not a function"
    if any(block is None for block in content):
        return "Cannot read properties of null (reading 'type')"
    return None


def after_tool_call(
    result: dict[str, Any], is_error: Any, hook: dict[str, Any] | None
) -> tuple[dict[str, Any], Any]:
    """The tool's ``result`` and ``is_error`` after ``_afterToolCall`` (agent-session.js:406-440)
    and ``finalizeExecutedToolCall`` (agent-loop.js:598-630), given the handlers' ``hook``
    (:func:`hook_result`, ``None`` for ``undefined``). Keys keep Pi's order: the tool's result
    spread first, then ``usage`` and a new ``structuredContent`` appended."""
    if hook is None:
        return result, is_error
    defined, content = _coalesce(hook, result, "content")
    if not defined or content is None:
        content = []
    error = _content_error(content)
    if error is not None:
        return error_tool_result(error), True
    # ``{...result, content, details, usage, terminate}``: every result of Pi's tools has a
    # ``details`` key right after ``content`` (bash.js:333, the bridge's ``execute``,
    # ``createErrorToolResult``), if ``undefined``, so a hook's details stands there.
    out: dict[str, Any] = {"content": content}
    defined, details = _coalesce(hook, result, "details")
    if defined:
        out["details"] = details
    out.update((key, value) for key, value in result.items() if key not in ("content", "details"))
    defined, usage = _coalesce(hook, result, "usage")
    if defined:
        out["usage"] = usage
    # ``after.structuredContent ?? (after.content ? undefined : ...)``: the content is an array
    # here, so the hook's structured content or none (agent-loop.js:613-621).
    structured = hook.get("structuredContent")
    if structured is None:
        out.pop("structuredContent", None)
    else:
        out["structuredContent"] = structured
    return out, _coalesce(hook, {"isError": is_error}, "isError")[1]
