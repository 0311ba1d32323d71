"""The incremental request estimate equals pi-ai's full estimate, however the context grows."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.simulator.messages import (
    RequestEstimate,
    convert_to_llm,
    estimate_request_context_tokens,
)

_usage = st.fixed_dictionaries(
    {"input": st.integers(0, 5000), "output": st.integers(0, 500), "totalTokens": st.integers(0, 6000)}
)
_stamp = st.one_of(st.integers(0, 100), st.none())


def _message(role: str, text: str, stamp: int | None, usage: dict[str, int], stop: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if stamp is not None:
        message["timestamp"] = stamp
    if role == "assistant":
        message["usage"] = usage
        message["stopReason"] = stop
    if role == "compactionSummary":
        return {"role": role, "summary": text, "tokensBefore": 1, "timestamp": stamp}
    return message


_messages = st.lists(
    st.builds(
        _message,
        st.sampled_from(["user", "assistant", "toolResult", "system", "compactionSummary"]),
        st.text(max_size=40),
        _stamp,
        _usage,
        st.sampled_from(["stop", "toolUse", "error", "aborted"]),
    ),
    max_size=25,
)


@given(_messages, st.lists(st.integers(0, 25), max_size=6))
def test_incremental_request_estimate_equals_the_full_estimate_at_every_prefix(
    messages: list[dict[str, Any]], cuts: list[int]
) -> None:
    estimate = RequestEstimate()
    for cut in [*sorted(cuts), len(messages)]:
        prefix = messages[: min(cut, len(messages))]
        assert estimate.estimate(prefix) == estimate_request_context_tokens(convert_to_llm(prefix))


@given(_messages, _messages)
def test_a_rebuilt_projection_starts_over(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
    estimate = RequestEstimate()
    estimate.estimate(first)
    assert estimate.estimate(second) == estimate_request_context_tokens(convert_to_llm(second))
