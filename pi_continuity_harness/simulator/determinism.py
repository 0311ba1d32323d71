"""One seeded random source and one virtual clock for every id, timestamp and choice.

Same scenario and seed give byte-identical traces, session files and artifacts. That holds
for extension code too: while the simulator runs, :func:`deterministic_environment`
points ``time.time``/``time.time_ns`` at the virtual clock and ``os.urandom`` (hence
``uuid.uuid4()``) and ``random``'s own reference to it (hence ``secrets`` and
``random.SystemRandom``) at the seeded source, the way FoundationDB or madsim virtualise a
process; ``random``'s module functions and ``tempfile``'s names draw from generators of their
own, seeded from the run's seed (so they move no id of the run). ``datetime.now()`` reads the
C clock and cannot be virtualised; extensions should derive wall time from ``time.time()``.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

__all__ = [
    "EPOCH_MS",
    "LoopClock",
    "SeededRandom",
    "VirtualClock",
    "deterministic_environment",
    "iso_from_ms",
]

#: Virtual wall clock at loop time zero: 2026-01-01T00:00:00.000Z.
EPOCH_MS = 1_767_225_600_000


def iso_from_ms(ms: int) -> str:
    """JavaScript's ``new Date(ms).toISOString()``: millisecond precision, ``Z`` suffix.

    The date and time of the whole second are formatted once per second (every entry, event
    and status line asks, many in the same virtual second: 1.4 % of a blitz exploration, issue
    16); the same text as formatting ``ms / 1000`` (checked on 5 million values)."""
    return _iso_second(ms // 1000) + f"{ms % 1000:03d}Z"


@functools.lru_cache(maxsize=4096)
def _iso_second(second: int) -> str:
    return datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.")


class LoopClock(Protocol):
    """What :class:`VirtualClock` needs of the event loop (``VirtualTimeEventLoop``)."""

    def time(self) -> float: ...

    def time_ms(self) -> int:
        """``round(time() * 1000)``."""
        ...

    def catch_up(self, ms: int) -> None:
        """Move the clock to ``ms`` milliseconds, never back."""
        ...


class VirtualClock:
    """Wall time that is the virtual event loop's time, strictly increasing per read.

    Every timestamp read advances by at least one millisecond, so two entries never share
    a timestamp. Pi compares timestamps (``assistant.timestamp <= compaction.timestamp``
    decides whether a message or its usage predates a compaction, AS:2496-2615). On real Pi
    two reads can share a millisecond: an overflow retry that began in its compaction's
    millisecond was taken for a message from before it, and its second overflow went
    unreported (1 of 36 compactions, 6 December 2026). The harness's observer waits out the
    compaction's millisecond on real Pi (``targets/realpi/observer.ts`` ``afterThisMillisecond``),
    so both targets take the branch of a later message
    (``tests/realpi/test_differential_compaction_millisecond.py``).

    A read that has to hand out a millisecond ahead of the loop's time moves the loop's clock
    there (``catch_up``): time moves with the work, as on a real machine, where Pi's wall clock
    (``Date.now()``) and its monotonic clock (``performance.now()``, which times a response in
    pi-ai ``dist/utils/event-stream.js:89-90,117`` and a tool in pi-agent-core
    ``dist/agent-loop.js:571-572``) and timers advance together. Before, the loop stood still
    while the wall clock ran ahead of it one millisecond per read; a wait measured across the
    loop's timers came out short by that lead (a 5 s receiver turn showed blitz's "Handoff Time
    0:04"). Now ``now_ms() - (EPOCH_MS + loop time)`` is 0 after every read: a 5 s wait between
    two reads measures 5000 ms, and a timer scheduled after a read is due after it.
    """

    def __init__(self, loop: LoopClock, epoch_ms: int = EPOCH_MS) -> None:
        self._loop = loop
        self._epoch_ms = epoch_ms
        self._last_ms = epoch_ms - 1
        #: Virtual milliseconds since the run started (for traces): the loop's own
        #: ``time_ms``, called straight (every trace record reads it; a method of this class
        #: around it was a second call per record, issue 16).
        self.loop_ms: Callable[[], int] = loop.time_ms

    def now_ms(self) -> int:
        """``Date.now()``: a fresh, strictly increasing millisecond timestamp; when it is ahead
        of the loop's time, the loop's clock is moved to it (the read took that long)."""
        epoch_ms = self._epoch_ms
        loop_ms = self.loop_ms()
        # ``max(epoch_ms + loop_ms, last + 1)``, the loop caught up when it is the second.
        ms = self._last_ms + 1
        if ms > epoch_ms + loop_ms:
            self._loop.catch_up(ms - epoch_ms)
        else:
            ms = epoch_ms + loop_ms
        self._last_ms = ms
        return ms

    def now_iso(self) -> str:
        return iso_from_ms(self.now_ms())

    def current_ms(self) -> int:
        """The wall time now, without handing out a timestamp (a file's modification time:
        reading it must not move the next ``Date.now()``, or every later id and timestamp
        would shift). The loop's time is never behind the last timestamp handed out."""
        return self._epoch_ms + self.loop_ms()

    def peek_ms(self) -> int:
        """The last timestamp handed out (no advance)."""
        return self._last_ms


