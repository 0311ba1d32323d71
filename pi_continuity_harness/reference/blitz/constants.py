"""Names and fixed texts of pi-blitz-handoff (the public interface and the fixed instructions).

Everything a user, a model or a test can see verbatim lives here, so a change of wording is
one edit and the features can quote the same constants' meaning.
"""

from __future__ import annotations

__all__ = [
    "AUTO_BUDGET_ENTRY",
    "CALL_PROTOCOL",
    "CALL_TYPE",
    "COMMAND_NAME",
    "CUTOVER_SUBCOMMAND",
    "DEFAULT_CALL_TEMPLATE",
    "DEFAULT_HANDOFF_TEMPLATE",
    "DEFERRED_BOUNDARY",
    "EMERGENCY_INSTRUCTION",
    "EMERGENCY_PERCENT",
    "EMERGENCY_TYPE",
    "FINISH_TOOL",
    "GET_TOOL",
    "LEGACY_TEMPLATE_NAMES",
    "MANAGED_DIR_NAME",
    "PROJECT_AUTODISCOVER",
    "PROJECT_DEFAULT",
    "REMINDER_TEXT",
    "REMINDER_TYPE",
    "ROLES",
    "STATUS_TOOL",
    "SUBCOMMANDS",
    "WIDGET_KEY",
]

MANAGED_DIR_NAME = "pi-blitz-handoff"
COMMAND_NAME = "sh"
#: The six public subcommands, in the order completions and help list them.
SUBCOMMANDS: tuple[str, ...] = ("start", "help", "cancel", "recover", "settings", "project-template")
#: The private, correlated command bridge from ``agent_settled`` to ``ctx.new_session()``.
#: Not completed, not in help; a call without the live correlation token does nothing.
CUTOVER_SUBCOMMAND = "__cutover"

STATUS_TOOL = "blitz_handoff"
GET_TOOL = "session_handoff_get_template"
FINISH_TOOL = "session_handoff_finish"

WIDGET_KEY = "pi-blitz-handoff"
AUTO_BUDGET_ENTRY = "pi-blitz-handoff-automatic"
#: ``customType`` of the messages the extension sends the model (a reminder, the emergency
#: instruction, an automatic request's Call instruction).
REMINDER_TYPE = "pi-blitz-handoff-reminder"
EMERGENCY_TYPE = "pi-blitz-handoff-emergency"
CALL_TYPE = "pi-blitz-handoff-call"

#: Template roles and their file-name prefixes (``call_*.cmpl``, ``handoff_*.cmpl``).
ROLES: tuple[str, ...] = ("call", "handoff")
PROJECT_AUTODISCOVER = "<Autodiscover>"
PROJECT_DEFAULT = "<Default>"

#: The fixed emergency level (percent of the context window); separate from the settings.
EMERGENCY_PERCENT = 90.0

DEFERRED_BOUNDARY = "--- Deferred Prompt {n} of {m} ---"

#: Obsolete managed templates a user may remove by hand (never removed automatically).
LEGACY_TEMPLATE_NAMES: tuple[str, ...] = (
    "default.cmpl",
    "call_fast.cmpl",
    "handoff_fast.cmpl",
    "call_balanced.cmpl",
    "handoff_balanced.cmpl",
    "call_next.cmpl",
    "handoff_next.cmpl",
    "handoff_v2.cmpl",
)

DEFAULT_CALL_TEMPLATE = """\
# Session Handoff requested

Bring the current work to the next safe checkpoint; do not finish the whole task.
Finish only tightly coupled in-flight work that a safe transfer needs. Independent
terminals and background jobs may keep running: never wait on them, and never add
work to postpone the transfer.
"""

DEFAULT_HANDOFF_TEMPLATE = """\
# Continuation dossier (V2)

Start the file with a short task-specific Markdown title.

Write, inline, the continuation core a fresh session needs:

- the actual user-facing mode (`userfacing` dialogue or `autonom` autonomous work) and
  the commissioned work;
- continuing grants, permissions and conditions, exactly as given;
- dirty state, blockers and evidence (commands, results, files);
- active skills: name, purpose and scope only, not an inventory of past reads;
- the exact next action.

Add one short history paragraph: topics, session IDs and known entry points; start
lines only where established. Name detail sources only for a concrete need.

The receiver handles deferred prompts first, then resumes the actual dialogue or the
authorised autonomous action, with no recap.
"""

#: Appended by code to every Call template: the mandatory GET/Finish protocol. It names
#: neither the dossier path nor a Finish ID (those come from the GET response only).
CALL_PROTOCOL = """\

## Protocol (mandatory)

1. Call `session_handoff_get_template({})` before you write anything for the handoff.
   Do not invent a path, and write nothing before the template is retrieved.
2. Write the complete dossier with the native `write` tool to the exact file the
   response names, following the returned template.
3. At the safe checkpoint, call `session_handoff_finish({ "id": "<Finish ID>" })` once,
   with the exact Finish ID of the response, and nothing else.
"""

REMINDER_TEXT = (
    "Session Handoff reminder: complete the current handoff now. Use the template, file and "
    "Finish ID you already have (call `session_handoff_get_template({})` if you have not yet), "
    "write the dossier, then call `session_handoff_finish` once with the exact Finish ID."
)

EMERGENCY_INSTRUCTION = (
    "EMERGENCY: the context window is at least 90% full and the Session Handoff is not submitted. "
    "Stop source work and context gathering now. Do not wait on independent terminals or subagents. "
    "If you have no template yet, call `session_handoff_get_template({})`; then finalize the supplied "
    "file with the native `write` tool and call `session_handoff_finish` with the exact Finish ID."
)
