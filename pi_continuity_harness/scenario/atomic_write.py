"""Writing a file whole or not at all: a temporary file beside it, renamed over it.

The reports of ``run``, ``compare``, ``explore`` and ``mutants``, ``import-session``'s scenario
and the real-Pi target's extension wrappers are written with it. Its own module, free of pytest,
low in the layers (``scenario``) so that every layer above may use it: importing the suite
runner (``features.suite``, which imports pytest and pytest-bdd) for it cost every ``explore``
and ``mutants`` process 0.13 CPU-s (issue 16)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from pi_continuity_harness.whole_file import replace_whole

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write ``text`` (as UTF-8) or ``bytes`` to ``path`` whole or not at all (a temporary file
    beside it, renamed). Text is encoded before anything is created, so text UTF-8 cannot encode
    (a lone surrogate) raises ``UnicodeEncodeError`` with ``path`` and its directory untouched.

    The file gets the mode a plain ``open(path, "w")`` would leave: an existing file's own, a
    new one ``0o666`` less the umask. ``mkstemp`` makes its file ``0o600``, and before stop 28
    every report and imported scenario ended up readable by its owner only, an existing
    ``0o644`` file included (found by an audit)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    replace_whole(path, data, mode=mode)


def _umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc/self/status``,
    since 4.7); else set and restored at once."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
