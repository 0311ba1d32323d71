"""A stand-in for the virtual event loop's clock, for tests that build a ``VirtualClock`` alone."""

from __future__ import annotations


class ManualLoopClock:
    """The event loop's clock as ``VirtualClock`` uses it (``determinism.LoopClock``): its time
    moves only when a test sets ``now`` or a read ahead of it catches it up."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now

    def time_ms(self) -> int:
        return round(self.now * 1000)

    def catch_up(self, ms: int) -> None:
        self.now = max(self.now, ms / 1000)
