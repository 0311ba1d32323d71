"""``synthesis_prompt_rules``' freshness check (``explore/continuity/invariants.py``,
``Tracker.states_freshness_rule``): the system prompt's answer, remembered per prompt, stands
for the request's whole text only when it finds the whole rule; it always answers what
``has_freshness_rule`` of the whole text answers."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.explore.continuity.invariants import Tracker, _request_text
from pi_continuity_harness.features.oracle import has_freshness_rule
from pi_continuity_harness.reference.psc.constants import EVENT_FRESHNESS_RULE
from pi_continuity_harness.scenario.model_script import ModelRequest

_SENTENCES = [s.strip() + "." for s in EVENT_FRESHNESS_RULE.split(".") if s.strip()]
_FRAGMENTS = st.sampled_from(
    [
        EVENT_FRESHNESS_RULE,
        *_SENTENCES,
        *(sentence[: len(sentence) // 2] for sentence in _SENTENCES),
        *(sentence[len(sentence) // 2 :] for sentence in _SENTENCES),
        "one specific handoff",
        "historical evidence, not proof of a new compaction",
        "only when a newer eventId",
        "handoff",
        "word",
        ".",
        "\n",
        " ",
    ]
)
_TEXTS = st.lists(_FRAGMENTS, max_size=6).map("".join)


def _request(prompt: str | None, messages: list[str]) -> ModelRequest:
    return ModelRequest(
        kind="summary",
        index=0,
        model="fake/fake-model",
        system_prompt=prompt,
        messages=[{"role": "user", "content": text} for text in messages],
    )


def _tracker() -> Tracker:
    simulation: Any = None  # the check reads no run
    return Tracker(simulation=simulation)


@given(st.none() | _TEXTS, st.lists(_TEXTS, max_size=3))
def test_the_prompts_answer_stands_for_the_text_only_when_it_finds_the_rule(
    prompt: str | None, messages: list[str]
) -> None:
    tracker = _tracker()
    request = _request(prompt, messages)
    text = _request_text(request)
    assert tracker.states_freshness_rule(request, text) == has_freshness_rule(text)
    # Asked again (the prompt's answer now remembered): the same.
    assert tracker.states_freshness_rule(request, text) == has_freshness_rule(text)


def test_a_rule_stated_only_in_the_messages_is_found_after_a_prompt_without_it() -> None:
    tracker = _tracker()
    without = _request("Summarise the session.", ["nothing here"])
    with_rule = _request("Summarise the session.", ["before", EVENT_FRESHNESS_RULE])
    assert not tracker.states_freshness_rule(without, _request_text(without))
    assert tracker.states_freshness_rule(with_rule, _request_text(with_rule))
    assert tracker.states_freshness_rule(_request(EVENT_FRESHNESS_RULE, []), EVENT_FRESHNESS_RULE)
