"""Tree navigation (``AgentSession.navigateTree``, ``dist/core/agent-session.js:3370-3535``) and
the ``tree`` operation (the observer's ``/harness-tree`` on real Pi, the host's in the
simulator): the new-leaf rule, ``session_before_tree`` and its cancel, Pi's throws, the no-op at
the leaf, labels, and the deferral of the command while ``agent_settled`` handlers run
(:742-766, 1705-1708). Both targets are compared in ``tests/realpi/test_differential_fidelity.py (tree navigation)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario
from pi_continuity_harness.simulator.tree import (
    NAVIGATE_WHILE_STREAMING,
    SUMMARY_NOT_MODELLED,
    entry_not_found,
    new_leaf_for,
)

from .helpers import base, entries, run


def _op_ends(result: Any, name: str = "tree") -> list[tuple[bool, str | None]]:
    return [
        (r["ok"], r.get("error"))
        for r in result.host.trace.records
        if r["kind"] == "op" and r.get("phase") == "end" and r["name"] == name
    ]


def _events(result: Any, name: str) -> list[dict[str, Any]]:
    return [r for r in result.host.trace.records if r["kind"] == "event" and r["name"] == name]


def _user_entry(result: Any, text: str) -> dict[str, Any]:
    return next(
        e
        for e in entries(result)
        if e.get("type") == "message"
        and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == text
    )


def _two_prompts(*more: Any, agent: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return base(
        operations=[{"prompt": "one"}, {"prompt": "two"}, *more],
        model={"agent": [{"text": "first answer"}, {"text": "second answer"}, *agent]},
    )


def test_navigating_to_a_user_message_puts_the_leaf_on_its_parent(tmp_path: Path) -> None:
    result = run(tmp_path, _two_prompts({"tree": {"to": 2}}))
    two = _user_entry(result, "two")
    assert _op_ends(result) == [(True, None)]
    [done] = _events(result, "tree_navigation")
    assert done["targetId"] == two["id"]
    assert done["newLeafId"] == two["parentId"]
    assert done["cancelled"] is False
    assert "editorText" not in done  # ctx.navigateTree returns only {cancelled} (rpc-mode.js:266)
    [tree] = _events(result, "session_tree")
    assert (tree["oldLeafId"], tree["newLeafId"]) == (done["oldLeafId"], two["parentId"])
    assert result.final_manager.get_leaf_id() == two["parentId"]  # type: ignore[attr-defined]


def test_the_next_prompt_after_a_navigation_continues_the_new_branch(tmp_path: Path) -> None:
    result = run(tmp_path, _two_prompts({"tree": {"to": 1}}, {"prompt": "three"}, agent=({"text": "third"},)))
    [done] = _events(result, "tree_navigation")
    one = _user_entry(result, "one")
    # The first message's parent is the session's opening thinking-level entry, not the root.
    assert done["newLeafId"] == one["parentId"]
    assert _user_entry(result, "three")["parentId"] == one["parentId"]
    # The model saw only the new branch.
    last = result.host.service.requests[-1]
    texts = [m["content"][0]["text"] for m in last.messages if m["role"] == "user"]
    assert texts == ["three"]


def test_an_extension_cancels_the_navigation_and_sees_the_preparation(tmp_path: Path) -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before_tree(event: Any, _ctx: Any) -> Any:
            seen.append(event.preparation)
            return {"cancel": True}

        pi.on("session_before_tree", before_tree)

    result = run(tmp_path, _two_prompts({"tree": {"to": 2}}), ext)
    two = _user_entry(result, "two")
    [prep] = seen
    assert prep.target_id == two["id"]
    # The target is on the old leaf's path, so it is the deepest common entry, and the abandoned
    # entries are the ones after it, oldest first (branch-summarization.js:27-56).
    assert prep.common_ancestor_id == two["id"]
    assert prep.entries_to_summarize[0]["parentId"] == two["id"]
    assert prep.entries_to_summarize[-1]["id"] == prep.old_leaf_id
    assert prep.user_wants_summary is False
    assert _op_ends(result) == [(False, "cancelled")]
    [done] = _events(result, "tree_navigation")
    assert done["cancelled"] is True
    assert done["newLeafId"] == done["oldLeafId"]
    assert not _events(result, "session_tree")


def test_navigation_while_a_turn_streams_throws_pis_message(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={"agent": [{"text": "a"}, {"text": "b", "latency_ms": 50, "during": [{"tree": {"to": 1}}]}]},
    )
    result = run(tmp_path, scenario)
    assert _op_ends(result) == [(False, NAVIGATE_WHILE_STREAMING)]
    [done] = _events(result, "tree_navigation")
    assert done["error"] == NAVIGATE_WHILE_STREAMING
    assert done["newLeafId"] == done["oldLeafId"]


def test_a_navigation_sent_while_agent_settled_handlers_run_is_deferred_until_they_end(
    tmp_path: Path,
) -> None:
    """The ``agent_settled`` handler holds a model call; the ``tree`` sent meanwhile runs only
    after the handler returned, and before a command waiting for idle resumes."""
    order: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def settled(_event: Any, ctx: Any) -> None:
            order.append("settled:start")
            model = ctx.model
            context = {"systemPrompt": "s", "messages": [{"role": "user", "content": "x", "timestamp": 0}]}
            await ctx.model_registry.complete(model, context, max_tokens=16)
            order.append("settled:end")

        async def hold(_args: str, ctx: Any) -> None:
            await ctx.wait_for_idle()
            order.append(f"hold:end leaf={ctx.session_manager.get_leaf_id()}")

        def before_tree(_event: Any, _ctx: Any) -> None:
            order.append("before_tree")

        pi.on("agent_settled", settled)
        pi.on("session_before_tree", before_tree)
        pi.register_command("hold", hold)

    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}],
        model={
            "agent": [
                {"text": "a"},
                {"text": "b", "latency_ms": 50, "during": [{"command": {"text": "/hold", "wait": False}}]},
            ],
            "extension": [
                {"kind": "raw", "text": "ok"},
                {
                    "kind": "raw",
                    "text": "ok",
                    "latency_ms": 50,
                    "during": [{"tree": {"to": 2, "wait": False}}],
                },
            ],
        },
    )
    result = run(tmp_path, scenario, ext)
    two = _user_entry(result, "two")
    assert order[-4:] == ["settled:start", "settled:end", "before_tree", f"hold:end leaf={two['parentId']}"]
    [done] = _events(result, "tree_navigation")
    assert done["cancelled"] is False


def test_ctx_navigate_tree_no_op_unknown_entry_label_and_summary(tmp_path: Path) -> None:
    outcomes: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        async def nav(args: str, ctx: Any) -> None:
            leaf = ctx.session_manager.get_leaf_id()
            outcomes.append(await ctx.navigate_tree(leaf))
            for call in (lambda: ctx.navigate_tree("nope"), lambda: ctx.navigate_tree(leaf, summarize=True)):
                try:
                    outcomes.append(await call())
                except Exception as error:
                    outcomes.append(str(error))
            target = ctx.session_manager.get_entries()[0]["id"]
            outcomes.append(await ctx.navigate_tree(target, label="start"))

        pi.register_command("nav", nav)

    result = run(tmp_path, _two_prompts({"command": "/nav"}), ext)
    assert outcomes[:2] == [{"cancelled": False}, entry_not_found("nope")]
    # At the leaf, summarize is a no-op too (the no-op check comes first, :3379-3381).
    assert outcomes[2] == {"cancelled": False}
    assert outcomes[3] == {"cancelled": False}
    first = entries(result)[0]
    labels = [e for e in entries(result) if e.get("type") == "label"]
    assert [(e["targetId"], e["label"], e["parentId"]) for e in labels] == [
        (first["id"], "start", first["id"])
    ]


def test_summarize_is_refused_clearly(tmp_path: Path) -> None:
    said: list[str] = []

    def ext(pi: ExtensionAPI) -> None:
        async def nav(_args: str, ctx: Any) -> None:
            try:
                await ctx.navigate_tree(ctx.session_manager.get_entries()[0]["id"], summarize=True)
            except Exception as error:
                said.append(str(error))

        pi.register_command("nav", nav)

    run(tmp_path, _two_prompts({"command": "/nav"}), ext)
    assert said == [SUMMARY_NOT_MODELLED]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{tree: {to: 0}}", "operations[0].tree.to: 0 names no message (1 is the first, -1 the last)"),
        ("{tree: {to: 1, wait: maybe}}", "operations[0].tree.wait: Input should be a valid boolean"),
        ("{tree: {where: 1}}", "operations[0].tree.where: Extra inputs are not permitted"),
    ],
)
def test_bad_tree_operations_are_refused_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\noperations: [{text}]\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert str(raised.value).replace(str(path), "bad.yaml") == f"bad.yaml: {message}"


def test_the_cli_refuses_an_unawaited_tree_at_the_top_level_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\noperations: [{tree: {to: 1, wait: false}}]\n", encoding="utf-8")
    assert main(["simulate", str(path), "--workdir", str(tmp_path / "run")]) == 2
    assert "operations[0].tree.wait: false is for a navigation sent while a reply is held" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "run").exists()


def test_no_such_message_is_the_operations_error(tmp_path: Path) -> None:
    result = run(tmp_path, _two_prompts({"tree": {"to": 3}}))
    assert _op_ends(result) == [(False, "tree: no user message 3 to navigate to (2 offered)")]


def test_the_new_leaf_rule_for_each_kind_of_entry() -> None:
    """``agent-session.js:3466-3482``: a user or custom message hands its text to the editor and
    puts the leaf on its parent; any other entry becomes the leaf."""
    user = {"type": "message", "id": "u", "parentId": "p", "message": {"role": "user", "content": "hi"}}
    custom = {
        "type": "custom_message",
        "id": "c",
        "parentId": None,
        "content": [{"type": "text", "text": "x"}],
    }
    reply = {"type": "message", "id": "a", "parentId": "u", "message": {"role": "assistant", "content": []}}
    label = {"type": "label", "id": "l", "parentId": "a", "targetId": "u", "label": "x"}
    assert new_leaf_for(user) == ("p", "hi")
    assert new_leaf_for(custom) == (None, "x")
    assert new_leaf_for(reply) == ("a", None)
    assert new_leaf_for(label) == ("l", None)
