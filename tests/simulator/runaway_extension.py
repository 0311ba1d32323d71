"""A runaway implementation (issue 12): the reference, but every continuation is sent twice.

Pi Session Continuity sends one continuation after each threshold compaction. This fixture
sends every user message it sends twice, as an implementation with that bug would. When every
reply crosses the compaction threshold again (``runaway_scenario``), each compaction queues two
continuations, each continuation's reply compacts again, and Pi never goes idle: before budgets
the simulated host looped forever and ``run`` never finished.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.reference.psc import extension as reference

__all__ = ["RUNAWAY_SPEC", "extension", "runaway_scenario"]

RUNAWAY_SPEC = f"{__name__}:extension"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "threshold-compaction.yaml"


def extension(pi: ExtensionAPI) -> None:
    send = pi.send_user_message

    def twice(*args: Any, **kwargs: Any) -> Any:
        send(*args, **kwargs)
        return send(*args, **kwargs)

    pi.send_user_message = twice  # type: ignore[method-assign]
    reference(pi)


def runaway_scenario(**budget: Any) -> dict[str, Any]:
    """``examples/threshold-compaction.yaml`` with every further reply (the default) reporting
    17,010 context tokens, above the threshold. With the reference, Pi compacts once, continues
    once and goes idle; with this fixture, each compaction queues two continuations and the
    host never goes idle."""
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["name"] = "runaway"
    data["model"]["default_agent"] = {"text": "continuing " + "L" * 130, "context_tokens": 17010}
    if budget:
        data["budget"] = budget
    return data
