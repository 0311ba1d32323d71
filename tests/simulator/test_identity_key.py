"""``identity``: the key the identity memos use instead of ``id()`` (scenario/identity_memo.py)."""

from __future__ import annotations

import sys
from typing import Any

from pi_continuity_harness.scenario.identity_memo import IdentityMemo, identity

_SEEN: list[str] = []
_LISTENING: list[bool] = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _LISTENING[0] and event == "builtins.id":
        _SEEN.append(event)


def test_identity_tells_every_live_object_apart_as_id_does() -> None:
    objects: list[Any] = [{}, {}, [], [], (), "a", 1, None, object(), {"a": 1}]
    objects.extend({"n": n} for n in range(10_000))
    keys = [identity(o) for o in objects]
    ids = [id(o) for o in objects]
    assert len(set(keys)) == len(set(ids))
    assert [identity(o) for o in objects] == keys  # stable for a live object


def test_identity_raises_no_audit_event() -> None:
    """The filesystem monitor's audit hook runs for every ``id()``; ``identity`` must not
    raise one (reverting it to ``id`` makes this fail)."""
    sys.addaudithook(_hook)  # hooks cannot be removed: this one listens only here
    _SEEN.clear()
    _LISTENING[0] = True
    try:
        identity({})
        memo: IdentityMemo[int] = IdentityMemo()
        message = {"role": "user"}
        assert memo.get(message, lambda: 1) == 1
        assert memo.get(message, lambda: 2) == 1
        assert memo.get({"role": "user"}, lambda: 3) == 3  # equal but distinct: its own entry
    finally:
        _LISTENING[0] = False
    assert _SEEN == []
    _LISTENING[0] = True
    try:
        id(message)
    finally:
        _LISTENING[0] = False
    assert _SEEN == ["builtins.id"]  # the hook does see id()
