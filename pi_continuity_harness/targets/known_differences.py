"""The ledger: what the comparison of the two targets does not compare, and why.

A difference between the simulator and real Pi 1.6 is a bug in the simulator, never a
tolerance. What remains here is only what *cannot* be the same on the two targets, stated
exactly: which keys, which values. :mod:`.comparison` replaces exactly these values by a
placeholder before it compares (the key stays, so its presence and position are compared;
``setup-failure-timing`` alone adds a key, to real Pi's record, where a race of pi-ai's left it
out), and compares everything else as it is: there is no numeric band anywhere.

:data:`KNOWN_DIFFERENCES` can also name a difference the comparison reports as *explained*
(a neutraliser applied to one channel of the two records); it is empty: every difference the
suite shows is either modelled or one of the :data:`UNCOMPARED` values.

Its one former entry, ``path-lengths`` (±40 on every length and chars/4 estimate), is gone:
both targets show Pi paths of the same lengths (the machine root and Pi's package directory,
``scenario/layout.py``), so estimates, ``max_tokens`` and summary lengths agree to the character.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KNOWN_DIFFERENCES", "UNCOMPARED", "KnownDifference", "Uncompared", "neutralisers"]


@dataclass(frozen=True)
class Uncompared:
    """Values the comparison replaces by ``placeholder``: exactly ``where``, for ``reason``."""

    id: str
    where: str
    placeholder: str
    reason: str


UNCOMPARED: tuple[Uncompared, ...] = (
    Uncompared(
        "paths",
        "absolute paths of the scenario's directories (`$WORK`, `$PROJECT`, `$AGENT`, "
        "`$SESSIONS`) and of Pi's installation (`$PI_PACKAGE`) inside any text or name",
        "$WORK/...",
        "The two targets run in different directories. Each path has the same length on both "
        "targets (``scenario/layout.py``: a machine root of ``WORK_PATH_LENGTH`` characters, Pi's "
        "package directory ``<root>/pi-package``), so every character count and estimate that "
        "includes one is compared.",
    ),
    Uncompared(
        "wall-clock",
        "the value of every key named `timestamp`, `createdAt` or `updatedAt`; ISO-8601 times "
        "(`2026-01-01T00:00:00.000Z`, and their file-name form with `-`) inside any text or name",
        "<ts>",
        "Real Pi reads the wall clock (`Date.now()`, equal values whenever two reads fall in the "
        "same millisecond); the simulator reads a virtual clock that advances at least 1 ms per "
        "read, so two runs can agree on neither the values nor which of them are equal. The "
        "orders Pi's logic reads (usage older than a compaction) are checked by the simulator's "
        "own fidelity tests instead.",
    ),
    Uncompared(
        "durations",
        "the value of every key named `durationMs` (assistant messages, tool results, "
        "`tool_execution_end`) and of `wall_time_seconds` (bash's `structuredContent`)",
        "<ms>",
        "Real elapsed time (pi-ai `utils/event-stream.js:114-118`, pi-agent-core "
        "`agent-loop.js:568-597`, bash.js:313) against virtual time.",
    ),
    Uncompared(
        "random-ids",
        "the values of UUIDs (session ids, Brief event ids) and of 8-hex-digit entry ids; each "
        "is numbered by first appearance (`<uuid1>`, `<id1>`), so which values are equal, "
        "every parent link and every reference, is compared; a UUID cut short in its last group "
        "is its whole UUID's number and its length (`<uuid1>[:35]`)",
        "<uuidN>/<idN>",
        "Pi draws them from `crypto.randomUUID()`; the simulator from its seeded source.",
    ),
    Uncompared(
        "digests",
        "hexadecimal runs of 16 to 64 digits inside texts and names (SHA-256 of a Brief, the "
        "random suffix of an atomic write's temporary file)",
        "<digest>",
        "A digest of a text that holds times or ids differs with them; a temporary file's suffix is random.",
    ),
    Uncompared(
        "streaming-snapshot",
        "`usage` of a `message_update` event, and `content` and `usage` of the `message` of an "
        "assistant `message_start` event",
        "<streaming>",
        "pi-agent-core emits these with a shallow copy of the message pi-ai is still filling "
        "in (agent-loop.js:288-303), and Pi's RPC mode writes an event only after every "
        "extension handler before it has run: how much of the reply had arrived by then "
        "depends on timing (the usage of the first deltas is sometimes the final usage). The "
        "deltas themselves (`assistantMessageEvent`) and every other field are compared.",
    ),
    Uncompared(
        "bash-output-chunks",
        "consecutive `bash_execution_update` events of one command (the same `id`): compared as "
        "one event, their `delta`s joined",
        "(joined)",
        "Real Pi streams a command's output as the pipe delivers it (`onData` per read, "
        "bash-executor.js:60-70): bash's builtins write line by line (its stdout is line "
        "buffered), and whether two writes arrive in one read depends on timing; the simulator's "
        "shell runs nothing and streams the scenario's output as one delta. The text, where it "
        "comes among the other events, and the id are compared.",
    ),
    Uncompared(
        "setup-failure-timing",
        "on real Pi only: whether a message made by pi-ai's `createSetupErrorMessage` (the keys "
        "`role`, `content`, `api`, `provider`, `model`, `usage`, `stopReason`, `errorMessage`, "
        "`timestamp` in this order: a reply whose stream failed before it streamed, such as the "
        "turn after a `ctx.compact()` whose signal is already aborted) has a `durationMs`; one "
        "without is compared as one with `<ms>` after its `timestamp`",
        "<ms>",
        "`lazyStream` (pi-ai api/lazy.js:46-47) reads `Date.now()` for the message's `timestamp` "
        "and then makes the event stream, which reads it again (utils/event-stream.js:89) and "
        "times a message only when its `timestamp` is not earlier (:115-117): when the clock "
        "moves to the next millisecond between the two reads, Pi leaves the message untimed. It "
        "was seen once, in a full test run (6 December 2026). The "
        "simulator always times it (the two reads are one virtual millisecond), and is held to "
        "it: only real Pi's record gets the placeholder.",
    ),
)


@dataclass(frozen=True)
class KnownDifference:
    id: str
    reason: str
    neutralise: Callable[[str, Any, Any], tuple[Any, Any]]


#: Differences reported as explained (none: see the module docstring).
KNOWN_DIFFERENCES: tuple[KnownDifference, ...] = ()


def neutralisers() -> list[tuple[str, Callable[[str, Any, Any], tuple[Any, Any]]]]:
    return [(k.id, k.neutralise) for k in KNOWN_DIFFERENCES]
