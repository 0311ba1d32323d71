"""``pi.set_thinking_level`` and ``ctx.thinking_level`` on the simulator, one test per rule of Pi 1.6
(``AgentSession.setThinkingLevel``, agent-session.js:2219-2238, reached through loader.js:369-372;
``ctx.thinkingLevel``, runner.js:663-666). The differential twin is
``tests/realpi/test_differential_set_thinking_level.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, entries, event_records, run, session_records

THINKING_MODELS = [
    {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000},
    {"id": "fake/fake-think", "context_window": 20000, "max_tokens": 1000, "reasoning": True},
]


def _setter(seen: list[Any], *, listen: bool = True) -> Any:
    """``/think <level>``: the level before, the call, an ``after`` entry, both getters after;
    a ``thinking_level_select`` handler that records the event and appends a ``select`` entry."""

    def extension(pi: ExtensionAPI) -> None:
        async def think(args: str, ctx: Any) -> None:
            before = ctx.thinking_level
            pi.set_thinking_level(args)
            pi.append_entry("after", {"asked": args})
            seen.append(("think", args, before, pi.get_thinking_level(), ctx.thinking_level))

        def select(event: Any, ctx: Any) -> None:
            seen.append(("select", event.level, event.previous_level))
            pi.append_entry("select", {"level": event.level})

        pi.register_command("think", think)
        if listen:
            pi.on("thinking_level_select", select)

    return extension


def _play(
    tmp_path: Path, seen: list[Any], levels: list[str], *, think: bool = True, listen: bool = True
) -> Any:
    operations: list[Any] = [{"set_model": "fake/fake-think"}] if think else []
    operations += [{"command": f"/think {level}"} for level in levels]
    return run(tmp_path, base(models=THINKING_MODELS, operations=operations), _setter(seen, listen=listen))


def _level_rows(result: Any) -> list[Any]:
    rows: list[Any] = []
    for entry in entries(result):
        if entry["type"] == "thinking_level_change":
            rows.append(("level", entry["thinkingLevel"]))
        elif entry["type"] == "custom":
            rows.append((entry["customType"], entry["data"]))
    return rows


def test_set_thinking_level_clamps_to_the_current_models_levels(tmp_path: Path) -> None:
    """pi-ai ``clampThinkingLevel`` (models.js:714-732): ``xhigh`` without a ``thinkingLevelMap``
    entry falls to ``high``; an unknown name is the model's first level, ``off``."""
    seen: list[Any] = []
    _play(tmp_path, seen, ["xhigh", "bogus"])
    assert [row[3] for row in seen if row[0] == "think"] == ["high", "off"]


def test_set_thinking_level_on_a_model_without_reasoning_stays_off(tmp_path: Path) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, ["high"], think=False)
    assert seen == [("think", "high", "off", "off", "off")]
    assert session_records(result, "thinking_level_changed") == []


def test_only_a_change_of_the_clamped_level_appends_an_entry_and_emits_thinking_level_changed(
    tmp_path: Path,
) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, ["high", "high", "xhigh", "low"])
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high", "low"]
    assert [row for row in _level_rows(result) if row[0] == "level"] == [
        ("level", "off"),
        ("level", "high"),
        ("level", "low"),
    ]


def test_ctx_thinking_level_is_read_anew_at_each_access(tmp_path: Path) -> None:
    seen: list[Any] = []
    _play(tmp_path, seen, ["medium"])
    assert seen[0] == ("think", "medium", "off", "medium", "medium")


def test_an_extensions_set_thinking_level_runs_thinking_level_select_once_the_caller_yields(
    tmp_path: Path,
) -> None:
    """On real Pi the call is a bridge round trip and the handler's event waits in the Python
    process until the caller yields: the caller's next entry comes before the handler's."""
    seen: list[Any] = []
    result = _play(tmp_path, seen, ["high"])
    assert seen == [("think", "high", "off", "high", "high"), ("select", "high", "off")]
    assert _level_rows(result)[-3:] == [
        ("level", "high"),
        ("after", {"asked": "high"}),
        ("select", {"level": "high"}),
    ]


def test_set_thinking_level_with_no_listener_dispatches_no_thinking_level_select(tmp_path: Path) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, ["high"], listen=False)
    assert event_records(result, "thinking_level_select") == []
    assert [r["level"] for r in session_records(result, "thinking_level_changed")] == ["high"]
