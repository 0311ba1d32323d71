"""What was made from an object, remembered by the object's identity.

The simulated model and the exploration's invariants read one growing conversation again and
again: every model request re-sends the whole conversation, made of the same message objects,
which never change once made. Converting a message to the wire, parsing a wire message back,
searching a message's text: each is done once per message and run, not once per request
(issue 16). Equal-but-distinct objects are distinct entries; a caller that wants them to be
one object shares them first (``ScriptedModelService._share``).

Each entry holds its object, so the object's ``id`` cannot be reused by another object while
the entry is there; ``limit`` bounds a memo that outlives a run (the oldest entry goes first).
A module's memo of one run's objects is made with :func:`run_memo`, and :func:`forget_runs`
empties every such memo when a run starts: no entry of a finished run is ever found again (its
objects are its own), and each one held its message, so one exploration process grew by
0.5 MiB a seed until the limits were reached (454 MiB after 600 seeds; issue 16's millions of
seeds per worker).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

__all__ = ["IdentityMemo", "forget_runs", "identity", "run_memo", "same_objects_prefix"]

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
        memo = self._known  # one dict throughout: :meth:`clear` (another thread's) replaces it
        known = memo.get((identity(obj), key))
        if known is not None:
            return known[1]
        value = make()
        if self.limit is not None and len(memo) >= self.limit:
            del memo[next(iter(memo))]
        memo[(identity(obj), key)] = (obj, value)
        return value

    def clear(self) -> None:
        """Forget every entry (and let go of every object held)."""
        self._known = {}

    def __len__(self) -> int:
        return len(self._known)


#: The memos made by :func:`run_memo`, emptied by :func:`forget_runs`.
_RUN_MEMOS: list[IdentityMemo[Any]] = []


def run_memo(limit: int) -> IdentityMemo[Any]:
    """A module-level memo of objects that belong to one run (a run's messages): emptied by
    :func:`forget_runs` when the next run starts, and bounded by ``limit`` within a run."""
    memo: IdentityMemo[Any] = IdentityMemo(limit=limit)
    _RUN_MEMOS.append(memo)
    return memo


def forget_runs() -> None:
    """Empty every :func:`run_memo`: called where a run starts (the simulator's ``Simulation``,
    the real-Pi target's fake model server). A memo holds values that are pure functions of
    its objects, so emptying one in the middle of a run (two runs in one process) only costs
    making them again."""
    for memo in _RUN_MEMOS:
        memo.clear()


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
