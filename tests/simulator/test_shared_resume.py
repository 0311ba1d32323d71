"""``ScriptedModelService._shared`` takes over the leading messages of the same kind's previous
request (the very objects it gave back then) without looking each up again; what it gives is
what the lookup of every message gives, including for a message ``marshal`` refused before."""

from __future__ import annotations

from typing import Any, cast

from pi_continuity_harness.scenario.model_script import ModelScript
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.simulator.model_service import ScriptedModelService


class _Opaque:
    """Not plain data: ``marshal`` refuses a message holding it."""


def _service() -> ScriptedModelService:
    return ScriptedModelService(
        script=ModelScript(), trace=Trace(lambda: 0, "/w"), clock=cast(Any, None), catalog=cast(Any, None)
    )


def _lookup_each(service: ScriptedModelService, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What ``_shared`` gave before it resumed: every message looked up."""
    ids = service._shared_ids
    return [m if ids.get(id(m)) is m else service._share(m) for m in messages]


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def test_a_resent_conversation_gives_what_looking_up_every_message_gives() -> None:
    service, reference = _service(), _service()
    user = {"role": "user", "content": "hello"}
    first = [user, {"role": "assistant", "content": "hi"}]
    shared = service._shared(first, ("agent", "wire"))
    assert _same(shared, first)
    # The next request re-sends the result's objects and an equal copy of one of them.
    second = [*shared, {"role": "user", "content": "hello"}, {"role": "user", "content": "new"}]
    again = service._shared(second, ("agent", "wire"))
    assert again[2] is user  # the equal copy is the recorded one
    for messages in (first, second):
        assert [m["content"] for m in _lookup_each(reference, messages)] == [
            m["content"] for m in service._shared(list(messages), ("agent", "parsed"))
        ]
    # Another list of objects (an edited history) is looked up from its first message on.
    edited = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "other"}]
    result = service._shared(edited, ("agent", "wire"))
    assert result[0] is user and result[1] is edited[1]


def test_a_message_marshal_refused_is_offered_again() -> None:
    """Resuming past a message that was not registered would keep it unshared after it became
    plain data; it must be looked up again, as every request looked it up before."""
    service = _service()
    plain = {"role": "user", "content": "x"}
    odd: dict[str, Any] = {"role": "user", "content": "x", "extra": _Opaque()}
    first = service._shared([plain, odd], ("agent", "wire"))
    assert first[1] is odd  # refused: kept as it is, not registered
    del odd["extra"]  # now equal to ``plain``
    second = service._shared(list(first), ("agent", "wire"))
    assert second[0] is plain and second[1] is plain
    assert _same(second, _lookup_each(_service_with(plain), [plain, odd]))


def _service_with(message: dict[str, Any]) -> ScriptedModelService:
    service = _service()
    service._shared([message], ("agent", "wire"))
    return service


class _CountingIds(dict[int, dict[str, Any]]):
    """``_shared_ids`` that counts its lookups."""

    lookups = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)


def test_a_new_leading_system_message_equal_to_the_last_one_does_not_end_the_prefix() -> None:
    """A body's leading system message is a new object in every request (``request_body``):
    shared first, it is the previous result's, and the messages after it are taken over
    without a lookup each. What comes out is what looking up every message gives."""
    service, reference = _service(), _service()
    ids = _CountingIds()
    service._shared_ids = ids
    conversation = [{"role": "user", "content": f"turn {n}"} for n in range(20)]
    first = service._shared([{"role": "system", "content": "prompt"}, *conversation], ("agent", "wire"))
    second_request = [{"role": "system", "content": "prompt"}, *first[1:], {"role": "user", "content": "new"}]
    ids.lookups = 0
    second = service._shared(list(second_request), ("agent", "wire"))
    assert ids.lookups <= 4  # the head and the new message, not the 20 before it
    assert second[0] is first[0] and _same(second[1:21], first[1:])
    assert [m["content"] for m in second] == [m["content"] for m in _lookup_each(reference, second_request)]
    # Another system prompt: shared anew, and the rest is looked up as before.
    third_request = [{"role": "system", "content": "other"}, *second[1:]]
    third = service._shared(list(third_request), ("agent", "wire"))
    assert third[0] is third_request[0] and _same(third[1:], second[1:])
    # Back to the first prompt: its recorded message, then the prefix of the last result.
    fourth = service._shared([{"role": "system", "content": "prompt"}, *third[1:]], ("agent", "wire"))
    assert fourth[0] is first[0] and _same(fourth[1:], third[1:])
