"""A user message whose text an ``input`` transform left undefined, ``null`` or a number, as
Pi 1.6.0 stores it and as pi-ai's estimate and ``convertMessages`` read it (the real-Pi test is
``realpi/test_differential_api_surface.py``, ``test_a_user_message_sent_*``)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pi_continuity_harness.scenario.transcript import content_text
from pi_continuity_harness.simulator.messages import (
    UNDEFINED,
    JsTypeError,
    RequestEstimate,
    estimate_request_context_tokens,
    estimate_tokens,
    user_message,
)
from pi_continuity_harness.simulator.provider import wire_messages

UNDEFINED_LENGTH = "Cannot read properties of undefined (reading 'length')"
NULL_LENGTH = "Cannot read properties of null (reading 'length')"


def test_the_message_has_no_text_key_for_undefined_and_keeps_null_and_numbers() -> None:
    assert user_message(UNDEFINED, 1)["content"] == [{"type": "text"}]
    assert user_message(None, 1)["content"] == [{"type": "text", "text": None}]
    assert user_message(5, 1)["content"] == [{"type": "text", "text": 5}]


@pytest.mark.parametrize(("text", "error"), [(UNDEFINED, UNDEFINED_LENGTH), (None, NULL_LENGTH)])
def test_pi_ais_estimate_throws_v8s_error_and_the_incremental_one_starts_over(text: Any, error: str) -> None:
    messages = [user_message("before", 1), user_message(text, 2)]
    with pytest.raises(JsTypeError, match=r"^Cannot read"):
        estimate_request_context_tokens(messages)
    estimate = RequestEstimate()
    for _ in range(2):
        with pytest.raises(JsTypeError) as raised:
            estimate.estimate(messages)
        assert str(raised.value) == error
    assert estimate.estimate(messages[:1]) == estimate_request_context_tokens(messages[:1])
    # convertMessages' filter reads the same length (openai-completions.js:927).
    with pytest.raises(JsTypeError, match=r"^Cannot read"):
        wire_messages(messages)


def test_a_numeric_text_makes_the_estimates_nan_and_is_not_sent() -> None:
    message = user_message(5, 1)
    assert math.isnan(estimate_request_context_tokens([message]))
    assert math.isnan(estimate_tokens(message))
    assert wire_messages([message, user_message("x", 2)]) == [
        {"role": "user", "content": [{"type": "text", "text": "x"}]}
    ]
    # Pi's own estimate skips a falsy text (compaction.js:188): undefined, null, 0.
    assert estimate_tokens(user_message(UNDEFINED, 1)) == 0
    assert estimate_tokens(user_message(None, 1)) == 0
    assert estimate_tokens(user_message(0, 1)) == 0


def test_content_text_joins_as_javascript_does() -> None:
    blocks = [{"type": "text"}, {"type": "text", "text": None}, {"type": "text", "text": 5}]
    blocks += [{"type": "text", "text": True}, {"type": "text", "text": 2.0}, {"type": "text", "text": "s"}]
    assert content_text(blocks, "|") == "||5|true|2|s"
