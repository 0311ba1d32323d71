"""A second extension that also answers ``session_before_compact``: the competing-extension fault.

Real users run several extensions; Pi combines their ``session_before_compact`` results
(last truthy wins, first cancel stops dispatch, a throw is isolated, §9.6). These
behaviours are the ways a competitor can take a compaction away from a continuity
extension. The real-Pi target loads a TypeScript twin of each (same names, same replies).

``reissue_brief`` returns the newest pending Continuity Brief it finds under the project's
default artifact directory, byte for byte, with its own ``details``: Pi then persists the
continuity extension's summary text under details that do not describe it (rule P70d).

``reissue_brief_but_<field>`` returns the same Brief with the details that describe it, as the
continuity extension would write them (``continuityEventId`` and ``sessionId`` from the Brief's
frontmatter, ``artifactPath`` the pending file's path, ``sha256`` of its bytes), except one, the
``<field>``, which names another event, file, hash or session: a check of one detail missing
from the implementation commits it (P70d; an outside mutant that ignored only ``sha256``
survived ``reissue_brief``, whose every detail is wrong at once).

``abort`` calls ``ctx.abort()`` and returns nothing: Pi aborts the compaction after the
continuity extension's hook has returned (``ctx.abort`` is ``void this.abort()``,
``dist/core/agent-session.js:2925-2930``; ``AgentSession.abort`` calls ``abortCompaction``,
:2082-2087, which aborts the auto-compaction's controller, :2465-2467, whose ``signal`` every
hook got), the one way a scenario reaches rule P110b (the Brief of an aborted compaction stays
pending and inert).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from typing import Any, Literal

from pi_continuity_harness.api.events import SessionBeforeCompactEvent
from pi_continuity_harness.api.extension_api import (
    CONFIG_DIR_NAME,
    ExtensionAPI,
    ExtensionContext,
    ExtensionFactory,
)

__all__ = ["CompetitorBehaviour", "competitor"]

CompetitorBehaviour = Literal[
    "abort",
    "cancel",
    "empty",
    "own_compaction",
    "reissue_brief",
    "reissue_brief_but_continuityEventId",
    "reissue_brief_but_artifactPath",
    "reissue_brief_but_sha256",
    "reissue_brief_but_sessionId",
    "throw",
    "none",
]

#: The detail each ``reissue_brief_but_<field>`` gets wrong, with the wrong value.
_WRONG_DETAIL = {
    "continuityEventId": "00000000-0000-4000-8000-000000000000",
    "artifactPath": "/elsewhere/pending/other.md",
    "sha256": "0" * 64,
    "sessionId": "another-session",
}
_FRONTMATTER_FIELD = re.compile(r'^(eventId|sessionId): "([^"]*)"$', re.MULTILINE)


def competitor(behaviour: CompetitorBehaviour) -> ExtensionFactory:
    """An extension factory whose ``session_before_compact`` handler does ``behaviour``."""

    def factory(pi: ExtensionAPI) -> None:
        count = {"n": 0}

        def before_compact(event: SessionBeforeCompactEvent, ctx: ExtensionContext) -> Any:
            count["n"] += 1
            if behaviour == "abort":
                ctx.abort()
                return None
            if behaviour == "cancel":
                return {"cancel": True}
            if behaviour == "empty":
                return {}
            if behaviour == "throw":
                raise RuntimeError("boom from competitor")
            if behaviour.startswith("reissue_brief"):
                found = _newest_pending_brief(ctx.cwd)
                if found is None:
                    return None
                path, brief = found
                wrong = behaviour.removeprefix("reissue_brief_but_")
                return {
                    "compaction": {
                        "summary": brief,
                        "firstKeptEntryId": event.preparation.first_kept_entry_id,
                        "tokensBefore": event.preparation.tokens_before,
                        "details": (
                            {"by": "competitor"}
                            if behaviour == "reissue_brief"
                            else {**_brief_details(path, brief), wrong: _WRONG_DETAIL[wrong]}
                        ),
                    }
                }
            if behaviour == "own_compaction":
                return {
                    "compaction": {
                        "summary": f"COMPETITOR-SUMMARY-{count['n']}",
                        "firstKeptEntryId": event.preparation.first_kept_entry_id,
                        "tokensBefore": event.preparation.tokens_before,
                        "details": {"by": "competitor"},
                    }
                }
            return None

        pi.on("session_before_compact", before_compact)

    factory.__name__ = f"competitor_{behaviour}"
    return factory


def _newest_pending_brief(cwd: str) -> tuple[str, str] | None:
    """The path and text of the most recently written ``*.md`` under ``<cwd>/<CONFIG_DIR_NAME>/
    session-continuity/*/pending/`` (ties by path), or None when there is none."""
    pattern = os.path.join(cwd, CONFIG_DIR_NAME, "session-continuity", "*", "pending", "*.md")
    paths = sorted(glob.glob(pattern), key=lambda path: (os.stat(path).st_mtime_ns, path))
    if not paths:
        return None
    with open(paths[-1], encoding="utf-8") as handle:
        return paths[-1], handle.read()


def _brief_details(path: str, brief: str) -> dict[str, str]:
    """The details that describe the Brief at ``path`` (its event id, its resolved path, the
    SHA-256 of its exact text and its session id: spec §8 and §18), as the reference writes them."""
    fields = dict(_FRONTMATTER_FIELD.findall(brief.split("\n---\n", 1)[0]))
    return {
        "continuityEventId": fields.get("eventId", ""),
        "artifactPath": path,
        "sha256": hashlib.sha256(brief.encode("utf-8")).hexdigest(),
        "sessionId": fields.get("sessionId", ""),
    }
