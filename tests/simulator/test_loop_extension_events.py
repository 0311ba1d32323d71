"""Extension events Pi raises from inside a run that a Python extension sees through the bridge,
dispatched by the simulator at the same point with the same fields (``AgentSession``); the
differential twins on real Pi are ``tests/realpi/test_differential_<event>.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, event_records, run, session_records

BASH = {"name": "bash", "arguments": {"command": "echo hi"}, "result": "hi\n", "id": "c1"}
TOOL_EVENTS = ("tool_execution_start", "tool_execution_update", "tool_result", "tool_execution_end")


def test_a_running_tools_partial_results_reach_extensions_between_its_start_and_its_result(
    tmp_path: Path,
) -> None:
    """agent-session.js:1026-1034: every ``tool_execution_update`` goes to the extensions with
    the call's id, name, arguments and partial result, after ``tool_execution_start`` and before
    ``tool_result`` (pi-agent-core awaits the updates first, agent-loop.js:568-581); a copy per
    handler call, its return value ignored, a raising handler an ``extension_error``."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def record(event: Any, ctx: Any) -> Any:
            if event.type == "tool_execution_update":
                seen.append(
                    (event.type, event.tool_call_id, event.tool_name, event.args, dict(event.partial_result))
                )
                event.partial_result["content"] = ["changed in place"]
                return {"content": []}
            seen.append((event.type,))
            return None

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError(f"failed at {len(event.partial_result['content'])}")

        for name in TOOL_EVENTS:
            pi.on(name, record)
        pi.on("tool_execution_update", fail)

    result = run(
        tmp_path,
        base(
            model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
            operations=[{"prompt": "hello"}],
        ),
        extension,
    )
    update = ("tool_execution_update", "c1", "bash", {"command": "echo hi"})
    assert seen == [
        ("tool_execution_start",),
        (*update, {"content": []}),
        (*update, {"content": [{"type": "text", "text": "hi\n"}], "details": {}}),
        ("tool_result",),
        ("tool_execution_end",),
    ]
    errors = [(r["event"], r["error"]) for r in session_records(result, "extension_error")]
    assert errors == [("tool_execution_update", "failed at 0"), ("tool_execution_update", "failed at 1")]
    assert len(event_records(result, "tool_execution_update")) == 2


def test_a_tool_update_no_extension_listens_to_is_not_dispatched(tmp_path: Path) -> None:
    """With no handler, Pi's ``emit`` runs nothing; the simulator does no dispatch work for it
    (no trace record)."""
    result = run(
        tmp_path,
        base(
            model={"agent": [{"text": "t", "tool_calls": [BASH]}, {"text": "DONE"}]},
            operations=[{"prompt": "hello"}],
        ),
    )
    assert event_records(result, "tool_execution_update") == []
    assert len(session_records(result, "tool_execution_end")) == 1


THINKING_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
    {"id": "fake/fake-think", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
]


def test_a_changed_thinking_level_reaches_extensions_before_the_switchs_model_select(tmp_path: Path) -> None:
    """agent-session.js:2219-2238: a change of the clamped level hands the extensions
    ``thinking_level_select`` (level, previous level), unawaited but called at once, so before the
    same ``setModel``'s ``model_select`` (:2134-2136); none when the level stays; a raising handler
    is an ``extension_error``, a return value changes nothing."""
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        def level(event: Any, ctx: Any) -> Any:
            seen.append((event.type, event.level, event.previous_level, pi.get_thinking_level()))
            return {"level": "minimal"}

        def fail(event: Any, ctx: Any) -> None:
            raise RuntimeError(f"failed at {event.level}")

        pi.on("thinking_level_select", level)
        pi.on("thinking_level_select", fail)
        pi.on("model_select", lambda event, ctx: seen.append(("model_select", event.model.id)))

    scenario = base(
        models=THINKING_MODELS,
        settings={"project": {"defaultThinkingLevel": "high"}},
        operations=[
            {"set_model": "fake/fake-think"},
            {"set_model": "fake/fake-think"},
            {"set_model": "fake/fake-model"},
        ],
    )
    result = run(tmp_path, scenario, extension)
    assert seen == [
        ("thinking_level_select", "high", "off", "high"),
        ("model_select", "fake-think"),
        ("thinking_level_select", "off", "high", "off"),
        ("model_select", "fake-model"),
    ]
    errors = [(r["event"], r["error"]) for r in session_records(result, "extension_error")]
    assert errors == [("thinking_level_select", "failed at high"), ("thinking_level_select", "failed at off")]
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high", "off"]


def test_a_thinking_level_change_no_extension_listens_to_is_not_dispatched(tmp_path: Path) -> None:
    scenario = base(
        models=THINKING_MODELS,
        settings={"project": {"defaultThinkingLevel": "high"}},
        operations=[{"set_model": "fake/fake-think"}],
    )
    result = run(tmp_path, scenario)
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high"]
    assert event_records(result, "thinking_level_select") == []
