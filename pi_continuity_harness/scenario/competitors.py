"""A second extension that also answers ``session_before_compact``: the competing-extension fault.

Real users run several extensions; Pi combines their ``session_before_compact`` results
(last truthy wins, first cancel stops dispatch, a throw is isolated, §9.6). These
behaviours are the ways a competitor can take a compaction away from a continuity
extension. The real-Pi target loads a TypeScript twin of each (same names, same replies).
"""

from __future__ import annotations

from typing import Any, Literal

from pi_continuity_harness.api.events import SessionBeforeCompactEvent
from pi_continuity_harness.api.extension_api import ExtensionAPI, ExtensionContext, ExtensionFactory

__all__ = ["CompetitorBehaviour", "competitor"]

CompetitorBehaviour = Literal["cancel", "empty", "own_compaction", "throw", "none"]


def competitor(behaviour: CompetitorBehaviour) -> ExtensionFactory:
    """An extension factory whose ``session_before_compact`` handler does ``behaviour``."""

    def factory(pi: ExtensionAPI) -> None:
        count = {"n": 0}

        def before_compact(event: SessionBeforeCompactEvent, ctx: ExtensionContext) -> Any:
            count["n"] += 1
            if behaviour == "cancel":
                return {"cancel": True}
            if behaviour == "empty":
                return {}
            if behaviour == "throw":
                raise RuntimeError("boom from competitor")
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
