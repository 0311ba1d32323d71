"""A Python extension that reports the process it runs in (``/process-info``): what a bridge
started through a zygote must share with a fresh ``python -m`` bridge (tests/realpi/test_bridge_zygote.py)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

from pi_continuity_harness.api import ExtensionAPI, ExtensionCommandContext


def extension(pi: ExtensionAPI) -> None:
    async def info(_args: str, ctx: ExtensionCommandContext) -> None:
        umask = os.umask(0)
        os.umask(umask)
        try:  # the parent's command name: node (Pi) for a fresh bridge, python for a zygote's
            with open(f"/proc/{os.getppid()}/comm", encoding="utf-8") as handle:
                parent = handle.read().strip()
        except OSError:
            parent = None
        report = {
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "parent": parent,
            "cwd": os.getcwd(),
            "path0": sys.path[0],
            "argv0": os.path.basename(sys.argv[0]),
            "probe": os.environ.get("PROBE_VALUE"),
            "umask": umask,
            "tmp": tempfile.gettempdir(),
            "stdin_is_pipe": not os.isatty(0),
        }
        ctx.ui.notify(json.dumps(report, sort_keys=True), "info")

    pi.register_command("process-info", info, description="report the process")
