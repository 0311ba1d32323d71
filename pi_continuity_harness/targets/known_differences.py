"""Known, explained differences between the simulator's and real Pi's observations.

``pi-continuity-harness compare`` reports a difference as *explained* when the neutralisers
below remove it; every entry says why the difference is expected. A difference none of them
removes is *unexplained*: either the simulator is wrong (fix it: real Pi is right) or a new
entry belongs here, with its reason.

Each neutraliser takes a channel of the two normalised records (see :mod:`.comparison`) and
returns both values with that one difference taken out; it leaves anything else alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KNOWN_DIFFERENCES", "KnownDifference", "neutralisers"]


@dataclass(frozen=True)
class KnownDifference:
    id: str
    reason: str
    neutralise: Callable[[str, Any, Any], tuple[Any, Any]]


# ---------------------------------------------------------------------- path lengths
#: Numbers that are lengths or chars/4 estimates of texts that contain paths (the keys of
#: the normalised records, :mod:`.comparison`, that carry such numbers). Not a percentage:
#: a drift of a few tokens moves one by hundredths, so ``PATH_DRIFT`` would hide a real one.
_LENGTH_KEYS = frozenset(
    {
        "estimatedTokensAfter",
        "tokensBefore",
        "totalTokens",
        "summaryChars",
        "chars",
        "system_chars",
        "max_tokens",
    }
)
#: Largest drift a path length explains: Pi's installation directory appears three times in
#: the system prompt's ``docs`` section (about 70 characters, ~18 tokens, against the
#: simulator's fixed path here) and the two runs' work directories differ by a few characters
#: per mention.
PATH_DRIFT = 40


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= PATH_DRIFT
    return False


_NUMBER = re.compile(r"(\d+)")


def _align_text(sim: str, real: str) -> str:
    """``real`` when the two texts differ only in token-sized numbers (>= 1000) that are close
    (a Brief quoting an estimate, ``tokenCountAtTrigger: 6315`` against ``6332``); else ``sim``."""
    a, b = _NUMBER.split(sim), _NUMBER.split(real)
    if len(a) != len(b):
        return sim
    for index, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        if index % 2 == 0 or min(int(x), int(y)) < 1000 or not _close(int(x), int(y)):
            return sim
    return real


def _align_lengths(sim: Any, real: Any, key: str | None = None) -> Any:
    """``sim`` with every length-like number replaced by real Pi's where the two are close."""
    if key in _LENGTH_KEYS and _close(sim, real):
        return real
    if isinstance(sim, str) and isinstance(real, str) and sim != real:
        return _align_text(sim, real)
    if isinstance(sim, dict) and isinstance(real, dict):
        return {k: _align_lengths(v, real[k], k) if k in real else v for k, v in sim.items()}
    if isinstance(sim, list) and isinstance(real, list) and len(sim) == len(real):
        return [_align_lengths(s, r, key) for s, r in zip(sim, real, strict=True)]
    return sim


def _path_lengths(channel: str, sim: Any, real: Any) -> tuple[Any, Any]:
    return _align_lengths(sim, real), real


KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = (
    KnownDifference(
        "path-lengths",
        "Character counts and chars/4 token estimates of texts that contain paths differ by a few "
        f"units (at most {PATH_DRIFT}): Pi's system prompt names its installation directory "
        "(the simulator names a fixed one, about 18 tokens shorter here) and the two runs use "
        "different work directories, which Briefs, summaries and the system prompt's cwd mention. "
        "Affects estimatedTokensAfter, tokensBefore estimates, default usage (totalTokens), "
        "summaryChars, max_tokens clamps, message lengths, and estimates quoted in texts "
        "(a Brief's tokenCountAtTrigger after an overflow).",
        _path_lengths,
    ),
)


def neutralisers() -> list[tuple[str, Callable[[str, Any, Any], tuple[Any, Any]]]]:
    return [(k.id, k.neutralise) for k in KNOWN_DIFFERENCES]
