"""A Python extension whose ``/slow SECONDS`` command takes that much real time.

Real Pi has no virtual clock (the fake model server ignores ``latency_ms``): this is how a
test makes a real-Pi scenario outlast its wall-clock budget (issue 12 item 5).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_continuity_harness.api import ExtensionAPI


def extension(pi: ExtensionAPI) -> None:
    async def slow(args: str, ctx: Any) -> None:
        await asyncio.sleep(float(args or "60"))

    pi.register_command("slow", slow, description="wait SECONDS of real time")
