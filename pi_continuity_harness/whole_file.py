"""A file written whole or not at all: a temporary file beside it, renamed over it.

The one core of the harness's atomic writes: ``scenario.atomic_write.write_atomically`` (the
reports, imported scenarios, real-Pi wrappers: with the mode a plain ``open`` would leave) and
``cache_dir``'s kept files (``cache_dir.kept``, ``dataclass_code``: another process starting
meanwhile reads the old file or the new one, never a part). A leaf of the package, importing
nothing of the harness: ``cache_dir`` and ``rules`` may not import ``scenario``
(``tests/test_boundaries.py``), and each had its own copy of these lines before.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["replace_whole"]


def replace_whole(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """``data`` to ``path`` (whose directory exists) whole or not at all: written to a temporary
    file in the same directory (``mode``, if given, set on it first; ``mkstemp`` makes it
    ``0o600``), then renamed over ``path``. On any error the temporary file is removed and the
    error raised, ``path`` as it was."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
