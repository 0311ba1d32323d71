"""Paths on a page: relative to the page's own directory while it is rendered.

Standard-library only, so the command line sets the page's directory without the ``report``
extra's imports (the templates' filter ``shown_path`` reads it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

__all__ = ["page_directory", "shown_path"]

#: The directory of the page being rendered (:func:`page_directory`); None: paths stay as given.
_PAGE_DIRECTORY: ContextVar[str | None] = ContextVar("page_directory", default=None)


@contextlib.contextmanager
def page_directory(directory: Path) -> Iterator[None]:
    """While a page is rendered, the files it names (artifacts, request files, a scenario's
    work directory) are shown relative to ``directory``, the page's own.

    Why: the page named them by their absolute paths, so the same run rendered from two
    directories gave two pages (the standard: same seed, same bytes, in any directory), and a
    page moved with its run named the old place. A context variable rather than an argument of
    every render function: the paths are deep in per-scenario views that every page shares."""
    token = _PAGE_DIRECTORY.set(os.path.abspath(directory))
    try:
        yield
    finally:
        _PAGE_DIRECTORY.reset(token)


def shown_path(value: Any) -> str:
    """``value`` (a path) as the page shows it: relative to the page's directory when one is
    set (:func:`page_directory`) and the path is absolute, else as given."""
    text = str(value)
    base = _PAGE_DIRECTORY.get()
    if base is None or not os.path.isabs(text):
        return text
    return os.path.relpath(text, base)
