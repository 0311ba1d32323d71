"""A user's shell command (RPC ``bash``): the ``user_bash`` result rule and the record Pi keeps.

Pi 1.6.0's RPC ``bash`` (``dist/modes/rpc/rpc-mode.js:462-481``) asks the extensions first
(``emitUserBash``, ``dist/core/extensions/runner.js:986-1013``): a handler's ``{result}`` is
recorded as the command's outcome and is the response's data; otherwise Pi runs the command
(``executeBash``, ``dist/core/agent-session.js:3267-3288``) and records what it printed. The
record (``recordBashResult``, :3293-3313) is a ``bashExecution`` message, appended to the session
at once, or, while a run streams, held until the run ends (``_flushPendingBashMessages``,
:3335-3343, called from ``_startRun``, :1505, :1512, :1542).

The simulator's shell runs nothing: the scenario says what the command prints
(``scenario.operations.BashSpec``), as a scripted tool call's ``result`` does.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "INVALID_RESULT",
    "bash_message",
    "is_user_bash_event_result",
    "local_result",
]

#: ``emitUserBash``'s error for a handler result that is neither ``undefined`` nor one valid
#: ``{operations}`` or ``{result}`` (runner.js:995).
INVALID_RESULT = (
    "Invalid user_bash handler result: return undefined for local execution or exactly one valid "
    "{ operations } or { result } object"
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_user_bash_event_result(value: Any) -> bool:
    """``isUserBashEventResult`` (runner.js:51-75) on a handler's result as Pi has it after the
    bridge (JSON: a key present is defined, ``None`` is ``null``): exactly one of ``operations``
    and ``result``; ``operations.exec`` must be a function, which no JSON value is; ``result``
    needs a string ``output``, an ``exitCode`` key holding a number (``null`` is refused),
    boolean ``cancelled`` and ``truncated``, and ``fullOutputPath`` absent or a string."""
    if not isinstance(value, dict):
        return False
    if ("operations" in value) == ("result" in value):
        return False
    if "operations" in value:
        return False  # ``typeof operations.exec === "function"``: never true of JSON
    result = value["result"]
    if not isinstance(result, dict):
        return False
    return (
        isinstance(result.get("output"), str)
        and "exitCode" in result
        and _is_number(result["exitCode"])
        and isinstance(result.get("cancelled"), bool)
        and isinstance(result.get("truncated"), bool)
        and ("fullOutputPath" not in result or isinstance(result["fullOutputPath"], str))
    )


def local_result(output: str, exit_code: int) -> dict[str, Any]:
    """What ``executeBashWithOperations`` returns for a command that ran to its end without
    truncation (bash-executor.js:101-107): ``fullOutputPath`` ``undefined``, left out."""
    return {"output": output, "exitCode": exit_code, "cancelled": False, "truncated": False}


def bash_message(
    command: str, result: dict[str, Any], exclude_from_context: bool | None, timestamp: int
) -> dict[str, Any]:
    """``recordBashResult``'s message (agent-session.js:3293-3304), as JSON keeps it: a field
    that is ``undefined`` (``fullOutputPath`` not given, ``excludeFromContext`` when the RPC
    command had none) is left out; extra keys of a handler's result are not copied."""
    message: dict[str, Any] = {
        "role": "bashExecution",
        "command": command,
        "output": result["output"],
        "exitCode": result["exitCode"],
        "cancelled": result["cancelled"],
        "truncated": result["truncated"],
    }
    if "fullOutputPath" in result:
        message["fullOutputPath"] = result["fullOutputPath"]
    message["timestamp"] = timestamp
    if exclude_from_context is not None:
        message["excludeFromContext"] = exclude_from_context
    return message
