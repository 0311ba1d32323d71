"""Steps for Pi's own behaviour under streams, retries and queues (issue 11).

Given and When phrases for what a provider and a user can do to a running reply: two overflows
in a row, a manual compaction while the model is still replying, faults of Pi's own summarizer,
5xx and 429 replies with Pi's retry, steering, follow-up and plain prompts while a reply
streams, an abort (after part of the reply streamed, or before) and the prompt after it. Then
phrases read what Pi did: which messages the next request carried, how often it retried, what
the operations run during a held reply returned. They hold for any extension (a scenario made of
them is tagged ``@host``) and run on both targets.
"""

from __future__ import annotations

from typing import Any

from pytest_bdd import given, parsers, then, when

from pi_continuity_harness.features.steps.common import begin, new_requests, new_session_events
from pi_continuity_harness.features.world import TURN_CHARS, World, _filler
from pi_continuity_harness.scenario.model_script import HttpError, Reply, StreamPlan
from pi_continuity_harness.scenario.operations import AbortOp, CompactOp, PromptOp

_OVERFLOW = HttpError(
    status=400, message="Your input exceeds the context window of this model", code="context_length_exceeded"
)


def _prompt_with(world: World, *replies: Reply, text: str = "continue the task") -> None:
    world.ensure_history()
    begin(world)
    world.script("agent", *replies)
    world.turns += 1
    world.remembered["last_prompt"] = text
    world.prompt(_filler(text, TURN_CHARS))


def _http(status: int) -> HttpError:
    if status == 429:
        return HttpError(status=429, message="Rate limit reached", type="rate_limit_error")
    return HttpError(status=status, message="Service error", type="server_error")


# ============================================================================ given
@given(
    parsers.re(r"Pi's own summarizer fails with an HTTP (?P<status>\d{3}) error(?: (?P<times>\d+) times)?")
)
def _summarizer_fails(world: World, status: str, times: str | None) -> None:
    world.require_setup("a failing summarizer")
    for _ in range(int(times or 1)):
        world.script("summary", Reply(error=_http(int(status))))


@given("Pi's own summarizer stops at its output limit")
def _summarizer_length(world: World) -> None:
    world.require_setup("a summarizer cut short")
    world.script("summary", Reply(text="A summary cut", finish="length"))


@given("Pi runs without the implementation under test")
def _without_implementation(world: World) -> None:
    """No extension but the observer: Pi's own summarizer compacts (for ``@host`` scenarios)."""
    draft = world.require_setup("the extensions Pi loads")
    draft.data["extensions"] = []


@given(parsers.re(r"Pi retries a failed request up to (?P<times>\d+) times?, (?P<delay>\d+) ms apart"))
def _retry_settings(world: World, times: str, delay: str) -> None:
    draft = world.require_setup("the retry settings")
    draft.data["settings"].setdefault("global", {})["retry"] = {
        "enabled": True,
        "maxRetries": int(times),
        "baseDelayMs": int(delay),
    }


# ============================================================================ when
@when("the provider rejects the next two requests because they exceed the context window")
def _two_overflows(world: World) -> None:
    _prompt_with(
        world, Reply(error=_OVERFLOW), Reply(error=_OVERFLOW), Reply(text="AFTER-TWO", context_tokens=3_000)
    )


@when(
    parsers.re(
        r"the provider answers the next request with an HTTP (?P<status>\d{3}) error(?: (?P<times>\d+) times)?"
    )
)
def _http_errors(world: World, status: str, times: str | None) -> None:
    errors = [Reply(error=_http(int(status))) for _ in range(int(times or 1))]
    _prompt_with(world, *errors, Reply(text="ANSWER-AFTER-ERRORS", context_tokens=3_000))


@when(parsers.re(r"the user compacts the session manually while the model is still replying"))
def _compact_while_streaming(world: World) -> None:
    text = _filler("a reply that is still streaming", 300)
    _prompt_with(world, Reply(text=text, stream=StreamPlan(upto=100), during=(CompactOp(),)))


@when(
    parsers.re(
        r'the user (?P<how>steers with|queues the follow-up|sends) "(?P<text>[^"]+)" while the model is replying'
    )
)
def _prompt_while_streaming(world: World, how: str, text: str) -> None:
    behaviour: dict[str, Any] = {
        "steers with": {"streaming_behavior": "steer"},
        "queues the follow-up": {"streaming_behavior": "followUp"},
    }.get(how, {})
    during = PromptOp.model_validate({"prompt": {"text": text, **behaviour}})
    replies = [Reply(text="REPLY-WHILE-QUEUED", context_tokens=3_000, during=(during,))]
    if behaviour:
        replies.append(Reply(text="REPLY-TO-QUEUED", context_tokens=3_100))
    _prompt_with(world, *replies)


