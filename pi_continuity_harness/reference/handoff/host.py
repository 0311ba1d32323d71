"""What the handoff needs from the host beyond ``pi``: Pi's agent directory.

Pi exports ``getAgentDir()`` from its package: ``$PI_CODING_AGENT_DIR`` (tilde-expanded,
read on each call), else ``~/.pi/agent``. Its Python form is
``extension_api.get_agent_dir()``; a host that predates it gets Pi's own rule here.
"""

from __future__ import annotations

import os

from pi_continuity_harness.simulator import extension_api

__all__ = ["agent_dir"]


def agent_dir() -> str:
    getter = getattr(extension_api, "get_agent_dir", None)
    if callable(getter):
        return str(getter())
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), ".pi", "agent")
