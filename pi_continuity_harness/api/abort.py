"""AbortController / AbortSignal, the Python form of the web platform objects Pi passes around.

Pi hands extensions an ``AbortSignal`` (``event.signal`` in ``session_before_compact``,
``ctx.signal`` mid-run). A model call given that signal does not raise when it is
aborted: it *resolves* with ``stopReason: "aborted"`` (observed in real Pi 1.6, see
``psc-lifecycle-on-real-pi.md`` §8). These objects carry the state; the simulated model
honours it the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pi_continuity_harness.errors import ApiError

__all__ = ["AbortController", "AbortError", "AbortSignal"]


class AbortError(ApiError):
    """Raised by :meth:`AbortSignal.throw_if_aborted`, like the DOM ``AbortError``."""


class AbortSignal:
    """Read-only view of an abort state, with listeners fired once on abort."""

    __slots__ = ("_aborted", "_listeners", "_reason", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: str | None = None
        self._listeners: list[Callable[[], None]] = []
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> str | None:
        return self._reason

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` once when the signal aborts (at once if it already has)."""
        if self._aborted:
            listener()
        else:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(self._reason or "This operation was aborted")

    async def wait(self) -> None:
        """Return when the signal aborts."""
        if self._aborted:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        await future

    def _abort(self, reason: str | None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted})"


class AbortController:
    """Owner of an :class:`AbortSignal`."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._abort(reason)