@when(
    parsers.re(
        r"the user aborts the reply to the next prompt(?: after (?P<chars>\d+) characters of it streamed)?"
    )
)
def _abort_reply(world: World, chars: str | None) -> None:
    text = "PARTIAL-" + _filler("the reply the user aborts", 200)
    world.remembered["aborted_text"] = text[: int(chars)] if chars else ""
    if chars:
        reply = Reply(text=text, stream=StreamPlan(upto=int(chars), then="abort"))
    else:
        reply = Reply(text=text, during=(AbortOp(),))
    _prompt_with(world, reply, text="a prompt the user aborts")


# ============================================================================ then
def _assistant_entries(world: World) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in world.observe().entries
        if e.get("type") == "message" and (e.get("message") or {}).get("role") == "assistant"
    ]


@then("the aborted reply keeps the text that had streamed")
def _aborted_keeps_text(world: World) -> None:
    aborted = [m for m in _assistant_entries(world) if m.get("stopReason") == "aborted"]
    assert aborted, "no aborted reply was persisted"
    text = "".join(b.get("text", "") for b in aborted[-1].get("content") or [] if b.get("type") == "text")
    assert text == world.remembered.get("aborted_text"), f"the aborted reply holds {text!r}"


@then("no failed or aborted reply is in the next model request")
def _no_failed_reply_sent(world: World) -> None:
    failed = [
        "".join(b.get("text", "") for b in m.get("content") or [] if b.get("type") == "text")
        for m in _assistant_entries(world)
        if m.get("stopReason") in ("error", "aborted")
    ]
    assert failed, "no failed or aborted reply was persisted"
    request = world.observe().requests("agent")[-1]
    for message in request.request.messages:
        if message.get("role") != "assistant":
            continue
        text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")
        assert not any(f and f == text for f in failed), f"a failed reply was sent again: {text[:80]!r}"
    sent = [m for m in request.request.messages if m.get("role") == "assistant"]
    assert not [m for m in sent if not m.get("content")], "an empty assistant message was sent"


@then(parsers.re(r"Pi retried the failed request (?P<times>\d+) times?(?: and then gave up)?"))
def _retried(world: World, times: str) -> None:
    starts = [e for e in new_session_events(world, "auto_retry_start")]
    assert len(starts) == int(times), f"{len(starts)} retries: {starts}"


@then(parsers.re(r"Pi's own summarizer was retried (?P<times>\d+) times?"))
def _summary_retried(world: World, times: str) -> None:
    scheduled = new_session_events(world, "summarization_retry_scheduled")
    assert len(scheduled) == int(times), f"{len(scheduled)} summarizer retries: {scheduled}"
    finished = new_session_events(world, "summarization_retry_finished")
    assert len(finished) == (1 if scheduled else 0)


@then(
    parsers.re(
        r'the prompt sent while the model was replying was (?P<how>rejected with "(?P<error>[^"]+)"|queued)'
    )
)
def _held_prompt(world: World, how: str, error: str | None) -> None:
    held = [h for h in world.observe().held_operations if h.outcome.name == "prompt"]
    assert held, "no prompt ran while the model was replying"
    outcome = held[-1].outcome
    if error is not None:
        assert (outcome.ok, outcome.error) == (False, error), f"the prompt returned {outcome}"
    else:
        assert (outcome.ok, outcome.disposition) == (True, "queued"), f"the prompt returned {outcome}"


@then(parsers.re(r'a later model request carries "(?P<text>[^"]+)" as a user message'))
def _later_request(world: World, text: str) -> None:
    for request in new_requests(world, "agent"):
        for message in request.request.messages:
            content = message.get("content")
            joined = (
                content
                if isinstance(content, str)
                else "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
            )
            if message.get("role") == "user" and joined == text:
                return
    raise AssertionError(f"no model request carried {text!r} as a user message")


@then(parsers.re(r"the manual compaction ran after the interrupted reply settled"))
def _compaction_after_abort(world: World) -> None:
    kinds = [
        e["type"] for e in new_session_events(world) if e["type"] in ("agent_settled", "compaction_start")
    ]
    assert kinds[:2] == ["agent_settled", "compaction_start"], kinds
    held = [h.outcome for h in world.observe().held_operations if h.outcome.name == "compact"]
    assert held and held[-1].ok, f"the compaction returned {held}"
