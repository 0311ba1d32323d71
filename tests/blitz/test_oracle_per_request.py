"""The blitz oracle reads the extension's messages per request (H49a, H50, H18).

:func:`~pi_continuity_harness.features.blitz_oracle.classify` tells the Call instruction, the
reminder and the emergency apart by when they come *within their request* (reference: Transfer
sequence 1, "One active request"; Deferral, reminder and emergency: one reminder, one emergency
per request; Status, cancellation and recovery: a cancel "immediately invalidates request,
Finish ID, reminder, retrieval"). A transcript of two requests read as one took the second
request's Call for a reminder (it was not the first message any more, and the first request's
template had been retrieved) or, after a turn at 90 %, for the emergency (a request was known).
"""

from __future__ import annotations

from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.blitz_oracle import Item

WINDOW = 200_000
CALL = f"# Session Handoff requested\n\nCall `{oracle.GET_TOOL}({{}})`, write the file, then Finish."
REMINDER = f"Reminder: call `{oracle.GET_TOOL}({{}})` if you have not yet, then `{oracle.FINISH_TOOL}`."
EMERGENCY = f"Emergency: stop now, fetch the template if missing, finalise it, call `{oracle.FINISH_TOOL}`."


def _user(index: int, text: str) -> Item:
    return Item(index, "user", text)


def _ext(index: int, text: str) -> Item:
    return Item(index, "extension", text)


def _reply(index: int, tokens: int, *calls: tuple[str, str]) -> Item:
    return Item(index, "assistant", "ok", tokens=tokens, stop="toolUse" if calls else "stop", calls=calls)


def _get(index: int) -> Item:
    return Item(index, "tool", "Finish ID: fid-1", tool=oracle.GET_TOOL)


def _first_request() -> list[Item]:
    """A request that got its Call, retrieved the template, was reminded and then cancelled."""
    return [
        _user(0, "work"),
        _reply(1, 10_000),
        _ext(2, CALL),
        _reply(3, 11_000, (oracle.GET_TOOL, "")),
        _get(4),
        _ext(5, REMINDER),
        _reply(6, 12_000),
    ]


def test_h49a_a_second_requests_call_is_not_read_as_a_reminder() -> None:
    """H49a (one reminder per request) and H18 (each request's Call): the second request's Call,
    its template response and its own reminder. Read as one transcript the second Call was the
    second reminder of the first request and the second request had no Call at all."""
    second = [_ext(7, CALL), _reply(8, 13_000, (oracle.GET_TOOL, "")), _get(9), _ext(10, REMINDER)]
    items = _first_request() + second
    kinds = [(m.item.index, m.kind) for m in oracle.classify(items, WINDOW, starts=[7])]
    assert kinds == [(2, "call"), (5, "reminder"), (7, "call"), (10, "reminder")]
    # The reading this replaces: one transcript, one request.
    merged = [(m.item.index, m.kind) for m in oracle.classify(items, WINDOW)]
    assert merged == [(2, "call"), (5, "reminder"), (7, "reminder"), (10, "reminder")]


def test_h50_a_second_requests_call_after_a_turn_at_90_percent_is_not_the_emergency() -> None:
    """H50 (the emergency is per request, after a completed turn at >= 90 %): a turn at 91 %
    after the cancel, then the second request's Call (an automatic request at the critical
    level comes exactly there, H58). Read as one, the first request was known, so the Call was
    taken for an emergency; its emergency after the next turn at 92 % is the second request's."""
    second = [_reply(7, 182_000), _ext(8, CALL), _reply(9, 184_000), _ext(10, EMERGENCY)]
    items = _first_request() + second
    kinds = [(m.item.index, m.kind) for m in oracle.classify(items, WINDOW, starts=[7])]
    assert kinds == [(2, "call"), (5, "reminder"), (8, "call"), (10, "emergency")]
    merged = [(m.item.index, m.kind) for m in oracle.classify(items, WINDOW)]
    assert merged[2] == (8, "emergency")


def test_h70b_what_a_request_sends_after_its_end_stays_its_own() -> None:
    """H70b (a cancel invalidates the reminder): the cut is where the next request began, so a
    reminder the first request still sends after its cancel, before the next start, is read as
    the first request's reminder (and fails its rule), never as the next request's Call."""
    late = [_reply(7, 12_500), _ext(8, REMINDER)]
    second = [_ext(9, CALL)]
    items = _first_request() + late + second
    kinds = [(m.item.index, m.kind) for m in oracle.classify(items, WINDOW, starts=[9])]
    assert kinds == [(2, "call"), (5, "reminder"), (8, "reminder"), (9, "call")]


def test_positions_before_the_items_and_repeated_starts_change_nothing() -> None:
    """A part of a transcript (``since``) whose request began before it, and a start given twice,
    read as before: only a start within the items cuts them."""
    items = _first_request()[2:]
    assert [m.kind for m in oracle.classify(items, WINDOW, starts=[0, 1, 1])] == ["call", "reminder"]
    assert [m.kind for m in oracle.classify(items, WINDOW)] == ["call", "reminder"]
