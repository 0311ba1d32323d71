"""Steps of the real-world failure features (``pi_session_continuity/failures/``) and the
generic replay steps of regressions written by ``pi-continuity-harness explore``.

Failure steps speak the same language as the smoke steps and only reach the host through
the Target seam, so a failure feature without a ``@needs-`` tag runs on real Pi as well.

The replay steps (``Given the scenario file "..."``, ``When its operations run``, ``Then
invariant "<name>" holds``) play a scenario file through :meth:`Target.run_checked
<pi_continuity_harness.targets.Target.run_checked>`, with the system's run checker (the
explorer's invariants) watching every effect; only the simulator can (the checker reads the
trace as it is written), so such features carry ``@needs-trace-faults`` and are skipped
elsewhere.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when
from pytest_bdd.scenario import scenario_wrapper_template_registry

from pi_continuity_harness.errors import HarnessError
from pi_continuity_harness.features.collect import checks_arguments
from pi_continuity_harness.features.oracle import CONTINUATION_SUFFIX, MESSAGE_PREFIX, parse_brief
from pi_continuity_harness.features.steps.common import (
    begin,
    briefs_in,
    continuations_since,
    new_extension_events,
    new_notifications,
    new_requests,
    new_session_events,
    number,
)
from pi_continuity_harness.features.world import TURN_CHARS, World, _filler
from pi_continuity_harness.scenario.document import Scenario, load_scenario
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply, Usage, estimate_request_tokens
from pi_continuity_harness.scenario.operations import CompactOp
from pi_continuity_harness.targets import CheckedRun


# ===================================================================== given
@given(parsers.re(r"the active model reasons, with an output limit of (?P<n>\d[\d,]*) tokens"))
def _reasoning_model(world: World, n: str) -> None:
    draft = world.require_setup("the active model")
    model = draft.active_model()
    model["reasoning"] = True
    model["max_tokens"] = number(n)


@given(parsers.re(r"the user has worked through (?P<count>\d+) turns of (?P<chars>\d[\d,]*) characters each"))
def _worked_long_turns(world: World, count: str, chars: str) -> None:
    world.work_turns(int(count), prompt_chars=number(chars))


@given("the user compacts the session manually while the next Brief is being synthesized")
def _compact_during_synthesis(world: World) -> None:
    world.script("extension", SynthesisReply(during=(CompactOp(),)))


# ===================================================================== when
@when(parsers.re(r"the model stops at its output limit with (?P<n>\d[\d,]*) input tokens(?P<twice>, twice)?"))
def _length_stop(world: World, n: str, twice: str | None) -> None:
    world.ensure_history()
    begin(world)
    cut = Reply(
        text="a reply cut short by its output limit",
        finish="length",
        usage=Usage(input=number(n), output=100),
    )
    replies = [cut, cut] if twice else [cut]
    world.script("agent", *replies, Reply(text="RETRY-ANSWER", context_tokens=3_000))
    world.turns += 1
    world.prompt(_filler("a request cut short", TURN_CHARS))


@when(parsers.re(r"the user sends (?P<count>\d+) prompts whose replies stay above the threshold"))
def _prompts_above_threshold(world: World, count: str) -> None:
    begin(world)
    for index in range(int(count)):
        world.script("agent", Reply(text=f"an answer {index}", context_tokens=world.threshold_tokens() + 1))
        world.prompt(f"another question {index}")


# ===================================================================== then: compaction and cost
@then("no check point made more than one synthesis request")
def _bounded_synthesis(world: World) -> None:
    points = len(new_extension_events(world, "session_before_compact"))
    requests = len(new_requests(world))
    synthesis = new_requests(world, "extension")
    assert points >= 1, "no check point was reached"
    assert len(synthesis) <= points, (
        f"{len(synthesis)} synthesis requests for {points} check point(s) ({requests} model requests in all)"
    )


@then(
    parsers.re(r"every one of the (?P<n>\d+) check points since was cancelled with one failure notification")
)
def _each_failure_notified(world: World, n: str) -> None:
    points = new_extension_events(world, "session_before_compact")
    cancelled = [e for e in new_session_events(world, "compaction_end") if e.get("aborted")]
    notes = [m for m, _ in new_notifications(world) if m.startswith(f"{MESSAGE_PREFIX} failed")]
    assert len(points) == int(n), f"{len(points)} check points were reached, expected {n}"
    assert len(cancelled) == len(points), f"{len(cancelled)} of {len(points)} check points were cancelled"
    assert len(notes) == len(points), (
        f"{len(notes)} failure notifications for {len(points)} failing check points"
    )


@then("no run was aborted")
def _no_run_aborted(world: World) -> None:
    observation = world.observe()
    aborted = [e for e in observation.session("agent_settled") if e.get("aborted")]
    assert not aborted, f"{len(aborted)} run(s) settled aborted"
    if world.target is not None and "agent-settled-aborted" not in world.target.capabilities():
        # Pi 1.0.3's agent_settled carries no ``aborted`` (dist/core/agent-session.js:676-677), so
        # the check above would pass vacuously there: an aborted run also ends with an assistant
        # reply that stopped "aborted".
        replies = [e for e in observation.session("message_end") if e.get("stopReason") == "aborted"]
        assert not replies, f"{len(replies)} assistant repl(ies) stopped aborted"


@then("no synthesis request was aborted")
def _synthesis_not_aborted(world: World) -> None:
    requests = world.observe().requests("extension")
    assert requests, "no synthesis request was made"
    aborted = [r.index for r in requests if r.aborted]
    assert not aborted, f"synthesis request(s) {aborted} were aborted"


@then(parsers.re(r'every synthesis request fits the context window of "(?P<model_id>[^"]+)"'))
def _synthesis_fits(world: World, model_id: str) -> None:
    model = next((m for m in world.draft.data["models"] if m["id"] == model_id), None)
    assert model is not None, f"the feature declares no model {model_id!r}"
    window = int(model["context_window"])
    requests = [r for r in world.observe().requests("extension") if r.request.model == model_id]
    assert requests, f"no synthesis request went to {model_id}"
    for observed in requests:
        request = observed.request
        needed = estimate_request_tokens(request) + (request.max_tokens or 0)
        assert needed <= window, (
            f"synthesis request #{observed.index} needs about {needed} tokens (input + max_tokens) in a "
            f"{window}-token window"
        )


@then("the transcript handed to Pi for that compaction was larger than the synthesis window")
def _session_far_larger(world: World) -> None:
    events = world.observe().events("session_before_compact")
    assert events, "no compaction reached the hook"
    chars = sum(len(text) for text in world.observe().user_messages())
    window = min(int(m["context_window"]) for m in world.draft.data["models"])
    assert math.ceil(chars / 4) > window, (
        f"the session holds only about {math.ceil(chars / 4)} tokens of prompts"
    )


@then("every compaction summary is archived")
def _all_archived(world: World) -> None:
    compactions = world.compactions()
    assert compactions, "no compaction entry was persisted"
    archived = {b.event_id for _, b in briefs_in(world.session_artifacts("archive"))}
    for entry in compactions:
        brief = parse_brief(str(entry.get("summary", "")))
        assert brief is not None, "a compaction summary is not a Brief"
        assert brief.event_id in archived, f"the Brief of event {brief.event_id} was not archived"


@then("one continuation was submitted for each threshold compaction")
def _one_per_compaction(world: World) -> None:
    committed = [e for e in world.observe().events("session_compact") if e.get("reason") == "threshold"]
    found = continuations_since(world, 0)
    assert committed, "no threshold compaction committed"
    assert len(found) == len(committed), (
        f"{len(found)} continuations for {len(committed)} threshold compactions"
    )
    summaries = [str((e.get("compactionEntry") or {}).get("summary", "")) for e in committed]
    for text, summary in zip(found, summaries, strict=True):
        assert text.startswith(summary) and text.endswith(CONTINUATION_SUFFIX), (
            "a continuation is not its Brief"
        )


@then("the model answered the user's prompt before it received the continuation")
def _prompt_first(world: World) -> None:
    continuation = world.remembered.get("continuation")
    assert isinstance(continuation, str), "no continuation was remembered (check 'exactly one continuation')"
    lasts = [r.last_user_text() for r in new_requests(world, "agent")]
    assert continuation in lasts, "the continuation never reached the model"
    first = lasts.index(continuation)
    assert any(text == "a short question" for text in lasts[:first]), (
        f"the continuation reached the model before the user's prompt was answered: {[t[:30] for t in lasts]}"
    )


@then("the checkpoint was accepted")
def _checkpoint_accepted(world: World) -> None:
    notes = [m for m, _ in new_notifications(world)]
    saved = [m for m in notes if re.match(rf"^{re.escape(MESSAGE_PREFIX)}: Continuity Brief saved to /", m)]
    assert saved, f"the checkpoint was not saved; notifications were: {notes}"


@then("the compaction summary is a new Brief, not the stale checkpoint")
def _not_the_checkpoint(world: World) -> None:
    checkpoint = world.remembered.get("checkpoint") or {}
    assert checkpoint, "no checkpoint Brief was remembered"
    summary = parse_brief(str(world.latest_compaction().get("summary", "")))
    assert summary is not None, "the compaction summary is not a Brief"
    stale = {brief.event_id for _name, brief in briefs_in(checkpoint)}
    assert summary.event_id not in stale, "the stale checkpoint Brief became the compaction summary"


@then("the stale checkpoint is still pending and unchanged")
def _checkpoint_unchanged(world: World) -> None:
    checkpoint = world.remembered.get("checkpoint") or {}
    assert checkpoint, "no checkpoint Brief was remembered"
    now = world.all_artifacts()
    for name, data in checkpoint.items():
        assert "/pending/" in f"/{name}", f"the checkpoint Brief {name} was never pending"
        assert now.get(name) == data, f"the stale checkpoint {name} was changed, archived or removed"


# ===================================================================== replay of explorer regressions
def _feature_dir(request: pytest.FixtureRequest) -> Path:
    template = scenario_wrapper_template_registry.get(getattr(request.node, "obj", None))  # type: ignore[arg-type]
    if template is not None:
        return Path(template.feature.filename).parent
    return Path.cwd()


def _scenario_file_loads(arguments: Mapping[str, Any], feature_dir: Path) -> str | None:
    """The scenario file a feature names exists and is a valid scenario, checked before any
    scenario runs (loaded only when the step ran, a missing file failed the scenario)."""
    try:
        load_scenario(feature_dir / str(arguments["path"]))
    except HarnessError as error:
        return str(error)
    return None


@given(parsers.re(r'the scenario file "(?P<path>[^"]+)"'))
@checks_arguments(_scenario_file_loads)
def _scenario_file(world: World, request: pytest.FixtureRequest, path: str) -> None:
    world.require_setup("a scenario file")
    location = Path(path)
    if not location.is_absolute():
        location = _feature_dir(request) / location
    world.remembered["scenario_file"] = load_scenario(location)


@when("its operations run")
def _operations_run(world: World) -> None:
    scenario = world.remembered.get("scenario_file")
    assert isinstance(scenario, Scenario), "no scenario file was given"
    checked = world.run_checked(scenario)
    if checked is None:
        pytest.skip(
            "replaying a scenario file with invariant checks needs the run-checker or observed-checker capability"
        )
    world.remembered["checked"] = checked


def _checked(world: World) -> CheckedRun:
    checked = world.remembered.get("checked")
    assert isinstance(checked, CheckedRun), "the scenario file's operations have not run"
    return checked


@then(parsers.re(r'invariant "(?P<name>[a-z_]+)" holds(?: from operation (?P<start>\d+))?'))
def _invariant_holds(world: World, name: str, start: str | None) -> None:
    checked = _checked(world)
    assert name in checked.invariants, f"no invariant is named {name!r}"
    if name == "liveness":
        assert start is not None, (
            'say where the healed phase starts: invariant "liveness" holds from operation N'
        )
        problem = checked.liveness(int(start))
        assert problem is None, problem
        return
    broken = checked.broken(name)
    assert not broken, "\n".join(broken)


@then("every invariant holds")
def _every_invariant(world: World) -> None:
    checked = _checked(world)
    problems = [seen for _name, seen in checked.violations] + list(checked.harness_errors)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------- both targets
@when("it runs on the simulator and on real Pi")
def _runs_on_both(world: World) -> None:
    """Play the scenario file on each target (a regression ``explore --target pi`` wrote)."""
    scenario = world.remembered.get("scenario_file")
    assert isinstance(scenario, Scenario), "no scenario file was given"
    both = world.play_both(scenario)
    if both is None:
        pytest.skip("playing a scenario on both targets needs real Pi 1.6 (pi-continuity-harness install-pi)")
    world.remembered["both"] = both


@then("both targets observe the same")
def _both_observe_the_same(world: World) -> None:
    both = world.remembered.get("both")
    assert both is not None, "the scenario file has not run on both targets"
    detail = "\n".join(f"{d.channel}:\n  " + "\n  ".join(d.detail) for d in both.unexplained)
    assert not both.unexplained, f"the simulator and real Pi differ:\n{detail}"
