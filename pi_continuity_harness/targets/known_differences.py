"""Known, explained differences between the simulator's and real Pi's observations.

``pi-continuity-harness compare`` reports a difference as *explained* when the neutralisers
below remove it; every entry says why the difference is expected. A difference none of them
removes is *unexplained*: either the simulator is wrong (fix it: real Pi is right) or a new
entry belongs here, with its reason, naming the exact key and value it removes, never a
numeric band.

Each neutraliser takes a channel of the two normalised records (see :mod:`.comparison`) and
returns both values with that one difference taken out; it leaves anything else alone.

The ledger is empty. Its one former entry, ``path-lengths`` (±40 on every length and chars/4
estimate), is gone: both targets now show Pi paths of the same lengths (the machine root and
Pi's package directory, ``scenario/layout.py``), so estimates, ``max_tokens`` and summary
lengths agree to the character.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KNOWN_DIFFERENCES", "KnownDifference", "neutralisers"]


@dataclass(frozen=True)
class KnownDifference:
    id: str
    reason: str
    neutralise: Callable[[str, Any, Any], tuple[Any, Any]]


KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = ()


def neutralisers() -> list[tuple[str, Callable[[str, Any, Any], tuple[Any, Any]]]]:
    return [(k.id, k.neutralise) for k in KNOWN_DIFFERENCES]