#: The bytes of a generator's state in a ``random.Random`` object: CPython's ``RandomObject``
#: (``Modules/_randommodule.c``) holds ``int index; uint32_t state[624]`` right after the object
#: header; ``gauss_next``, the rest of what ``getstate`` returns, is an attribute.
_STATE_BYTES = 4 + 624 * 4


def _state_view(generator: random.Random) -> memoryview:
    """The bytes of ``generator``'s state, read and written in place (see :func:`_views_work`).
    The view does not keep ``generator`` alive: its holder must."""
    import ctypes  # noqa: PLC0415  (only where the views work: CPython, checked first)

    array = (ctypes.c_char * _STATE_BYTES).from_address(id(generator) + object.__basicsize__)
    return memoryview(array).cast("B")


def _swap_states(a: random.Random, a_view: memoryview, b: random.Random, b_view: memoryview) -> None:
    """Exchange the states of two generators (what ``getstate``/``setstate`` both ways would
    do, without the two tuples of 625 numbers)."""
    saved = bytes(a_view)
    a_view[:] = b_view
    b_view[:] = saved
    a.gauss_next, b.gauss_next = b.gauss_next, a.gauss_next  # type: ignore[attr-defined]


@functools.cache
def _views_work() -> bool:
    """Whether a generator's state can be read and written in place here (:func:`_state_view`):
    CPython with ``ctypes``, a ``RandomObject`` of the size that layout makes, and two
    generators whose states, exchanged so, read back exchanged through ``getstate``. Elsewhere
    :class:`deterministic_environment` swaps the states through ``getstate``/``setstate``."""
    if sys.implementation.name != "cpython":
        return False
    try:
        import _random  # noqa: PLC0415
        import ctypes  # noqa: F401, PLC0415
    except ImportError:  # pragma: no cover - CPython without ctypes
        return False
    if not 0 <= _random.Random.__basicsize__ - object.__basicsize__ - _STATE_BYTES < 8:
        return False  # pragma: no cover - another layout
    a, b = random.Random("a"), random.Random("b")
    b.random()
    a.gauss(0.0, 1.0)  # a ``gauss_next`` and an index of its own each
    first, second = a.getstate(), b.getstate()
    _swap_states(a, _state_view(a), b, _state_view(b))
    return a.getstate() == second and b.getstate() == first


@functools.cache
def _process_generator() -> tuple[random.Random, memoryview | None]:
    """The generator behind ``random``'s module functions (``random._inst``: ``random.random``
    and the others are its bound methods, whatever imported them), and its state's bytes when
    :func:`_views_work`."""
    generator: random.Random = random._inst
    return generator, _state_view(generator) if _views_work() else None


@functools.lru_cache(maxsize=64, typed=True)
def _module_random_template(seed: int) -> random.Random:
    """The first state of a run's module-function generator: a function of the seed alone, so
    one made for an earlier host with this seed is the same (never drawn from: each host copies
    it). Seeding a generator was two thirds of making a :class:`SeededRandom`, once per scenario
    of the suite (issue 16). ``typed``: ``True`` and ``1`` seed different generators
    (``"True:random"``, ``"1:random"``)."""
    return random.Random(f"{seed}:random")


class SeededRandom:
    """The run's only source of randomness."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)
        #: What extension code gets from ``random.random()`` and the other module functions (a
        #: generator whose state is swapped into theirs while the host runs) and the names
        #: ``tempfile`` makes (:func:`deterministic_environment`): streams of their own, so an
        #: extension's draws never move the run's ids.
        template = _module_random_template(seed)
        self.module_random: random.Random
        #: The bytes of :attr:`module_random`'s state (None: swapped by ``getstate``/``setstate``).
        self.module_random_view: memoryview | None = None
        if _views_work():
            # A generator not seeded (``Random.__new__``), given the template's state: seeding
            # one to overwrite its state would cost as much as the template did.
            self.module_random = random.Random.__new__(random.Random)
            self.module_random.gauss_next = template.gauss_next  # type: ignore[attr-defined]
            self.module_random_view = _state_view(self.module_random)
            self.module_random_view[:] = _state_view(template)
        else:
            self.module_random = random.Random(0)
            self.module_random.setstate(template.getstate())
        self.temporary_names = random.Random(f"{seed}:tempfile")

    def bytes(self, n: int) -> bytes:
        return self._rng.randbytes(n)

    def entry_id(self, taken: Callable[[str], bool]) -> str:
        """Pi's entry id: 8 hex chars of a random UUID, re-drawn on collision (SM:21-29)."""
        for _ in range(100):
            candidate = f"{self._rng.getrandbits(32):08x}"
            if not taken(candidate):
                return candidate
        return self.uuid4()

    def uuid4(self) -> str:
        raw = bytearray(self._rng.randbytes(16))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        h = raw.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def uuid7(self, ms: int) -> str:
        """A UUIDv7 (Pi's session ids) from a virtual millisecond timestamp."""
        rand = bytearray(self._rng.randbytes(10))
        head = ms.to_bytes(6, "big")
        raw = bytearray(head + rand)
        raw[6] = (raw[6] & 0x0F) | 0x70
        raw[8] = (raw[8] & 0x3F) | 0x80
        h = raw.hex()
        return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"

    def choice_index(self, n: int) -> int:
        return self._rng.randrange(n)


