"""Texts the extension composes: the Call instruction, the GET response, the bootstrap prompt,
the status tool's answer, help. Pure functions of their inputs."""

from __future__ import annotations

from pi_continuity_harness.reference.blitz.constants import (
    CALL_PROTOCOL,
    COMMAND_NAME,
    FINISH_TOOL,
    GET_TOOL,
)
from pi_continuity_harness.reference.blitz.settings import BlitzSettings

__all__ = [
    "bootstrap_prompt",
    "call_instruction",
    "get_response",
    "help_text",
    "status_text",
]


def call_instruction(template_text: str) -> str:
    """The selected Call template plus the mandatory protocol (no path, no Finish ID)."""
    return template_text.rstrip("\n") + "\n" + CALL_PROTOCOL


def get_response(
    *,
    template_text: str,
    dossier: str,
    transcript: str,
    session_id: str,
    finish_id: str,
    pending_call: str | None,
    repeated: bool,
) -> str:
    lines = [
        "Session Handoff template" + (" (unchanged; same file and Finish ID)" if repeated else ""),
        "",
        f"Dossier file: {dossier}",
        f"Source transcript: {transcript} (session {session_id})",
        f"Finish ID: {finish_id}",
        "",
    ]
    if pending_call is not None:
        lines += ["## Call instruction", "", pending_call.rstrip("\n"), ""]
    lines += [
        "## Handoff template",
        "",
        template_text.rstrip("\n"),
        "",
        f"Write the complete dossier to the exact dossier file above with the native `write` tool. At the "
        f'safe checkpoint call `{FINISH_TOOL}({{ "id": "{finish_id}" }})` once.',
    ]
    return "\n".join(lines) + "\n"


def bootstrap_prompt(dossier: str, delete_after_reading: bool) -> str:
    cleanup = (
        f"After a complete, successful read, delete exactly this file: {dossier}"
        if delete_after_reading
        else "Leave the file unchanged after reading it."
    )
    return (
        f"Session Handoff: after your normal startup, read the entire file {dossier} "
        "(continue past any truncation until you have read all of it) and continue from it. "
        f"{cleanup} If the read fails or is incomplete, keep the file and report the blocker."
    )


def status_text(settings: BlitzSettings, percent: float | None, status: str) -> str:
    use = "unknown" if percent is None else f"{percent:.0f}%"
    automatic = (
        f"{settings.automatic_session_handoff_percent:g}%" if settings.automatic_enabled else "disabled"
    )
    return (
        f"Context use: {use}\n"
        f"Warning threshold: {settings.context_warning_percent:g}%\n"
        f"Critical threshold: {settings.critical_warning_percent:g}%\n"
        f"Automatic handoff: {automatic}\n"
        f"Reminder delay: {settings.readiness_retry_seconds} s (one-shot)\n"
        f"Status: {status}"
    )


def help_text() -> str:
    lines = [
        f"/{COMMAND_NAME}: menu (opening it starts nothing)",
        f"/{COMMAND_NAME} start: request a Session Handoff to a fresh, parent-linked session",
        f"/{COMMAND_NAME} help: this help",
        f"/{COMMAND_NAME} cancel: cancel the request before the native cutover",
        f"/{COMMAND_NAME} recover: inspect, execute or discard deferred prompts left behind",
        f"/{COMMAND_NAME} settings: global settings; each confirmed edit is saved at once",
        f"/{COMMAND_NAME} project-template: Call/Handoff templates for this directory",
        f"The model uses {GET_TOOL} and {FINISH_TOOL}; blitz_handoff reports status.",
    ]
    return "\n".join(lines)
