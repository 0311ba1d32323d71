"""The scripted model's Brief quotes the last user text's first 240 characters with every
whitespace run as one space (``continuity_replies._task_line``), splitting only the words that
can reach the line (a synthesis request's last user text is the whole transcript)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.scenario.continuity_replies import _task_line

#: Words and every kind of whitespace ``str.split`` knows (ASCII, the separators ``\x1c``-``\x1f``,
#: NEL, no-break and em spaces).
_TEXT = st.lists(
    st.sampled_from(["a", "bc", "é", "wordy", " ", "\n", "\t", "\x1c", "\x85", "\u00a0", "\u2003", "  "]),
    max_size=700,
).map("".join)


@given(_TEXT)
def test_the_task_line_is_the_whole_texts_normalised_prefix(text: str) -> None:
    assert _task_line(text) == (" ".join(text.split())[:240] or "None known.")


def test_the_task_line_of_many_short_words_and_of_a_blank_text() -> None:
    text = "a " * 1000
    assert _task_line(text) == ("a " * 120)[:240]
    assert _task_line(" \n\t ") == "None known."
