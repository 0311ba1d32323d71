"""``ctx.ui`` of the simulated host, with dialogs answered from the scenario.

The hub outlives runtimes (like the RPC client that renders UI requests). It records every
notification, status and widget (the observable UI), and answers dialogs from the answer
queue of the operation that is running, in the order the dialogs open, as an RPC client
answering ``extension_ui_request`` would. An unanswered dialog is cancelled (``None`` /
``False``) at once, except one asked with a timeout: it gets its default when the timeout has
passed in virtual time, as Pi's timer gives it on real Pi, where the RPC client leaves it
unanswered (``targets/realpi/rpc_client.py`` ``left_to_pis_timer``). A dialog whose scripted
answer is of the wrong kind (or a ``select`` answer that matches no option) is cancelled at
once too, and the handler goes on, as with PiTarget's RPC client; the mismatch is kept in
:attr:`UIHub.errors` and the operation fails with it.

Without a UI (print and json modes) dialogs return ``None``/``False`` without consuming
an answer and notifications go nowhere, exactly as Pi's ``noOpUIContext`` (§9.18). The
attempt to open a dialog is still recorded (``noUI: true``): Pi shows nothing, but a step
can then tell that an implementation tried to ask.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_continuity_harness.api.extension_api import Mode, PiError, WidgetPlacement
from pi_continuity_harness.scenario.operations import (
    DialogAnswer,
    DialogAnswerMismatchError,
    Operation,
    pick_answer,
)
from pi_continuity_harness.scenario.trace import Trace
from pi_continuity_harness.simulator.json_copy import NOT_FOR_PI, bridge_copy
from pi_continuity_harness.simulator.virtual_loop import start_eagerly

__all__ = [
    "THEME_PATH",
    "DialogAnswerMismatchError",
    "Notification",
    "SimTheme",
    "SimUIContext",
    "UIHub",
    "pi_dialog_timeout",
]


def _crossed(first: Any, second: Any) -> Any:
    """``bridge_copy([first, second])``, the two arguments of a notification or a status as Pi
    gets them from a Python extension. Strings (and ``None``) come back from JSON as they went
    in, so two of them are not encoded and parsed (what every handler's notifications and
    footer updates did, about a thousand times in a run of the suite); anything else crosses
    as before."""
    if type(first) is str and (type(second) is str or second is None):
        return [first, second]
    return bridge_copy([first, second])


@dataclass(frozen=True)
class Notification:
    message: str
    notify_type: str


@dataclass
class UIHub:
    trace: Trace
    notifications: list[Notification] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)
    widgets: dict[str, list[str]] = field(default_factory=dict)
    #: Every ``set_widget`` in order (an RPC client sees each as one ``extension_ui_request``).
    widget_updates: list[dict[str, Any]] = field(default_factory=list)
    dialogs: list[dict[str, Any]] = field(default_factory=list)
    #: Answer mismatches since the last :meth:`take_errors` (each cancelled its dialog).
    errors: list[str] = field(default_factory=list)
    _answers: list[DialogAnswer] = field(default_factory=list)
    #: Runs an answer's ``during`` operations while its dialog is open (the host sets it):
    #: ``(operations, dialog method)``.
    hold: Callable[[tuple[Operation, ...], str], Coroutine[Any, Any, None]] | None = None
    #: Makes a task a host task (the operation's settle waits for it; the host sets it): a
    #: timed dialog's ``during`` operations go on after Pi's timer gave the default.
    track: Callable[[asyncio.Task[Any]], None] | None = None

    def set_answers(self, answers: tuple[DialogAnswer, ...]) -> None:
        self._answers = list(answers)
        self.errors = []

    def add_answers(self, answers: tuple[DialogAnswer, ...]) -> list[DialogAnswer]:
        """Append answers after the pending ones (a command run while a dialog is held open
        leaves the held command's answers alone, as PiTarget's ``AnswerRules.add``)."""
        added = list(answers)
        self._answers.extend(added)
        return added

    def discard_answers(self, answers: list[DialogAnswer]) -> None:
        """Drop those of ``answers`` still pending (by identity)."""
        drop = {id(a) for a in answers}
        self._answers = [a for a in self._answers if id(a) not in drop]

    def take_errors(self) -> list[str]:
        errors, self.errors = self.errors, []
        return errors

    def unused_answers(self) -> int:
        return len(self._answers)

    def context_for(self, mode: Mode) -> SimUIContext:
        return SimUIContext(self, has_ui=mode in ("tui", "rpc"))

    def next_answer(
        self, method: str, title: str, message: str = "", options: list[str] | None = None
    ) -> DialogAnswer | None:
        return pick_answer(self._answers, method, title, message, options)


class SimTheme:
    """Pi 1.6's theme of an RPC, print or json process (``dist/main.js:814``): the system theme's
    indexed palette, as ``pi-1.6-rpc-theme.json`` (``targets/realpi/dump_theme.mjs``) records
    what ``Theme.fg`` puts around a text for each token (theme.js:202-207)."""

    def fg(self, color: str, text: str) -> str:
        wrap = _rpc_theme().get(color)
        if wrap is None:
            # theme.js:202-203, 212-215 (``fg`` -> ``tokenAnsi`` throws): Pi's Error, as ``PiError``
            raise PiError(f"Unknown theme color: {color}")
        return f"{wrap[0]}{text}{wrap[1]}"


@functools.cache
def _rpc_theme() -> dict[str, tuple[str, str]]:
    data = json.loads(THEME_PATH.read_text(encoding="utf-8"))
    return {str(token): (str(pair[0]), str(pair[1])) for token, pair in data["fg"].items()}


THEME_PATH = Path(__file__).with_name("pi-1.6-rpc-theme.json")

#: Node's setTimeout runs a delay above this (or below 1 ms) after 1 ms (Node ``timers``:
#: "When delay is larger than 2147483647 or less than 1, the delay will be set to 1").
_NODE_TIMER_MAX_MS = 2**31 - 1


def pi_dialog_timeout(timeout: float | None) -> float | None:
    """The seconds after which Pi 1.6 gives a dialog asked with ``timeout`` its default (None:
    never).

    The Python API's seconds reach Pi as whole milliseconds (``targets/realpi/bridge_api.py``
    ``_ms``: ``round(timeout * 1000)``, which raises for NaN and infinity as here). Pi arms a
    timer only for a truthy ``opts.timeout`` (``dist/modes/rpc/rpc-mode.js:69``): 0 ms (and any
    timeout under half a millisecond) is no timeout at all. Node runs a delay below 1 ms (a
    negative one) or above 2**31 - 1 ms after 1 ms: a timeout of 30 days gives the default at once.
    """
    if timeout is None:
        return None
    ms = round(timeout * 1000)
    if ms == 0:
        return None
    if ms < 1 or ms > _NODE_TIMER_MAX_MS:
        ms = 1
    return ms / 1000


def _picks_no_option(answer: DialogAnswer, options: Any) -> bool:
    """A ``select`` answer that names none of the dialog's options (the client cancels it)."""
    if not isinstance(options, list) or answer.cancel or answer.select is None:
        return False
    return answer.choose(list(options)) is None


