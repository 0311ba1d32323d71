"""Writing a file whole or not at all: a temporary file beside it, renamed over it.

The reports of ``run``, ``compare``, ``explore`` and ``mutants``, ``import-session``'s scenario
and the real-Pi target's extension wrappers are written with it. Its own module, free of pytest,
low in the layers (``scenario``) so that every layer above may use it: importing the suite
runner (``features.suite``, which imports pytest and pytest-bdd) for it cost every ``explore``
and ``mutants`` process 0.13 CPU-s (issue 16)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file beside it, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
