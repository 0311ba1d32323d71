"""Spec §15 "Minimum unit coverage", end to end: the reference extension on the simulated host.

One or more tests per bullet, named after it. Each runs a scenario on the simulated Pi 1.6
host and checks only what is observable: the trace, notifications, the session file and
the artifact files.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, ExtensionContext
from pi_continuity_harness.reference.psc.constants import (
    CONTINUATION_SUFFIX,
    EVENT_FRESHNESS_RULE,
    MANDATORY_HEADINGS,
)
from pi_continuity_harness.reference.psc.frontmatter import FRONTMATTER_KEYS, parse_brief, serialize_brief
from pi_continuity_harness.reference.psc.handoff import continuation_text, resume_source_problems
from pi_continuity_harness.scenario.transcript import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX
from pi_continuity_harness.simulator.simulation import Simulation
from pi_continuity_harness.simulator.virtual_root import VIRTUAL_ROOT

from .builders import make_body
from .sim import (
    CONFIG,
    THRESHOLD,
    Run,
    extra_extension,
    filler,
    scenario,
    simulate_run,
    threshold_turns,
    turn,
    work_turns,
)

PREFIX = "Pi Session Continuity"


def _threshold_run(tmp_path: Path, **overrides: Any) -> Run:
    replies, ops = threshold_turns()
    return simulate_run(tmp_path, scenario(agent=replies, operations=ops, **overrides))


def _cancelled(run: Run) -> bool:
    ends = run.compaction_ends()
    return bool(ends) and all(e.get("aborted") for e in ends)


def _failed_notifications(run: Run) -> list[str]:
    return [
        m
        for m in run.notifications
        if m.startswith(f"{PREFIX} failed: ") and "Native compaction was cancelled." in m
    ]


# ============================================================================ config
@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"enabled": True, "triggerPercent": 75}, "triggerPercent"),
        ({"keepRecentPercent": 15}, "keepRecentPercent"),
        ({"synthesisEffort": "extreme"}, "synthesisEffort"),
        ({"reserveTokens": 93000}, "reserveTokens"),
    ],
)
def test_extension_config_validation_after_removal_of_automatic_percentage_fields(
    tmp_path: Path, config: dict[str, Any], field: str
) -> None:
    run = _threshold_run(tmp_path, files={f"{CONFIG}/session-continuity.json": {"json": config}})
    config_path = str(run.project / CONFIG / "session-continuity.json")
    refusals = [m for m in run.notifications if config_path in m and m.startswith(f"{PREFIX} refused: ")]
    assert refusals, run.notifications
    assert field in refusals[0]
    # Automatic behaviour is disabled: the threshold compaction fails closed.
    assert _cancelled(run)
    assert run.compactions() == []
    assert run.requests("extension") == [] and run.requests("summary") == []
    assert not run.artifact_dir.exists()
    assert run.statuses["continuity"] == "Continuity invalid-config"


def test_a_valid_config_is_used_for_synthesis_and_artifacts(tmp_path: Path) -> None:
    run = _threshold_run(
        tmp_path,
        models=[
            {"id": "fake/fake-model", "context_window": 200_000},
            {"id": "fake/cheap", "context_window": 100_000, "max_tokens": 32_000, "reasoning": True},
        ],
        files={
            f"{CONFIG}/session-continuity.json": {
                "json": {
                    "synthesisModel": "fake/cheap",
                    "synthesisEffort": "low",
                    "artifactDirectory": "briefs",
                }
            }
        },
    )
    (request,) = run.requests("extension")
    assert request.model == "fake/cheap" and request.reasoning == "low"
    archived = list((run.project / CONFIG / "briefs" / run.session_id / "archive").iterdir())
    assert len(archived) == 1
    frontmatter = parse_brief(archived[0].read_text(encoding="utf-8")).frontmatter
    assert (frontmatter.synthesis_model, frontmatter.synthesis_effort) == ("fake/cheap", "low")
    assert frontmatter.model_id == "fake/fake-model"


# ============================================================================ settings setup
SETUP_ANSWERS: list[dict[str, Any]] = [
    {"select": "/compaction/", "when": "compaction"},
    {"input": "75", "when": "trigger"},
    {"input": "15", "when": "keep"},
    {"confirm": True, "when": "."},
]


def _settings_run(
    tmp_path: Path, answers: list[dict[str, Any]], *, window: int = 372_000, **overrides: Any
) -> Run:
    data = scenario(
        models=[{"id": "fake/fake-model", "context_window": window}],
        operations=[{"command": {"text": "/continuity settings", "answers": answers}}],
        **overrides,
    )
    return simulate_run(tmp_path, data)


def test_setup_conversion_from_approximate_percentages_to_fixed_reserve_and_keep_tokens(
    tmp_path: Path,
) -> None:
    run = _settings_run(tmp_path, SETUP_ANSWERS)
    confirm = next(d for d in run.dialogs if d["method"] == "confirm")
    assert "reserveTokens = contextWindow - round(contextWindow × triggerPercent / 100)" in confirm["message"]
    assert "= 372000 - 279000 = 93000" in confirm["message"]
    assert "= round(372000 × 15 / 100) = 55800" in confirm["message"]
    settings = json.loads((run.project / CONFIG / "settings.json").read_text(encoding="utf-8"))
    assert settings["compaction"] == {"enabled": True, "reserveTokens": 93000, "keepRecentTokens": 55800}
    # The preview came before anything was written.
    confirm_seq = next(r["seq"] for r in run.named("ui", "confirm"))
    writes = [
        r["seq"]
        for r in run.fs()
        if str(r.get("to", "")).endswith("settings.json") and r["name"] == "replace"
    ]
    assert writes and min(writes) > confirm_seq


@pytest.mark.parametrize(
    ("window", "trigger", "keep", "reserve", "keep_tokens"),
    [
        (200_000, "33.3", "2.5", 133_400, 5_000),
        (128_000, "80%", "10", 25_600, 12_800),
        (1_000, "50.05", "0.05", 499, 1),
    ],
)
def test_setup_conversion_rounds_like_javascript_math_round(
    tmp_path: Path, window: int, trigger: str, keep: str, reserve: int, keep_tokens: int
) -> None:
    answers: list[dict[str, Any]] = [
        {"select": "/compaction/", "when": "compaction"},
        {"input": trigger, "when": "trigger"},
        {"input": keep, "when": "keep"},
        {"confirm": True, "when": "."},
    ]
    run = _settings_run(tmp_path, answers, window=window)
    settings = json.loads((run.project / CONFIG / "settings.json").read_text(encoding="utf-8"))
    assert settings["compaction"]["reserveTokens"] == reserve
    assert settings["compaction"]["keepRecentTokens"] == keep_tokens


def test_setup_rejects_percentages_that_cannot_give_valid_tokens(tmp_path: Path) -> None:
    answers = [
        {"select": "/compaction/", "when": "compaction"},
        {"input": "15", "when": "trigger"},
        {"input": "75", "when": "keep"},
    ]
    run = _settings_run(tmp_path, answers)
    before = json.dumps(scenario()["settings"]["project"], indent=2, ensure_ascii=False) + "\n"
    assert (run.project / CONFIG / "settings.json").read_text(encoding="utf-8") == before
    assert run.notified("must be lower than the trigger percent")
    assert not [d for d in run.dialogs if d["method"] == "confirm"]


# ============================================================================ settings merge
UNRELATED = {
    "theme": "dark",
    "packages": ["npm:example"],
    "compaction": {
        "enabled": True,
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
        "modelOverrides": {"other/model": {"reserveTokens": 1000}},
    },
    "retry": {"enabled": False},
}


def test_atomic_project_settings_merge_preserves_unrelated_pi_settings(tmp_path: Path) -> None:
    run = _settings_run(tmp_path, SETUP_ANSWERS, settings={"project": UNRELATED})
    path = run.project / CONFIG / "settings.json"
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["theme"] == "dark" and written["packages"] == ["npm:example"]
    assert written["retry"] == {"enabled": False}
    assert written["compaction"]["modelOverrides"] == {"other/model": {"reserveTokens": 1000}}
    assert {k: written["compaction"][k] for k in ("enabled", "reserveTokens", "keepRecentTokens")} == {
        "enabled": True,
        "reserveTokens": 93000,
        "keepRecentTokens": 55800,
    }
    assert "percent" not in path.read_text(encoding="utf-8").lower()
    # Atomic: a temp file in the same directory renamed onto the target, none left behind.
    replaces = [r for r in run.fs("replace") if str(r["to"]).endswith(f"{CONFIG}/settings.json")]
    assert len(replaces) == 1 and str(replaces[0]["from"]).endswith(".tmp")
    assert sorted(p.name for p in (run.project / CONFIG).iterdir()) == ["settings.json"]
    assert run.notified(f"{PREFIX}: settings saved to {path}; restart Pi to activate them.")


@pytest.mark.parametrize(
    "decision",
    [{"confirm": False, "when": "."}, {"cancel": True, "when": "."}],
    ids=["declined", "dismissed"],
)
def test_declined_setup_writes_nothing(tmp_path: Path, decision: dict[str, Any]) -> None:
    run = _settings_run(tmp_path, [*SETUP_ANSWERS[:3], decision], settings={"project": UNRELATED})
    path = run.project / CONFIG / "settings.json"
    assert path.read_text(encoding="utf-8") == json.dumps(UNRELATED, indent=2, ensure_ascii=False) + "\n"
    assert not [r for r in run.fs() if r["name"] in ("write", "replace")]
    assert not run.notified("settings saved")


def test_an_unreadable_project_settings_file_is_never_overwritten(tmp_path: Path) -> None:
    data = scenario(
        models=[{"id": "fake/fake-model", "context_window": 372_000}],
        operations=[
            {"edit_file": {"path": f"{CONFIG}/settings.json", "text": '{"theme": "dark",'}},
            {"command": {"text": "/continuity settings", "answers": SETUP_ANSWERS}},
        ],
    )
    run = simulate_run(tmp_path, data)
    assert (run.project / CONFIG / "settings.json").read_text(encoding="utf-8") == '{"theme": "dark",'
    assert run.notified(f"{PREFIX} failed: cannot update")


# ============================================================================ native settings vs windows
MODELS = [
    {"id": "fake/fake-model", "context_window": 200_000},
    {"id": "fake/huge", "context_window": 1_000_000},
    {"id": "fake/small", "context_window": 40_000},
]


def test_native_settings_validation_against_active_model_windows_including_larger_and_smaller_model_changes(
    tmp_path: Path,
) -> None:
    replies, ops = work_turns(3)
    data = scenario(
        models=MODELS,
        agent=replies,
        operations=[
            {"set_model": "fake/huge"},
            {"command": "/continuity status"},
            {"set_model": "fake/small"},
            *ops,
            "compact",
        ],
    )
    seen: list[str] = []
    run = simulate_run(
        tmp_path, data, setup=lambda sim: seen.append(dict(sim.host.ui.statuses)["continuity"])
    )
    assert seen == ["Continuity @ ~75.0%"]
    footers = [r["statusText"] for r in run.named("ui", "set_status")]
    assert footers[:2] == ["Continuity @ ~75.0%", "Continuity @ ~95.0%"]
    status = next(m for m in run.notifications if m.startswith(f"{PREFIX}\nStatus:"))
    assert "Model window: 1,000,000" in status and "Reserve: 50,000" in status
    assert "Effective trigger: 950,000 (approximately 95.0%)" in status
    # The smaller window makes the fixed tokens structurally invalid: refused, never rewritten.
    refusal = next(m for m in run.notifications if "refused: native compaction settings are invalid" in m)
    for value in ("enabled: true", "reserveTokens: 50000", "keepRecentTokens: 2000", "contextWindow: 40000"):
        assert value in refusal
    assert str(run.project / CONFIG / "settings.json") in refusal
    assert footers[-1] == "Continuity refused"
    settings_file = run.project / CONFIG / "settings.json"
    assert json.loads(settings_file.read_text(encoding="utf-8"))["compaction"]["reserveTokens"] == 50_000
    assert not [r for r in run.fs() if r["name"] in ("write", "replace")]
    # Operation is refused: the manual compaction is cancelled without a synthesis request.
    assert _cancelled(run) and run.compactions() == []
    assert run.requests("extension") == []
    assert _failed_notifications(run)


@pytest.mark.parametrize(
    ("compaction", "problem", "hooked"),
    [
        ({"enabled": False}, "native auto-compaction is disabled", True),
        ({"reserveTokens": 200_000}, "reserveTokens (200000) must be lower than the context window", True),
        # Keeping 150,000 recent tokens keeps this short session whole: Pi finds nothing to
        # cut, prepares no compaction and never calls the hook.
        (
            {"keepRecentTokens": 150_000},
            "keepRecentTokens (150000) must be lower than contextWindow - reserveTokens",
            False,
        ),
        ({"reserveTokens": 0}, "reserveTokens (0) must be positive", True),
    ],
)
def test_native_settings_invalid_at_startup_refuse_and_cancel(
    tmp_path: Path, compaction: dict[str, Any], problem: str, hooked: bool
) -> None:
    settings = {
        "compaction": {"enabled": True, "reserveTokens": 50_000, "keepRecentTokens": 2_000, **compaction}
    }
    replies, ops = work_turns(3)
    run = simulate_run(
        tmp_path, scenario(agent=replies, operations=[*ops, "compact"], settings={"project": settings})
    )
    refusal = next(
        m for m in run.notifications if m.startswith(f"{PREFIX} refused: native compaction settings")
    )
    assert problem in refusal
    assert "Run /continuity settings and restart Pi." in refusal
    assert run.statuses["continuity"] == "Continuity refused"
    assert run.compactions() == []
    assert run.requests("summary") == [] and run.requests("extension") == []
    assert bool(run.named("event", "session_before_compact")) is hooked
    if hooked:
        assert _cancelled(run) and _failed_notifications(run)


# ============================================================================ paths and sessions
def test_artifact_path_generation_and_session_isolation(tmp_path: Path) -> None:
    first_replies, first_ops = work_turns(2)
    second_replies, second_ops = work_turns(2, start=3)
    data = scenario(
        agent=[*first_replies, *second_replies],
        operations=[
            *first_ops,
            {"command": "/continuity checkpoint"},
            {"new_session": {}},
            *second_ops,
            {"command": "/continuity checkpoint"},
        ],
    )
    run = simulate_run(tmp_path, data)
    sessions = sorted(p.name for p in run.artifact_dir.iterdir())
    assert len(sessions) == 2 and run.session_id in sessions
    saved = [m for m in run.notifications if "Continuity Brief saved to" in m]
    assert len(saved) == 2
    for message, session in zip(
        saved, [s for s in sessions if s != run.session_id] + [run.session_id], strict=True
    ):
        path = Path(message.removeprefix(f"{PREFIX}: Continuity Brief saved to ").removesuffix("."))
        assert path.parent == run.artifact_dir / session / "pending"
        brief = parse_brief(path.read_text(encoding="utf-8"))
        assert path.name == f"{brief.frontmatter.event_id}.md"
        assert brief.frontmatter.session_id == session
    # The new session does not treat the first session's pending Brief as its own.
    assert not run.notified("stale pending")


def test_an_absolute_artifact_directory_is_used_as_given(tmp_path: Path) -> None:
    # An absolute path as the host names it (its virtual root), outside the project.
    outside = Path(VIRTUAL_ROOT) / "elsewhere"
    replies, ops = work_turns(2)
    data = scenario(
        agent=replies,
        operations=[*ops, {"command": "/continuity checkpoint"}],
        files={f"{CONFIG}/session-continuity.json": {"json": {"artifactDirectory": str(outside)}}},
    )
    run = simulate_run(tmp_path, data)
    outside = run.result.machine_dir / "elsewhere"
    pending = list((outside / run.session_id / "pending").iterdir())
    assert len(pending) == 1
    assert not run.artifact_dir.exists()


# ============================================================================ frontmatter
def test_schema_v2_frontmatter_parse_serialize_and_required_fields(tmp_path: Path) -> None:
    replies, ops = work_turns(2)
    run = simulate_run(
        tmp_path, scenario(agent=replies, operations=[*ops, {"command": "/continuity checkpoint"}])
    )
    ((name, text),) = run.artifacts("pending").items()
    header = text.split("\n---\n", 1)[0].removeprefix("---\n")
    keys = [line.split(":", 1)[0] for line in header.splitlines()]
    assert tuple(keys) == FRONTMATTER_KEYS
    parsed = parse_brief(text)
    assert serialize_brief(parsed.frontmatter, parsed.body) == text
    fm = parsed.frontmatter
    assert name == f"{fm.event_id}.md"
    assert (fm.kind, fm.version, fm.status, fm.handoff_reason) == (
        "pi-session-continuity/v2",
        2,
        "pending",
        "checkpoint",
    )
    assert (fm.product, fm.artifact, fm.operation) == (
        "Pi Session Continuity",
        "Continuity Brief",
        "Continuity Handoff",
    )
    assert fm.session_id == run.session_id
    assert fm.session_file is not None and fm.session_file.endswith(f"_{run.session_id}.jsonl")
    assert (fm.context_window, fm.reserve_tokens, fm.keep_recent_tokens) == (200_000, 50_000, 2_000)
    assert (fm.effective_trigger_percent, fm.effective_keep_recent_percent) == (75.0, 1.0)
    assert fm.model_id == fm.synthesis_model == "fake/fake-model"
    assert fm.token_count_at_trigger == 10_000
    assert fm.created_at == fm.updated_at and fm.created_at.startswith("2026-01-01T")
    assert fm.branch_leaf_before in {e["id"] for e in run.entries}
    assert resume_source_problems(text, session_id=run.session_id) == []


# ============================================================================ body validation
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            {"kind": "missing_heading", "heading": "## Next Actions"},
            "missing or out-of-order heading: ## Next Actions",
        ),
        ({"kind": "unquoted_directive"}, "directive-looking content as an unquoted instruction"),
    ],
    ids=["missing-heading", "unquoted-directive"],
)
def test_mandatory_heading_and_directive_authority_validation(
    tmp_path: Path, reply: dict[str, Any], expected: str
) -> None:
    run = _threshold_run(tmp_path, model={"agent": threshold_turns()[0], "extension": [reply]})
    assert _cancelled(run) and run.compactions() == []
    (failure,) = _failed_notifications(run)
    assert failure.startswith(f"{PREFIX} failed: validation: ") and expected in failure
    assert run.artifacts("pending") == {} and run.artifacts("archive") == {}
    ((_name, postmortem),) = run.artifacts("failed").items()
    parsed = parse_brief(postmortem)
    assert parsed.frontmatter.status == "failed"
    assert resume_source_problems(postmortem, session_id=run.session_id)
    present = [h for h in MANDATORY_HEADINGS if h in parsed.body.splitlines()]
    assert len(present) >= len(MANDATORY_HEADINGS) - 1  # the partial Brief's headings are kept
    assert "# Continuity Brief Failure" in parsed.body and "- Phase: validation" in parsed.body
    assert "Native compaction was cancelled." in parsed.body


# ============================================================================ freshness rule
def test_deterministic_idempotent_event_freshness_recovery_rule_insertion(tmp_path: Path) -> None:
    run = _threshold_run(tmp_path)
    summary = run.compactions()[0]["summary"]
    assert summary.count(EVENT_FRESHNESS_RULE) == 1
    recovery = summary.split("## Recovery Instructions\n", 1)[1]
    assert recovery.startswith("\n" + EVENT_FRESHNESS_RULE + "\n\n")
    (request,) = run.requests("extension")
    assert EVENT_FRESHNESS_RULE in (request.system_prompt or "")


def test_a_body_that_already_carries_the_freshness_rule_is_not_changed(tmp_path: Path) -> None:
    body = make_body({"## Recovery Instructions": EVENT_FRESHNESS_RULE + "\n\nThen continue."})
    replies, ops = threshold_turns()
    run = simulate_run(
        tmp_path, scenario(agent=replies, extension=[{"kind": "raw", "text": body}], operations=ops)
    )
    summary = run.compactions()[0]["summary"]
    assert summary.count(EVENT_FRESHNESS_RULE) == 1
    assert parse_brief(summary).body == body


def test_the_same_scenario_gives_byte_identical_briefs(tmp_path: Path) -> None:
    first = _threshold_run(tmp_path / "a")
    second = _threshold_run(tmp_path / "b")
    a = {k.replace(str(tmp_path / "a"), ""): v for k, v in first.result.output_files().items()}
    b = {k.replace(str(tmp_path / "b"), ""): v for k, v in second.result.output_files().items()}
    archived_a = [v for k, v in a.items() if "/archive/" in k]
    archived_b = [v for k, v in b.items() if "/archive/" in k]
    assert len(archived_a) == 1
    assert archived_a[0].replace(str(tmp_path / "a").encode(), b"") == archived_b[0].replace(
        str(tmp_path / "b").encode(), b""
    )


# ============================================================================ stale and legacy
def _planted(
    session_id: str, event_id: str, line: str, *, kind: str, version: int, status: str = "pending"
) -> str:
    return (
        "---\n"
        f'kind: "{kind}"\nproduct: "Pi Session Continuity"\nartifact: "Continuity Brief"\n'
        f'operation: "Continuity Handoff"\nstatus: "{status}"\nversion: {version}\neventId: "{event_id}"\n'
        f'sessionId: "{session_id}"\nsessionFile: null\n'
        'createdAt: "2025-01-01T00:00:00.000Z"\nupdatedAt: "2025-01-01T00:00:00.000Z"\n'
        'modelId: "fake/fake-model"\nsynthesisModel: "fake/fake-model"\nsynthesisEffort: "medium"\n'
        "tokenCountAtTrigger: 1\ncontextWindow: 200000\nreserveTokens: 50000\nkeepRecentTokens: 2000\n"
        'effectiveTriggerPercent: 75\neffectiveKeepRecentPercent: 1\nhandoffReason: "threshold"\n'
        "---\n" + make_body({"## Task": line, "## Next Actions": line})
    )


def test_stale_and_legacy_artifacts_are_inert(tmp_path: Path) -> None:
    planted: dict[Path, str] = {}

    def plant(sim: Simulation) -> None:
        session_id = sim.host.runtime.session_manager.get_session_id()  # type: ignore[union-attr]
        root = Path(sim.host.paths.project_dir) / CONFIG / "session-continuity"
        foreign = "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000"
        files = {
            root / foreign / "pending" / "f1.md": _planted(
                foreign, "f1", "FOREIGN-RESUME-TEXT", kind="pi-session-continuity/v2", version=2
            ),
            root / session_id / "pending" / "l1.md": _planted(
                session_id, "l1", "LEGACY-RESUME-TEXT", kind="pi-session-continuity/v1", version=1
            ),
            root / session_id / "pending" / "x1.md": _planted(
                session_id,
                "x1",
                "FAILED-RESUME-TEXT",
                kind="pi-session-continuity/v2",
                version=2,
                status="failed",
            ),
            root / session_id / "pending" / "a1.md": _planted(
                session_id,
                "a1",
                "ARCHIVED-RESUME-TEXT",
                kind="pi-session-continuity/v2",
                version=2,
                status="archived",
            ),
            root / session_id / "failed" / "2025-01-01T00-00-00-000Z-x2.md": _planted(
                session_id,
                "x2",
                "POSTMORTEM-RESUME-TEXT",
                kind="pi-session-continuity/v2",
                version=2,
                status="failed",
            ),
        }
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        planted.update(files)

    replies, ops = threshold_turns()
    run = simulate_run(tmp_path, scenario(agent=replies, operations=["reload", *ops]), setup=plant)
    assert not run.notified("stale pending")  # none of them is a valid same-session pending Brief
    (entry,) = run.compactions()
    assert resume_source_problems(entry["summary"], session_id=run.session_id) == []
    assert entry["summary"] not in planted.values()
    for request in run.result.host.service.requests:
        text = json.dumps(request.to_json())
        for marker in ("FOREIGN", "LEGACY", "FAILED", "ARCHIVED", "POSTMORTEM"):
            assert f"{marker}-RESUME-TEXT" not in text
    assert all(path.read_text(encoding="utf-8") == text for path, text in planted.items())
    assert not any(f"{m}-RESUME-TEXT" in u for u in run.user_texts() for m in ("FOREIGN", "LEGACY", "FAILED"))


def test_a_same_session_pending_brief_is_reported_stale_after_reload_and_never_injected(
    tmp_path: Path,
) -> None:
    replies, ops = work_turns(2)
    short = {"text": "a short answer", "context_tokens": 10_000}
    data = scenario(
        agent=[*replies, short],
        operations=[
            *ops,
            {"command": "/continuity checkpoint"},
            "reload",
            {"command": "/continuity status"},
            {"prompt": "a short question"},
        ],
    )
    run = simulate_run(tmp_path, data)
    ((name, text),) = run.artifacts("pending").items()
    assert run.notified(f"{PREFIX}: stale pending Continuity Brief found for this session; leaving it inert.")
    status = next(m for m in run.notifications if m.startswith(f"{PREFIX}\nStatus:"))
    assert f"Stale pending Brief (inert): {run.session_dir / 'pending' / name}" in status
    assert run.compactions() == []
    last_request = run.requests("agent")[-1]
    assert name.removesuffix(".md") not in json.dumps(last_request.to_json())
    assert run.sent_user_messages() == []
    assert run.artifacts("pending") == {name: text}  # untouched


def test_a_crash_after_the_brief_was_saved_leaves_it_pending_and_inert_on_restart(tmp_path: Path) -> None:
    replies, ops = threshold_turns()
    data = scenario(
        agent=replies,
        operations=[*ops, "restart"],
        faults={
            "crash": [
                {
                    "after": {
                        "kind": "ui",
                        "name": "notify",
                        "glob": {"message": "*Continuity Brief saved to*"},
                    }
                }
            ]
        },
    )
    run = simulate_run(tmp_path, data)
    assert len(run.artifacts("pending")) == 1
    assert run.notified("stale pending Continuity Brief found for this session")
    assert run.compactions() == [] and run.sent_user_messages() == []


def test_a_committed_pending_brief_is_reconciled_at_startup_without_a_second_compaction(
    tmp_path: Path,
) -> None:
    replies, ops = threshold_turns()
    data = scenario(
        agent=replies,
        operations=[*ops, "restart"],
        faults={"crash": [{"after": {"kind": "event", "name": "session_compact"}}]},
    )
    run = simulate_run(tmp_path, data)
    (entry,) = [line for line in run.session_lines() if line.get("type") == "compaction"]
    assert run.artifacts("pending") == {}
    ((_name, archived),) = run.artifacts("archive").items()
    assert parse_brief(archived).frontmatter.status == "archived"
    assert parse_brief(archived).body == parse_brief(entry["summary"]).body
    assert run.notified("already committed by native compaction was archived")
    assert not run.notified("stale pending")
    assert run.sent_user_messages() == []


# ============================================================================ correlation
def test_same_session_event_hash_correlation_with_custom_compaction_entry_details(tmp_path: Path) -> None:
    run = _threshold_run(tmp_path)
    (entry,) = run.compactions()
    (hook,) = run.named("event", "session_before_compact")
    summary = entry["summary"]
    fm = parse_brief(summary).frontmatter
    assert entry["details"] == {
        "continuityEventId": fm.event_id,
        "artifactPath": str(run.session_dir / "pending" / f"{fm.event_id}.md"),
        "sha256": hashlib.sha256(summary.encode("utf-8")).hexdigest(),
        "sessionId": run.session_id,
        "handoffReason": "threshold",
        "settings": {"enabled": True, "reserveTokens": 50_000, "keepRecentTokens": 2_000},
    }
    assert entry["fromHook"] is True
    assert entry["firstKeptEntryId"] == hook["preparation"]["firstKeptEntryId"]
    assert entry["tokensBefore"] == hook["preparation"]["tokensBefore"] == fm.token_count_at_trigger
    (compact_event,) = run.named("event", "session_compact")
    assert compact_event["compactionEntry"]["id"] == entry["id"]


def test_each_brief_is_unique_so_pis_summary_lookup_finds_the_right_entry(tmp_path: Path) -> None:
    replies, ops = threshold_turns()
    # The continuation after the first compaction is answered by a scripted reply too.
    more = [{"text": "continued", "context_tokens": 10_000}]
    extra_replies, extra_ops = work_turns(2, start=4)
    last_reply, last_op = turn(6, THRESHOLD + 1)
    run = simulate_run(
        tmp_path,
        scenario(agent=[*replies, *more, *extra_replies, last_reply], operations=[*ops, *extra_ops, last_op]),
    )
    first, second = run.compactions()
    assert first["summary"] != second["summary"]
    events = run.named("event", "session_compact")
    assert [e["compactionEntry"]["id"] for e in events] == [first["id"], second["id"]]
    assert len(run.artifacts("archive")) == 2
    a, b = (parse_brief(e["summary"]).frontmatter for e in (first, second))
    assert a.event_id != b.event_id and b.created_at > a.created_at


# ============================================================================ single flight
def test_single_flight_overlap_suppression(tmp_path: Path) -> None:
    replies, ops = threshold_turns()
    held = {"during": [{"command": "/continuity checkpoint"}, {"command": "/continuity status"}]}
    run = simulate_run(tmp_path, scenario(agent=replies, extension=[held], operations=ops))
    assert run.notified(f"{PREFIX} refused: a Continuity Brief is already being prepared for this session.")
    status = next(m for m in run.notifications if m.startswith(f"{PREFIX}\nStatus:"))
    assert "Current operation: native threshold handoff: synthesizing" in status
    assert len(run.requests("extension")) == 1
    (entry,) = run.compactions()
    assert parse_brief(entry["summary"]).frontmatter.handoff_reason == "threshold"
    assert run.artifacts("pending") == {} and len(run.artifacts("archive")) == 1


def test_native_compaction_during_a_checkpoint_is_cancelled(tmp_path: Path) -> None:
    replies, ops = work_turns(3)
    held = {"during": ["compact"]}
    data = scenario(agent=replies, extension=[held], operations=[*ops, {"command": "/continuity checkpoint"}])
    run = simulate_run(tmp_path, data)
    assert _cancelled(run) and run.compactions() == []
    (failure,) = _failed_notifications(run)
    assert "already being prepared" in failure and "manual checkpoint" in failure
    assert len(run.requests("extension")) == 1
    (pending,) = run.briefs("pending")
    assert pending.frontmatter.handoff_reason == "checkpoint"


def test_after_a_handoff_completes_a_checkpoint_is_accepted_again(tmp_path: Path) -> None:
    replies, ops = threshold_turns()
    run = simulate_run(
        tmp_path, scenario(agent=replies, operations=[*ops, {"command": "/continuity checkpoint"}])
    )
    assert len(run.artifacts("archive")) == 1
    (pending,) = run.briefs("pending")
    assert pending.frontmatter.handoff_reason == "checkpoint"
    assert not run.notified("already being prepared")


# ============================================================================ failures
FS_WRITE_FAULT = {"fs": [{"op": "write", "path": "$PROJECT/*/pending/*", "times": 0, "errno": "ENOSPC"}]}
FS_CORRUPT_FAULT = {"fs": [{"op": "read", "path": "$PROJECT/*/pending/*.md", "effect": "corrupt"}]}
FAILURES: dict[str, tuple[dict[str, Any], str, bool]] = {
    # id: (scenario overrides, phase in the notification, whether a failed postmortem is written)
    "synthesis-http-error": (
        {"extension": [{"kind": "error", "error": {"status": 500, "message": "Internal server error"}}]},
        "synthesis: synthesis model error: 500",
        True,
    ),
    "synthesis-empty": (
        {"extension": [{"kind": "empty"}]},
        "synthesis: synthesis returned no Brief text",
        True,
    ),
    "synthesis-length": (
        {"extension": [{"kind": "length"}]},
        "synthesis: synthesis output hit the token limit",
        True,
    ),
    "synthesis-abort": ({"extension": [{"kind": "abort"}]}, "synthesis: synthesis was aborted", True),
    "validation": (
        {"extension": [{"kind": "missing_heading", "heading": "## Recovery Instructions"}]},
        "validation: missing or out-of-order heading: ## Recovery Instructions",
        True,
    ),
    "write": ({"faults": FS_WRITE_FAULT}, "write: writing ", True),
    "re-read": ({"faults": FS_CORRUPT_FAULT}, "re-read: ", True),
    "settings": (
        {
            "settings": {
                "project": {
                    "compaction": {"enabled": True, "reserveTokens": 200_000, "keepRecentTokens": 2_000}
                }
            }
        },
        "native compaction settings are invalid for the current model",
        False,
    ),
    "synthesis-model-missing": (
        {"files": {f"{CONFIG}/session-continuity.json": {"json": {"synthesisModel": "fake/nowhere"}}}},
        "synthesis model: synthesis model fake/nowhere is not in Pi's model registry",
        True,
    ),
    "synthesis-model-auth": (
        {
            "models": [
                {"id": "fake/fake-model", "context_window": 200_000},
                {"id": "other/locked", "context_window": 200_000, "auth": False},
            ],
            "files": {f"{CONFIG}/session-continuity.json": {"json": {"synthesisModel": "other/locked"}}},
        },
        "synthesis model: no API key is configured for the synthesis model other/locked",
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_synthesis_write_reread_settings_failure_returns_cancel_and_no_summary(
    tmp_path: Path, case: str
) -> None:
    table, phase_text, postmortem = FAILURES[case]
    overrides = copy.deepcopy(table)
    replies, ops = threshold_turns()
    extension = overrides.pop("extension", None)
    run = simulate_run(tmp_path, scenario(agent=replies, extension=extension, operations=ops, **overrides))
    assert _cancelled(run)
    assert run.compactions() == []
    assert run.requests("summary") == []  # Pi never fell back to its own summary
    assert run.sent_user_messages() == []
    failures = _failed_notifications(run)
    assert failures and all(phase_text in failure for failure in failures), failures
    assert run.artifacts("pending") == {} and run.artifacts("archive") == {}
    failed = run.artifacts("failed")
    if postmortem:
        ((_name, text),) = failed.items()
        assert "Compaction: Native compaction was cancelled." in text
        assert "Continuation: no continuation prompt was submitted." in text
        assert resume_source_problems(text, session_id=run.session_id)
    else:
        assert failed == {}


def test_the_artifact_directory_cannot_be_created_at_all(tmp_path: Path) -> None:
    run = _threshold_run(tmp_path, files={f"{CONFIG}/session-continuity": {"text": "a file in the way\n"}})
    assert _cancelled(run) and run.compactions() == []
    (failure,) = _failed_notifications(run)
    assert "write: writing" in failure
    assert (run.project / CONFIG / "session-continuity").read_text(encoding="utf-8") == "a file in the way\n"


def test_a_failure_has_no_cooldown_and_the_next_check_point_commits_a_brief(tmp_path: Path) -> None:
    replies, ops = threshold_turns()
    error = {"kind": "error", "error": {"status": 500, "message": "Internal server error"}}
    short = {"text": "a short answer", "context_tokens": 10_000}
    run = simulate_run(
        tmp_path,
        scenario(
            agent=[*replies, short], extension=[error], operations=[*ops, {"prompt": "a short question"}]
        ),
    )
    assert len(run.named("event", "session_before_compact")) == 2
    (entry,) = run.compactions()
    assert resume_source_problems(entry["summary"], session_id=run.session_id) == []
    ((_name, postmortem),) = run.artifacts("failed").items()
    assert entry["summary"] != postmortem
    for request in run.requests("agent"):
        assert "Continuity Brief Failure" not in json.dumps(request.to_json())


# ============================================================================ exact disk bytes
def _disk_spy(store: list[dict[str, Any]]) -> Any:
    """An extension loaded before the reference: in session_compact it reads the artifact
    named in the entry's details before the reference archives it."""

    def factory(pi: ExtensionAPI) -> None:
        def on_compact(event: Any, ctx: ExtensionContext) -> None:
            path = (event.compaction_entry.get("details") or {}).get("artifactPath")
            with open(str(path), "rb") as handle:
                store.append({"path": path, "bytes": handle.read(), "entry": event.compaction_entry})

        pi.on("session_compact", on_compact)

    return factory


