"""A pi-blitz-handoff implementation that behaves as the reference but words everything its own way.

The agent reference fixes names, file names, the widget's phase lines and the deferred-prompt
boundaries, not the wording of a response, an instruction or a notification. This
implementation changes every text the reference does not fix: the template response's layout,
the bootstrap prompt, the reminder and emergency texts and their message types, the Finish
rejections, the status tool's labels, the cancel and failure widget lines, the widget key and
every notification. The conformance suite must pass it exactly as it passes the reference; a
step that leaned on the reference's words would fail here.

Run it in a process of its own (``--extension tests.blitz.reworded:extension``): the factory
rebinds names in the reference's modules when it runs and never restores them.
"""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.reference.blitz import BlitzHandoff, messages, state, status
from pi_continuity_harness.reference.blitz import wiring as blitz_wiring

_WORDS = (
    ("Session Handoff", "Relay"),
    ("cancelled", "called off"),
    ("already active", "in progress"),
    ("not changed", "kept as it was"),
    ("set to", "is now"),
    ("Deferred prompts are kept in", "Saved prompts stay in"),
)


def _reword(text: str) -> str:
    for old, new in _WORDS:
        text = text.replace(old, new)
    return text


def _get_response(
    *,
    template_text: str,
    dossier: str,
    transcript: str,
    session_id: str,
    finish_id: str,
    pending_call: str | None,
    repeated: bool,
) -> str:
    parts = [
        ("Same relay as before.\n" if repeated else "")
        + f"Reserved file -> {dossier}\nSource transcript ({session_id}): {transcript}",
    ]
    if pending_call is not None:
        parts.append("What the user asked for:\n" + pending_call.rstrip("\n"))
    parts.append("Template to follow:\n" + template_text.rstrip("\n"))
    parts.append(f'When the file is complete: session_handoff_finish({{ "id": "{finish_id}" }}).')
    return "\n\n".join(parts) + "\n"


def _bootstrap(dossier: str, delete_after_reading: bool) -> str:
    cleanup = (
        f"Once you have all of it, remove {dossier} ."
        if delete_after_reading
        else ("Leave it exactly as it is afterwards.")
    )
    return (
        f"Relay: start as usual, then open {dossier} and read all of it, past any truncation. "
        f"{cleanup} Should reading fail, keep it and tell the user what blocked you."
    )


def _status_text(settings: Any, percent: float | None, word: str) -> str:
    automatic = (
        f"at {settings.automatic_session_handoff_percent:g} %"
        if settings.automatic_enabled
        else "switched off"
    )
    return (
        f"window used {'?' if percent is None else f'{percent:.1f} %'}; warn at "
        f"{settings.context_warning_percent:g} %; critical at {settings.critical_warning_percent:g} %; "
        f"automatic relay {automatic}; one nudge after {settings.readiness_retry_seconds}s; state: {word}"
    )


def _check_finish(request: Any, finish_id: object) -> state.FinishCheck:
    verdict = state.check_finish(request, finish_id)
    return (
        verdict if verdict.ok else state.FinishCheck(False, "Not accepted. " + _reword(verdict.message[9:]))
    )


class _Ui:
    def __init__(self, ui: Any) -> None:
        self._ui = ui

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ui, name)

    def notify(self, message: str, notify_type: str = "info") -> None:
        self._ui.notify(_reword(message), notify_type)


class _Ctx:
    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return _Ui(self._ctx.ui) if name == "ui" else getattr(self._ctx, name)


class _Pi:
    """``pi`` whose handlers, command and tools see a ``ctx`` that rewords every notification."""

    def __init__(self, pi: ExtensionAPI) -> None:
        self._pi = pi

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pi, name)

    def on(self, event: str, handler: Any) -> Any:
        return self._pi.on(event, lambda e, ctx: handler(e, _Ctx(ctx)))

    def register_command(self, name: str, handler: Any, **options: Any) -> None:
        self._pi.register_command(name, lambda args, ctx: handler(args, _Ctx(ctx)), **options)

    def register_tool(self, tool: Any) -> None:
        execute = tool.execute
        self._pi.register_tool(
            type(tool)(
                **{
                    **{f: getattr(tool, f) for f in tool.__dataclass_fields__},
                    "execute": lambda call_id, params, signal, ctx: execute(
                        call_id, params, signal, _Ctx(ctx)
                    ),
                }
            )
        )


def extension(pi: ExtensionAPI) -> None:
    messages.get_response = _get_response
    messages.bootstrap_prompt = _bootstrap
    messages.status_text = _status_text
    status.cancelled_lines = lambda: ["Relay called off"]
    status.failed_lines = lambda reason: ["Relay failed", reason]
    blitz_wiring.check_finish = _check_finish
    blitz_wiring.WIDGET_KEY = "relay"
    blitz_wiring.REMINDER_TYPE = "relay-nudge"
    blitz_wiring.EMERGENCY_TYPE = "relay-urgent"
    blitz_wiring.CALL_TYPE = "relay-request"
    blitz_wiring.REMINDER_TEXT = (
        "Nudge: the relay is still open. Fetch the template with session_handoff_get_template({}) if you "
        "have none, finish the file, then session_handoff_finish with the id you were given."
    )
    blitz_wiring.EMERGENCY_INSTRUCTION = (
        "Context nearly exhausted. Stop all other work now, get the template via "
        "session_handoff_get_template({}) if you lack it, complete the supplied file and call "
        "session_handoff_finish with your id; do not wait for background jobs."
    )
    BlitzHandoff(_Pi(pi)).register()  # type: ignore[arg-type]


extension.pi_continuity_system = "pi-blitz-handoff"  # type: ignore[attr-defined]
