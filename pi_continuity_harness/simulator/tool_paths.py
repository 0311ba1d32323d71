"""How Pi 1.6's file tools turn the path a model gives into the file they open.

``resolveToCwd`` and ``resolveReadPath(Async)`` (pi-coding-agent ``dist/core/tools/path-utils.js:35-98``,
``dist/utils/paths.js:100-128``): Unicode spaces become plain spaces, a leading ``@`` is dropped
(models copy ``@file`` mentions), a ``file://`` URL becomes its path, and the path is resolved
against the working directory as Node's ``path.resolve`` does (``.`` and ``..`` removed, no
trailing slash, one leading slash).
A read of a missing file then tries the spellings macOS gives screenshots: a narrow no-break
space before ``AM``/``PM``, NFD, a curly apostrophe, and NFD with a curly apostrophe.

Pi also expands a leading ``~`` to the home directory; a scenario cannot name such a path (the
loader refuses it, ``scenario/tool_confinement.py``), so it is left as written here.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Callable

__all__ = ["resolve_read_path", "resolve_to_cwd"]

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


def _node_resolve(*parts: str) -> str:
    """Node's ``path.resolve`` for absolute results: normalised, no trailing slash, and ``//``
    at the start made one slash (``posixpath.normpath`` keeps two)."""
    path = posixpath.normpath(posixpath.join(*parts))
    return "/" + path.lstrip("/") if path.startswith("//") else path


def resolve_to_cwd(path: str, cwd: str) -> str:
    """``resolveToCwd`` (path-utils.js:42-44)."""
    normalized = _UNICODE_SPACES.sub(" ", path)
    if normalized.startswith("@"):
        normalized = normalized[1:]
    if normalized.startswith("file://"):
        normalized = _file_url_path(normalized)
    return _node_resolve(cwd, normalized)


def _file_url_path(url: str) -> str:
    """Node's ``fileURLToPath`` for a ``file://`` URL on POSIX: the path, percent-decoded (a
    host other than ``localhost`` or an encoded slash is refused with Node's message; the tool
    fails with it, url.js ``getPathFromURLPosix``)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.netloc not in ("", "localhost"):
        raise ValueError('File URL host must be "localhost" or empty on linux')
    if re.search("%2f", parsed.path, re.IGNORECASE):
        raise ValueError("File URL path must not include encoded / characters")
    return urllib.parse.unquote(parsed.path)


def resolve_read_path(path: str, cwd: str, exists: Callable[[str], bool]) -> str:
    """``resolveReadPathAsync`` (path-utils.js:72-97): the resolved path, or the first macOS
    spelling of it that exists."""
    resolved = resolve_to_cwd(path, cwd)
    if exists(resolved):
        return resolved
    am_pm = _AM_PM.sub(lambda m: f"\u202f{m.group(1)}.", resolved)
    nfd = unicodedata.normalize("NFD", resolved)
    curly = resolved.replace("'", "\u2019")
    nfd_curly = nfd.replace("'", "\u2019")
    for variant in (am_pm, nfd, curly, nfd_curly):
        if variant != resolved and exists(variant):
            return variant
    return resolved