def test_session_before_compact_returns_the_exact_re_read_disk_brief_as_summary(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    replies, ops = threshold_turns()
    data = scenario(
        agent=replies, operations=ops, extensions=[extra_extension(_disk_spy(seen)), {"implementation": True}]
    )
    run = simulate_run(tmp_path, data)
    (spied,) = seen
    (entry,) = [line for line in run.session_lines() if line.get("type") == "compaction"]
    assert spied["bytes"].decode("utf-8") == entry["summary"] == spied["entry"]["summary"]
    # The write happened before the entry was appended, and was re-read after the rename.
    writes = [r["seq"] for r in run.fs("replace") if str(r["to"]).endswith(os.path.basename(spied["path"]))]
    entry_seq = next(r["seq"] for r in run.named("entry", "compaction"))
    rereads = [r["seq"] for r in run.fs("read") if r.get("path") == run.named("fs", "replace")[0]["to"]]
    assert writes and writes[0] < entry_seq
    assert rereads and writes[0] < rereads[0] < entry_seq
    # The next model request carries exactly those bytes in Pi's compaction wrapper.
    wrapped = COMPACTION_SUMMARY_PREFIX + entry["summary"] + COMPACTION_SUMMARY_SUFFIX
    assert run.requests("agent")[-1].messages[0]["content"] == [{"type": "text", "text": wrapped}]


# ============================================================================ commit boundary
def test_session_compact_archives_only_after_exact_metadata_hash_content_confirmation(tmp_path: Path) -> None:
    run = _threshold_run(tmp_path)
    (entry,) = run.compactions()
    summary = entry["summary"]
    fm = parse_brief(summary).frontmatter
    ((name, archived),) = run.artifacts("archive").items()
    assert name.endswith(f"-{fm.event_id}.md")
    assert run.artifacts("pending") == {}
    parsed = parse_brief(archived)
    assert parsed.frontmatter.status == "archived" and parsed.frontmatter.updated_at > fm.updated_at
    changed = {k for k, v in parsed.frontmatter.model_dump().items() if v != fm.model_dump()[k]}
    assert changed == {"status", "updatedAt"}
    assert parsed.body == parse_brief(summary).body
    assert run.notified(
        f"{PREFIX}: native compaction committed with disk-backed Brief {run.session_dir / 'archive' / name}."
    )


@pytest.mark.parametrize(
    ("competitor", "mismatched"),
    [("own_compaction", "eventId"), ("empty", "fromExtension")],
)
def test_a_replaced_compaction_result_is_not_archived_and_stays_pending(
    tmp_path: Path, competitor: str, mismatched: str
) -> None:
    run = _threshold_run(tmp_path, extensions=[{"implementation": True}, {"competitor": competitor}])
    (entry,) = run.compactions()
    assert "pi-session-continuity" not in entry["summary"]
    assert run.artifacts("archive") == {}
    assert len(run.artifacts("pending")) == 1
    assert run.sent_user_messages() == []
    (warning,) = [m for m in run.notifications if "does not match the prepared Continuity Brief" in m]
    assert mismatched in warning and "summary" in warning and "left inert" in warning


def test_pending_bytes_changed_on_disk_after_commit_are_not_archived(tmp_path: Path) -> None:
    run = _threshold_run(
        tmp_path,
        faults={
            "tamper": [{"after": {"kind": "entry", "name": "compaction"}, "path": "$PROJECT/*/pending/*.md"}]
        },
    )
    assert len(run.compactions()) == 1
    assert run.artifacts("archive") == {}
    ((_name, text),) = run.artifacts("pending").items()
    assert text.endswith("tampered after the hook returned\n")
    assert run.sent_user_messages() == []
    (warning,) = [m for m in run.notifications if "does not match" in m]
    assert "disk" in warning


def test_an_archive_failure_after_the_commit_is_reported_and_submits_no_continuation(tmp_path: Path) -> None:
    archive_fault = {"fs": [{"op": "write", "path": "$PROJECT/*/archive/*", "times": 0, "errno": "ENOSPC"}]}
    replies, ops = threshold_turns()
    run = simulate_run(
        tmp_path,
        scenario(agent=replies, operations=[*ops, {"command": "/continuity status"}], faults=archive_fault),
    )
    (entry,) = run.compactions()
    ((name, pending),) = run.artifacts("pending").items()
    assert pending == entry["summary"]  # Pi committed it; it stays pending, unchanged
    assert run.artifacts("archive") == {}
    pending_path = run.session_dir / "pending" / name
    (failure,) = run.notified("but archiving it failed")
    assert failure.startswith(f"{PREFIX} failed: native compaction committed the Brief {pending_path}")
    assert failure.endswith("No continuation was submitted.")
    assert not run.notified("native compaction committed with disk-backed Brief")
    assert run.sent_user_messages() == [] and not run.notified("continuation submitted")
    status = next(m for m in run.notifications if m.startswith(f"{PREFIX}\nStatus:"))
    assert f"Last failure: archiving {pending_path} failed: " in status
    assert "Current operation: none" in status


def test_an_abort_after_the_brief_was_returned_clears_the_gate_and_leaves_it_inert(tmp_path: Path) -> None:
    def aborter(pi: ExtensionAPI) -> None:
        done = {"n": 0}

        def before(event: Any, ctx: ExtensionContext) -> None:
            done["n"] += 1
            if done["n"] == 1:
                ctx.abort()

        pi.on("session_before_compact", before)

    replies, ops = threshold_turns()
    short = {"text": "a short answer", "context_tokens": 10_000}
    data = scenario(
        agent=[*replies, short],
        operations=[*ops, {"command": "/continuity status"}, {"prompt": "a short question"}],
        extensions=[{"implementation": True}, extra_extension(aborter)],
    )
    run = simulate_run(tmp_path, data)
    failed = run.named("event", "session_compact_failed")
    assert failed and failed[0]["aborted"] is True and failed[0]["fromExtension"] is True
    status = next(m for m in run.notifications if m.startswith(f"{PREFIX}\nStatus:"))
    assert "Current operation: none" in status and "Stale pending Brief (inert): " in status
    # The gate was released: the next check point (pre-prompt) commits a new Brief.
    (entry,) = run.compactions()
    first_saved = run.notified("Continuity Brief saved to")[0]
    first_path = first_saved.removeprefix(f"{PREFIX}: Continuity Brief saved to ").removesuffix(".")
    assert Path(first_path).exists()  # inert, still pending
    assert parse_brief(entry["summary"]).frontmatter.event_id not in first_path
    assert len(run.artifacts("archive")) == 1


# ============================================================================ continuation
def test_threshold_continuation_uses_disk_content(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    replies, ops = threshold_turns()
    data = scenario(
        agent=replies, operations=ops, extensions=[extra_extension(_disk_spy(seen)), {"implementation": True}]
    )
    run = simulate_run(tmp_path, data)
    (spied,) = seen
    disk = spied["bytes"].decode("utf-8")
    (sent,) = run.sent_user_messages()
    assert sent["deliverAs"] == "followUp"
    continuation = run.user_texts()[-1]
    assert continuation == continuation_text(disk) == disk + "\n" + CONTINUATION_SUFFIX
    assert disk == run.compactions()[0]["summary"]
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in run.entries]
    assert kinds.index("compaction") < len(kinds) - 1 - kinds[::-1].index("user")
    assert run.notified(f"{PREFIX}: continuation submitted from saved Brief.")
    order = [m for m in run.notifications if m.startswith(PREFIX)]
    assert [o.split(":")[1].strip().split(" ")[0] for o in order] == [
        "native",
        "Continuity",
        "native",
        "continuation",
    ]


def test_a_continuation_after_mid_run_compaction_waits_for_the_runs_final_reply(tmp_path: Path) -> None:
    replies, ops = work_turns(2)
    call = {"name": "bash", "arguments": {"command": "echo hi"}, "id": "call_mid", "result": "hi\n"}
    tool_turn = [
        {"text": "running a tool", "tool_calls": [call], "context_tokens": THRESHOLD + 1},
        {"text": "FINAL-TEXT-OF-ORIGINAL-RUN", "context_tokens": 10_000},
    ]
    run = simulate_run(
        tmp_path, scenario(agent=[*replies, *tool_turn], operations=[*ops, {"prompt": filler("use a tool")}])
    )
    assert len(run.compactions()) == 1
    texts = [
        (e["message"]["role"], json.dumps(e["message"].get("content")))
        for e in run.entries
        if e["type"] == "message"
    ]
    final = next(i for i, (role, text) in enumerate(texts) if "FINAL-TEXT-OF-ORIGINAL-RUN" in text)
    continuation = next(
        i for i, (role, text) in enumerate(texts) if role == "user" and "You are continuing after" in text
    )
    assert final < continuation


def test_overflow_retry_and_manual_compaction_submit_no_continuation(tmp_path: Path) -> None:
    replies, ops = work_turns(2)
    overflow = {
        "error": {
            "status": 400,
            "message": "Your input exceeds the context window of this model",
            "code": "context_length_exceeded",
        }
    }
    retry = {"text": "RETRY-ANSWER", "context_tokens": 3_000}
    more_replies, more_ops = work_turns(3, start=4)
    data = scenario(
        agent=[*replies, overflow, retry, *more_replies],
        operations=[
            *ops,
            {"prompt": filler("a request too large")},
            *more_ops,
            {"compact": {"custom_instructions": "focus on the parser"}},
        ],
    )
    run = simulate_run(tmp_path, data)
    first, second = run.compactions()
    assert parse_brief(first["summary"]).frontmatter.handoff_reason == "overflow"
    assert parse_brief(second["summary"]).frontmatter.handoff_reason == "manual-compaction"
    hooks = run.named("event", "session_before_compact")
    assert [(h["reason"], h["willRetry"]) for h in hooks] == [("overflow", True), ("manual", False)]
    assert run.sent_user_messages() == []
    assert not run.notified("continuation submitted")
    assert not [u for u in run.user_texts() if CONTINUATION_SUFFIX in u]
    # Overflow: Pi retried exactly once (2 work turns, the failed request, one retry, 3 more
    # turns: no continuation request), and the retry saw the Brief as its summary.
    agent = run.requests("agent")
    assert len(agent) == 7
    wrapped = COMPACTION_SUMMARY_PREFIX + first["summary"] + COMPACTION_SUMMARY_SUFFIX
    assert agent[3].messages[0]["content"] == [{"type": "text", "text": wrapped}]
    # Manual: the Brief is committed, no new run starts, no extension error.
    sessions = [r["name"] for r in run.named("session")]
    last_end = len(sessions) - 1 - sessions[::-1].index("compaction_end")
    assert "agent_start" not in sessions[last_end:]
    assert run.extension_errors() == []
    assert len(run.artifacts("archive")) == 2
    manual_request = run.requests("extension")[-1]
    assert "Additional focus requested by the user: focus on the parser" in json.dumps(
        manual_request.to_json()
    )


def test_a_silent_overflow_compacts_without_a_retry_and_without_a_continuation(tmp_path: Path) -> None:
    replies, ops = work_turns(2)
    silent = {"text": "a completed reply", "usage": {"input": 250_000, "output": 10}}
    run = simulate_run(
        tmp_path, scenario(agent=[*replies, silent], operations=[*ops, {"prompt": filler("another")}])
    )
    hooks = run.named("event", "session_before_compact")
    assert [(h["reason"], h["willRetry"]) for h in hooks] == [("overflow", False)]
    assert len(run.compactions()) == 1 and run.sent_user_messages() == []