class _SeededNames:
    """``tempfile``'s name sequence (``tempfile._RandomNameSequence``: eight of its characters
    per name) drawing from a seeded generator; CPython's seeds its own from the operating
    system, in C, where ``os.urandom``'s replacement does not reach."""

    characters = "abcdefghijklmnopqrstuvwxyz0123456789_"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __iter__(self) -> _SeededNames:
        return self

    def __next__(self) -> str:
        return "".join(self.rng.choices(self.characters, k=8))


class deterministic_environment:  # noqa: N801  (used as a context manager)
    """Virtualise ``time.time``, ``time.time_ns``, ``os.urandom`` (and ``random``'s reference to
    it), ``random``'s module functions and ``tempfile``'s names for extension code.

    Before stop 28 only the first three were: ``secrets.token_hex()``, ``random.random()`` and a
    ``tempfile.mkstemp()`` name (which reaches the trace through the ``fs`` record of the
    write) differed from run to run. The module functions' generator is swapped in and out with
    the process's own state, so code outside the simulation keeps its sequence.

    A class rather than a ``contextlib`` generator: every step of a simulation enters it
    (``Simulation._run``), and a generator's context costs four times a class's; what is
    replaced and restored, and in which order, is the same. The replacements are made with the
    context, not at each ``__enter__``: a simulation makes one and enters it at every step (one
    ``with`` at a time: it keeps what it restores from its ``__enter__`` to its ``__exit__``)."""

    __slots__ = (
        "_names",
        "_rng",
        "_saved_names",
        "_saved_random_urandom",
        "_saved_state",
        "_saved_time",
        "_saved_time_ns",
        "_saved_urandom",
        "_time",
        "_time_ns",
        "_urandom",
    )

    def __init__(self, clock: VirtualClock, rng: SeededRandom) -> None:
        self._rng = rng

        def virtual_time() -> float:
            return clock.now_ms() / 1000.0

        def virtual_time_ns() -> int:
            return clock.now_ms() * 1_000_000

        def virtual_urandom(n: int) -> bytes:
            return rng.bytes(n)

        self._time, self._time_ns, self._urandom = virtual_time, virtual_time_ns, virtual_urandom
        self._names = _SeededNames(rng.temporary_names)

    def __enter__(self) -> None:
        rng = self._rng
        self._saved_time, self._saved_time_ns, self._saved_urandom = time.time, time.time_ns, os.urandom
        self._saved_random_urandom = random._urandom  # type: ignore[attr-defined]
        self._saved_names = tempfile._name_sequence  # type: ignore[attr-defined]
        time.time = self._time
        time.time_ns = self._time_ns
        os.urandom = self._urandom
        random._urandom = self._urandom  # type: ignore[attr-defined]
        process, process_view = _process_generator()
        if process_view is not None and rng.module_random_view is not None:
            # The run's state into the module functions' generator, the process's out into the
            # run's (swapped back at the exit): ``getstate`` and ``setstate`` each way copied
            # the 625 numbers of a state into and out of tuples, a ninth of starting a host.
            _swap_states(process, process_view, rng.module_random, rng.module_random_view)
        else:
            self._saved_state = random.getstate()
            random.setstate(rng.module_random.getstate())
        tempfile._name_sequence = self._names  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        time.time, time.time_ns, os.urandom = self._saved_time, self._saved_time_ns, self._saved_urandom
        random._urandom = self._saved_random_urandom  # type: ignore[attr-defined]
        rng = self._rng
        process, process_view = _process_generator()
        if process_view is not None and rng.module_random_view is not None:
            _swap_states(process, process_view, rng.module_random, rng.module_random_view)
        else:
            rng.module_random.setstate(random.getstate())
            random.setstate(self._saved_state)
        tempfile._name_sequence = self._saved_names  # type: ignore[attr-defined]
