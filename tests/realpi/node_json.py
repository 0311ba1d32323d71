"""Run a Node script on JSON: the tests that check a port of Pi's (or Node's) code against it."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from pi_continuity_harness.targets.realpi import PiInstallation


def node_json(
    installation: PiInstallation, script: str, payload: Any, *argv: str, timeout: float = 120
) -> Any:
    """``script`` (``node -e``) run by the installation's Node with ``payload`` as JSON on its
    stdin and ``argv`` after it; what it writes to stdout, read as JSON."""
    done = subprocess.run(
        [str(installation.node_path), "-e", script, *argv],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    return json.loads(done.stdout)
