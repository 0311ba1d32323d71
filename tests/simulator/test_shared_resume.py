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
