"""Steps about the host's own behaviour that an implementation relies on (features ``@host``).

They describe what Pi does (trust decisions, reload while busy, session replacement, its own
summarizer), so the suite can measure on which Pi releases a continuity extension's assumptions
hold; each scenario that depends on a host capability older releases lack is tagged
``@needs-<capability>`` (``targets.target.CAPABILITIES``; the release and file:line are in
``targets/realpi/versions.py``).
"""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then, when

from pi_continuity_harness.features.host_extensions import SESSION_START_ENTRY
from pi_continuity_harness.features.steps.common import (
    begin,
    new_extension_events,
    new_requests,
    new_session_events,
)
from pi_continuity_harness.features.world import World
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import NewSessionOp, ReloadOp, TreeOp

_RECORDER = "pi_continuity_harness.features.host_extensions:session_start_recorder"


# --------------------------------------------------------------------- given
@given("the user distrusted the project in Pi's trust store, and it has no project settings")
def _distrusted_in_trust_store(world: World) -> None:
    """A decision saved in ``<agentDir>/trust.json`` (what Pi writes when the user answers its trust
    prompt with "no") for a project without trust-requiring resources, while
    ``defaultProjectTrust`` stays ``always``: only the saved decision makes it untrusted (Pi 1.5.0+,
    ``dist/core/project-trust.js:22-23``). The native policy moves to the global settings, since a
    project settings file is itself a trust-requiring resource."""
    draft = world.require_setup("trust store")
    draft.data["saved_trust"] = False
    project = draft.project_settings or {}
    compaction = project.pop("compaction", None)
    if compaction:
        draft.data["settings"]["global"]["compaction"] = compaction
    assert not project, f"feature error: project settings {project} would make trust matter anyway"
    draft.set_project_settings(None)


@given("Pi is asked to reload while the next Brief is being synthesized")
def _reload_during_synthesis(world: World) -> None:
    world.script("extension", SynthesisReply(during=(ReloadOp(),)))


@given("another extension records a custom entry whenever a session starts")
def _session_start_recorder(world: World) -> None:
    world.require_setup("another extension").data["extensions"].append({"module": _RECORDER})


# --------------------------------------------------------------------- when
@when("the user starts a new session linked to the current one")
def _new_session(world: World) -> None:
    world.start()
    begin(world)
    outcome = world.perform(NewSessionOp.model_validate({"new_session": {"parent": True}}))
    assert outcome.ok, f"the new session failed: {outcome.error}"


# --------------------------------------------------------------------- then
@then("Pi did not reload")
def _no_reload(world: World) -> None:
    reloads = [
        e
        for e in world.observe().extension_events
        if e.get("type") in ("session_shutdown", "session_start") and e.get("reason") == "reload"
    ]
    assert not reloads, f"Pi reloaded while it was busy: {reloads}"


def _recorded_at_start(world: World, reason: str) -> list[dict[str, Any]]:
    return [
        e
        for e in world.observe().entries_of("custom")
        if e.get("customType") == SESSION_START_ENTRY and (e.get("data") or {}).get("reason") == reason
    ]


@then("every extension saw session_start for the new session exactly once")
def _one_session_start(world: World) -> None:
    starts = [e for e in new_extension_events(world, "session_start") if e.get("reason") == "new"]
    assert len(starts) == 1, f"session_start ran {len(starts)} times for the new session: {starts}"
    recorded = _recorded_at_start(world, "new")
    assert [(e.get("data") or {}).get("n") for e in recorded] == [1], (
        f"the recording extension's session_start ran {len(recorded)} times in the new session: {recorded}"
    )


@then("the client was told of the entry recorded at the new session's start")
def _entry_streamed(world: World) -> None:
    recorded = _recorded_at_start(world, "new")
    assert recorded, "no entry was recorded at the new session's start"
    announced = {e.get("id") for e in new_session_events(world, "entry_appended")}
    missing = [e.get("id") for e in recorded if e.get("id") not in announced]
    assert not missing, (
        f"no entry_appended reached the client for {missing} (announced: {announced or 'none'})"
    )


@then("Pi committed its own summary as the compaction")
def _own_summary(world: World) -> None:
    assert new_requests(world, "summary"), "Pi's summarizer was not asked for a summary"
    ends = new_session_events(world, "compaction_end")
    assert ends and not ends[-1].get("aborted"), f"the compaction did not complete: {ends}"
    entry = world.latest_compaction()
    assert not entry.get("fromHook"), "the compaction summary came from an extension, not from Pi"


@then("Pi asked for the summary with the model's whole output limit")
def _summary_budget(world: World) -> None:
    limit = int(world.draft.active_model()["max_tokens"])
    asked = [r.request.max_tokens for r in new_requests(world, "summary")]
    assert asked, "Pi's summarizer was not asked for a summary"
    assert all(n == limit for n in asked), (
        f"Pi asked for max_tokens {asked}, not the model's output limit {limit}"
    )


# --------------------------------------------------------------------- tree navigation
def _last_user_entry(world: World) -> dict[str, Any]:
    users = [
        e
        for e in world.observe().entries
        if e.get("type") == "message" and (e.get("message") or {}).get("role") == "user"
    ]
    assert users, "the session holds no user message"
    return users[-1]


@when("the user navigates the session tree to the last user message")
def _navigate_to_last(world: World) -> None:
    """The ``tree`` operation: the observer's ``/harness-tree`` on real Pi (``ctx.navigateTree``)."""
    world.start()
    world.remembered["tree_target"] = _last_user_entry(world)
    world.remembered["tree_outcome"] = world.perform(TreeOp.model_validate({"tree": {"to": -1}}))


@when("the user navigates the session tree while the model's reply is held")
def _navigate_while_streaming(world: World) -> None:
    world.start()
    navigate = TreeOp.model_validate({"tree": {"to": 1}})
    world.script("agent", Reply(text="Done.", context_tokens=6_000, latency_ms=300, during=(navigate,)))
    outcome = world.prompt("one more step")
    assert outcome.ok, f"the prompt failed: {outcome.error}"


@then("Pi moved the leaf to that message's parent and told the extensions")
def _leaf_moved(world: World) -> None:
    """A user message puts the leaf on its parent (``agent-session.js:3466-3470``) and
    ``session_tree`` follows (``:3518-3524``)."""
    target = world.remembered["tree_target"]
    outcome = world.remembered["tree_outcome"]
    assert outcome.ok, f"the navigation failed: {outcome.error}"
    [done] = world.observe().events("tree_navigation")
    assert (done.get("targetId"), done.get("newLeafId")) == (target["id"], target.get("parentId")), done
    trees = world.observe().events("session_tree")
    assert [(e.get("oldLeafId"), e.get("newLeafId")) for e in trees] == [
        (done.get("oldLeafId"), target.get("parentId"))
    ], trees


@then(parsers.parse('Pi refused the navigation: "{message}"'))
def _navigation_refused(world: World, message: str) -> None:
    held = [h.outcome for h in world.observe().held_operations if h.outcome.name == "tree"]
    assert [(o.ok, o.error) for o in held] == [(False, message)], held
    [done] = world.observe().events("tree_navigation")
    assert done.get("newLeafId") == done.get("oldLeafId"), f"the leaf moved: {done}"