class SimUIContext:
    def __init__(self, hub: UIHub, *, has_ui: bool) -> None:
        self._hub = hub
        self._has_ui = has_ui

    @property
    def theme(self) -> SimTheme:
        """The same in every mode: Pi's no-UI context returns the global theme too."""
        return SimTheme()

    def notify(self, message: str, notify_type: Literal["info", "warning", "error"] = "info") -> None:
        if not self._has_ui:
            return
        # What a Python extension passes crosses the bridge as JSON (``bridge_copy``): a message
        # that is not a string reaches Pi as its JSON (a dict an object), one with a NaN never.
        sent = _crossed(message, notify_type)
        if sent is NOT_FOR_PI:
            return
        message, notify_type = sent
        self._hub.notifications.append(Notification(message, notify_type))
        self._hub.trace.emit("ui", "notify", message=message, notifyType=notify_type)

    def set_status(self, key: str, text: str | None) -> None:
        if not self._has_ui:
            return
        sent = _crossed(key, text)  # as :meth:`notify`
        if sent is NOT_FOR_PI:
            return
        key, text = sent
        if text is None:
            self._hub.statuses.pop(key, None)
        else:
            self._hub.statuses[key] = text
        self._hub.trace.emit("ui", "set_status", statusKey=key, statusText=text)

    def set_widget(
        self, key: str, lines: list[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        """String lines only (Pi's RPC mode ignores widget factories); ``None`` clears."""
        if not self._has_ui:
            return
        if lines is None:
            self._hub.widgets.pop(key, None)
        else:
            self._hub.widgets[key] = list(lines)
        update: dict[str, Any] = {"key": key, "lines": None if lines is None else list(lines)}
        if placement is not None:
            update["placement"] = placement
        self._hub.widget_updates.append(update)
        self._hub.trace.emit("ui", "set_widget", widgetKey=key, lines=lines, placement=placement)

    async def _dialog(
        self, method: str, title: str, timeout: float | None, **data: Any
    ) -> DialogAnswer | None:
        record = {"method": method, "title": title, **data}
        self._hub.dialogs.append(record)
        limit = pi_dialog_timeout(timeout)
        try:
            answer = self._hub.next_answer(method, title, str(data.get("message") or ""), data.get("options"))
        except DialogAnswerMismatchError as error:
            self._hub.errors.append(str(error))
            answer = None
            limit = None  # the client answers at once (a cancel)
        # The dialog's own fields, then the answer: the order the real-Pi target records
        # (targets/realpi/rpc_client.py DialogRules), so the dialogs compare whole.
        self._hub.trace.emit(
            "ui",
            method,
            title=title,
            **data,
            answer=None if answer is None else answer.record(),
        )
        if answer is not None and _picks_no_option(answer, data.get("options")):
            # The client cancels at once, before any ``during`` operation (AnswerRules._pick).
            self._hub.errors.append(
                f"select {title!r}: {answer.select!r} matches none of {data['options']!r}"
            )
            answer = None
            limit = None
        await asyncio.sleep(0)
        if answer is not None and answer.during and self._hub.hold is not None:
            # The dialog stays open while the answer's operations run; then it is answered.
            if limit is None:
                await self._hub.hold(answer.during, method)
            elif not await self._hold_until(answer.during, method, limit):
                return None  # Pi's timer won: the default, the late answer is dropped
        if answer is None and limit is not None:
            await asyncio.sleep(limit)
        return answer

    async def _hold_until(self, operations: tuple[Operation, ...], method: str, limit: float) -> bool:
        """Run a timed dialog's ``during`` operations, for at most ``limit`` seconds of the dialog.

        Pi 1.6 resolves a dialog with its default when its timer fires and forgets the request
        (``dist/modes/rpc/rpc-mode.js:69-74``): the answer the client sends once its operations
        have run finds no pending request and is dropped. The client goes on with them all the
        same, so they run on as a host task (``track``) that the operation's settle waits for,
        as PiTarget waits for its held dialogs' answer threads. Returns whether they ended (and
        the answer came) before the timer.
        """
        assert self._hub.hold is not None
        task = start_eagerly(
            asyncio.get_running_loop(), self._hub.hold(operations, method), f"dialog {method} during"
        )
        if self._hub.track is not None:
            self._hub.track(task)
        done, _ = await asyncio.wait({task}, timeout=limit)
        return bool(done)

    def _attempt(self, method: str, title: str, **data: Any) -> None:
        """A dialog opened without a UI: nothing is shown (Pi's no-op context), the call is recorded."""
        self._hub.dialogs.append({"method": method, "title": title, "noUI": True, **data})
        self._hub.trace.emit("ui", method, title=title, noUI=True, **data)

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        if not self._has_ui:
            self._attempt("select", title, options=list(options))
            return None
        answer = await self._dialog("select", title, timeout, options=list(options))
        if answer is None or answer.cancel:
            return None
        return answer.choose(list(options))  # an option: _dialog cancelled an answer matching none

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        if not self._has_ui:
            self._attempt("confirm", title, message=message)
            return False
        answer = await self._dialog("confirm", title, timeout, message=message)
        return bool(answer is not None and not answer.cancel and answer.confirm)

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        if not self._has_ui:
            self._attempt("input", title, placeholder=placeholder)
            return None
        answer = await self._dialog("input", title, timeout, placeholder=placeholder)
        if answer is None or answer.cancel:
            return None
        return answer.input

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        if not self._has_ui:
            self._attempt("editor", title, prefill=prefill)
            return None
        answer = await self._dialog("editor", title, None, prefill=prefill)
        if answer is None or answer.cancel:
            return None
        return answer.input
