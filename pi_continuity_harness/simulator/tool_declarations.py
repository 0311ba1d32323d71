"""How Pi 1.6 declares the tools the model may call: on the transcript's system messages.

The executable tools (the four built-ins, then every tool an extension registered) are not
sent as such: before a run's first request the agent loop compares them with what the
transcript's system messages already declare and writes the difference onto a system
message as ``toolsAdded`` / ``toolsRemoved`` (``declareToolChanges``,
pi-agent-core ``dist/agent-loop.js:224-250``, called from ``runAgentLoop`` at :49). A pending
system message (the run's prompt sections) carries the changes; otherwise a new system message
goes before the first non-system pending message. pi-ai then sends the current tools as the
request's ``tools`` (``getCurrentTools``, see :func:`provider.current_tools`).

So a tool an extension registers reaches the model's request, and the session file, through
the run's system message: Pi's quirk that a session's declared tools are part of its
transcript (and of its token estimate, ``core/compaction/compaction.js:213-214``).

Each declaration is ``toToolDeclaration`` (pi-ai ``dist/utils/transcript.js:106-113``): name,
description and a JSON copy of the parameters. A redefined tool is a removal and an addition
(``getToolStateChanges``, :126-143).

The per-turn call (agent-loop.js:121) is made when an extension set the active tools or
registered a tool during the run (``pi.set_active_tools``, :mod:`.active_tools`; ``registerTool``
refreshes the registry at once, loader.js:246-249): the run's next turn declares the change.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable, Sequence
from typing import Any

from pi_continuity_harness.api.extension_api import ToolDefinition
from pi_continuity_harness.simulator.json_copy import json_copy
from pi_continuity_harness.simulator.messages import current_tools

__all__ = ["declare_tool_changes", "tool_declaration"]

Message = dict[str, Any]


def tool_declaration(tool: ToolDefinition) -> dict[str, Any]:
    """``toToolDeclaration`` of an extension's tool."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": json.loads(json.dumps(tool.parameters)),
    }


def _same(left: dict[str, Any], right: dict[str, Any]) -> bool:
    """``declarationsEqual``: the serialized declarations are equal.

    Equal ``marshal`` bytes are equal data of equal types, hence equal JSON: that answers the
    usual case (the same tools declared again, before every run) at a seventh of the cost of
    encoding both (issue 16); anything else is compared as JSON, as before. Format version 0:
    later versions mark strings interned or not and write an object met twice as a
    back-reference (by reference count), so equal declarations, one read back from the
    transcript and one made anew, gave different bytes every time and always fell through to
    JSON (2,968 of 2,968 comparisons of the PSC suite). (A memo of the transcript side's JSON,
    tried for exploration at the same time, is not needed once the bytes match.)"""
    try:
        if marshal.dumps(left, 0) == marshal.dumps(right, 0):
            return True
    except ValueError:  # not plain data
        pass
    return json.dumps(left) == json.dumps(right)


def _changes(previous: list[dict[str, Any]], current: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """``getToolStateChanges``: the current tools not declared alike before, and the declared
    ones not current alike.

    A name declared before and current is one pair of declarations, compared once: the
    additions compare each current tool with the one declared under its name, and the
    removals the one declared (``previous`` holds a name once, ``current_tools``) with the
    last current tool of that name, the same pair when that tool is the last of its name;
    ``_same`` is symmetric. Comparing it twice was half of the comparisons before every run
    (issue 16)."""
    before = {str(t.get("name")): t for t in previous}
    after = {str(t.get("name")): t for t in current}
    compared: dict[str, bool] = {}
    added: list[Any] = []
    for tool in current:
        name = str(tool.get("name"))
        declared = before.get(name)
        if declared is None:
            added.append(tool)
            continue
        same = _same(declared, tool)
        if after[name] is tool:
            compared[name] = same
        if not same:
            added.append(tool)
    removed: list[Any] = []
    for tool in previous:
        name = str(tool.get("name"))
        now = after.get(name)
        if now is None:
            removed.append({"name": tool.get("name")})
            continue
        same = compared[name] if name in compared and before[name] is tool else _same(tool, now)
        if not same:
            removed.append({"name": tool.get("name")})
    return added, removed


def _with_changes(message: Message, added: list[Any], removed: list[Any]) -> Message:
    """``withToolChanges``: the message's tool fields replaced; empty lists omit the field."""
    rest = {k: v for k, v in message.items() if k not in ("toolsAdded", "toolsRemoved")}
    return {
        **rest,
        **({"toolsAdded": added} if added else {}),
        **({"toolsRemoved": removed} if removed else {}),
    }


def declare_tool_changes(
    transcript: Sequence[Message],
    pending: list[Message],
    tools: list[dict[str, Any]],
    timestamp: int | Callable[[], int],
) -> list[Message]:
    """``declareToolChanges(context, pendingMessages)`` with ``context.messages`` =
    ``transcript`` and ``context.tools`` declared as ``tools``; ``timestamp`` is the new system
    message's ``Date.now()`` (a callable: read only when that message is made, as Pi reads the
    clock only then, agent-loop.js:246). The messages it returns hold copies of ``tools``' declarations,
    never the objects themselves."""
    system_index = next(
        (i for i in range(len(pending) - 1, -1, -1) if pending[i].get("role") == "system"), -1
    )
    carrier = pending[system_index] if system_index >= 0 else None
    baseline = (
        [_with_changes(m, [], []) if i == system_index else m for i, m in enumerate(pending)]
        if carrier is not None
        else pending
    )
    added, removed = _changes(current_tools([*transcript, *baseline]), tools)
    # A message gets its own copy of what it declares (``tools`` may be shared, e.g. the
    # built-ins): pi-ai makes each declaration anew, a JSON copy (``toToolDeclaration``).
    added = json_copy(added)
    unchanged = not added and not removed
    if carrier is not None:
        if unchanged and not carrier.get("toolsAdded") and not carrier.get("toolsRemoved"):
            return pending
        return [
            _with_changes(carrier, added, removed) if i == system_index else m for i, m in enumerate(baseline)
        ]
    if unchanged:
        return pending
    now = timestamp() if callable(timestamp) else timestamp
    update = _with_changes({"role": "system", "content": "", "timestamp": now}, added, removed)
    index = next((i for i, m in enumerate(pending) if m.get("role") != "system"), len(pending))
    return [*pending[:index], update, *pending[index:]]
