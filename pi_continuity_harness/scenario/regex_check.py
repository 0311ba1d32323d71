"""Regular expressions a scenario may hold: ones Python's ``re`` matches in bounded time.

A scenario picks a tool path from the conversation with ``{{match:REGEX}}`` and answers a dialog
``when`` its text matches, or by a ``select: /REGEX/``. Python's ``re`` backtracks: a repeat of
something that can itself match in more than one way (``(a+)+``, ``(a|a)*``, ``(\\w+\\s?)*``)
takes exponential time on a text that almost matches, and no budget of the simulator counts the
time of a search (``re`` has no step limit, and a wall-clock timeout would break byte-for-byte
replay). So such a pattern is refused when the scenario loads, naming the field: a repeat (``*``,
``+``, ``{n,}`` or ``{n,m}`` with ``m > 1``) may not contain a repeat of a variable count (``+``,
``?``, ``{2,5}``; ``{2}`` is fine) or an alternation.
That is a conservative rule (``(?:ab|cd)+`` is refused though it is linear); every pattern of the
harness's own features and examples keeps to it.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

# The parser behind ``re`` (Python 3.11+; ``sre_parse`` is its deprecated alias), which typeshed
# does not describe: the pattern's tree, read here and nowhere else.
_sre_constants: Any = importlib.import_module("re._constants")
_sre_parser: Any = importlib.import_module("re._parser")

__all__ = ["regex_problem"]

_REPEATS = (_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT, _sre_constants.POSSESSIVE_REPEAT)


@functools.lru_cache(maxsize=1024)
def regex_problem(pattern: str, flags: int = 0) -> str | None:
    """Why ``pattern`` may not be a scenario's regular expression, as the rest of a sentence
    (``"not a regular expression: ..."``, ``"a pattern that may backtrack for ever: ..."``), or
    None.

    Remembered per pattern and flags (the answer depends on nothing else, and an exception is
    not remembered): every blitz seed's generated scenario validates the same few
    ``{{match:...}}`` placeholders again (``re``'s own cache keeps the compiled pattern, not the
    parse this reads), and parsing them was ~6 % of a blitz exploration's CPU time (issue 16)."""
    try:
        re.compile(pattern, flags)
        parsed = _sre_parser.parse(pattern, flags)
    except re.error as error:
        return f"not a regular expression: {error}"
    if _nested_repeat(list(parsed), inside_repeat=False):
        return (
            "a pattern that may backtrack for ever: a repeat (*, +, {n,}) of something that can "
            "itself match in more than one way (a repeat of a variable count, or an alternation |); "
            "write it without"
        )
    return None


def _parts(op: Any, av: Any) -> list[list[Any]]:
    """The sub-patterns of a node other than a repeat (groups, alternatives, lookarounds)."""
    if op is _sre_constants.BRANCH:
        return [list(branch) for branch in av[1]]
    if op is _sre_constants.SUBPATTERN:
        return [list(av[-1])]
    if op in (_sre_constants.ASSERT, _sre_constants.ASSERT_NOT):
        return [list(av[1])]
    if op is _sre_constants.GROUPREF_EXISTS:
        return [list(part) for part in av[1:] if part is not None]
    if op is _sre_constants.ATOMIC_GROUP:
        return [list(av)]
    return []


def _nested_repeat(items: list[Any], *, inside_repeat: bool) -> bool:
    """Whether ``items`` (a parsed pattern) holds, inside a repeat, a repeat of a variable count
    or an alternation (``inside_repeat``: ``items`` is itself repeated)."""
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            unbounded = high is _sre_constants.MAXREPEAT
            if inside_repeat and (unbounded or high > low):  # a count of its own to choose
                return True
            if _nested_repeat(list(sub), inside_repeat=inside_repeat or unbounded or high > 1):
                return True
            continue
        if op is _sre_constants.BRANCH and inside_repeat:
            return True
        if any(_nested_repeat(part, inside_repeat=inside_repeat) for part in _parts(op, av)):
            return True
    return False
