"""What was made from an object, remembered by the object's identity.

The simulated model and the exploration's invariants read one growing conversation again and
again: every model request re-sends the whole conversation, made of the same message objects,
which never change once made. Converting a message to the wire, parsing a wire message back,
searching a message's text: each is done once per message and run, not once per request
(issue 16). Equal-but-distinct objects are distinct entries; a caller that wants them to be
one object shares them first (``ScriptedModelService._share``).

Each entry holds its object, so the object's ``id`` cannot be reused by another object while
the entry is there; ``limit`` bounds a memo that outlives a run (the oldest entry goes first).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

__all__ = ["IdentityMemo", "identity", "same_objects_prefix"]

#: ``id(obj)`` for a key, without ``id()``'s audit event: ``object.__hash__`` is the object's
#: address rotated by four bits (CPython ``Python/pyhash.c`` ``_Py_HashPointer``, which
#: ``object.__hash__`` is for every object, a dict or a list included), so two live objects
#: never share it, as they never share an ``id``. Only equality and membership of these keys
#: are ever used (never their order, nor a set of them iterated). The filesystem monitor's
#: audit hook (``scenario/fs_monitor.py``) is called for every ``id()``: the memos' lookups
#: were 143,000 of the 203,000 audit events of a Pi Session Continuity exploration (40 seeds)
#: and 230,000 in blitz, about 0.3 us each against 0.06 us for this (issue 16, December 2026).
identity: Final = object.__hash__

V = TypeVar("V")


def _unshared(message: dict[str, Any]) -> dict[str, Any]:
    return message


@dataclass
class IdentityMemo(Generic[V]):
    """``get(obj, make, key)``: ``make()``'s value for ``obj`` (and ``key``), made once.

    ``share`` is for the makers of message dicts to apply to what they make before it is
    remembered (the simulated model makes equal messages one object); it changes nothing by
    default."""

    share: Callable[[dict[str, Any]], dict[str, Any]] = _unshared
    limit: int | None = None
    _known: dict[tuple[int, Hashable], tuple[object, V]] = field(default_factory=dict, repr=False)

    def get(self, obj: object, make: Callable[[], V], key: Hashable = None) -> V:
        known = self._known.get((identity(obj), key))
        if known is not None:
            return known[1]
        value = make()
        if self.limit is not None and len(self._known) >= self.limit:
            del self._known[next(iter(self._known))]
        self._known[(identity(obj), key)] = (obj, value)
        return value


def same_objects_prefix(now: Sequence[object], before: Sequence[object]) -> int:
    """How many leading items of ``now`` are the very objects of ``before`` (``is``): where a
    request that re-sends a conversation parts from the previous one. The resumed walks of a
    request (``chat_wire.ConvertResume``, ``provider.TransformResume``, ``provider.WireResume``)
    take over the previous result up to there."""
    common = 0
    for item, previous in zip(now, before, strict=False):
        if item is not previous:
            break
        common += 1
    return common
