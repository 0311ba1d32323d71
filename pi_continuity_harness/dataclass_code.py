"""The code ``dataclasses`` compiles for each class's methods, kept between processes.

``@dataclass`` writes each method it adds (``__init__``, ``__repr__``, ``__eq__``, a frozen
class's ``__setattr__``...) as Python source and compiles it with ``exec`` (CPython 3.11
``dataclasses._create_fn``; from 3.13 one ``exec`` per class). Python's bytecode cache keeps a
module's code, never these texts: a harness process that imports the simulator, the explorer
and the reference creates about 200 dataclasses and compiles about 1,000 such texts: with them
kept, ``explore --seeds 1 --steps 1`` runs 1,271 M instructions instead of 1,760 M, and the
ten-seed exploration of issue 16 4,604 M instead of 5,091 M (cachegrind, December 2026; reading
the kept file is 16 M of it).

:func:`install` gives the ``dataclasses`` module an ``exec`` of its own (a module global
shadows the builtin): a text compiled before, in this process or an earlier one, runs from the
kept code object, any other is compiled as ``exec`` compiles it and kept. The result is the
same function: ``compile(text, "<string>", "exec", dont_inherit=True)`` is the code ``exec``
makes of ``text`` called from ``dataclasses``, which has no ``from __future__`` import to pass
on (``tests/test_dataclass_code.py`` checks both), and a code object read back with
:mod:`marshal` is the one written (it is how ``.pyc`` files keep code). The key is the whole
text, so a changed class (a field renamed, a default added) is a new text, never a stale one.

The texts are kept in one file of the cache directory per Python build and optimisation level
(``dataclass-code/<digest>.marshal``), written at exit when the process compiled a text the
file did not hold, merged with what another process wrote meanwhile, whole or not at all, and
only in a cache directory that is there already, as :func:`~.cache_dir.kept` does. A file that
cannot be read is compiled anew. Only the command line installs it (``cli.main`` as a
program): a library user's ``import`` of the harness leaves ``dataclasses`` as it is.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import hashlib
import marshal
import sys
from pathlib import Path
from types import CodeType
from typing import Any, Final

from pi_continuity_harness.cache_dir import default_cache_dir
from pi_continuity_harness.whole_file import replace_whole

__all__ = ["LIMIT", "cache_path", "install", "installed"]

#: Texts at most in the kept file: more (a process making classes in a loop) start it anew.
LIMIT: Final = 20_000

#: The texts -> code of this process: those read from the file, and those compiled here.
_CODES: dict[str, CodeType] = {}
#: Texts compiled in this process that the file did not hold.
_NEW: dict[str, CodeType] = {}
#: The file read at :func:`install` (None: not installed).
_PATH: list[Path] = []


def cache_path(root: Path | None = None) -> Path:
    """The kept file for this Python build and optimisation level (the code differs with both)."""
    key = f"python {sys.version} {sys.implementation.cache_tag} optimize {sys.flags.optimize}"
    digest = hashlib.sha256(key.encode()).hexdigest()
    return (default_cache_dir() if root is None else root) / "dataclass-code" / f"{digest}.marshal"


def _read(path: Path) -> dict[str, CodeType]:
    """The texts kept in ``path`` ({} when it is not there or not readable as written)."""
    try:
        with open(path, "rb") as stream:
            # ``loads`` of the bytes: ``marshal.load`` reads the file object piece by piece
            # (226 M instructions for this file, against 16 M).
            kept = marshal.loads(stream.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {text: code for text, code in kept.items() if type(text) is str and type(code) is CodeType}


def _exec(source: Any, namespace: Any = None, local_namespace: Any = None, /, **options: Any) -> None:
    """``exec(source, globals, locals)`` for ``dataclasses``: a source text's code compiled
    once (see the module docstring). Anything else (code, no globals) goes to the builtin as
    it came; without globals the builtin would take this function's, so they are
    ``dataclasses``' own, the caller's."""
    if type(source) is not str or namespace is None or options:
        # ``options``: a keyword a later Python's ``dataclasses`` may pass (``closure=``, 3.13),
        # which this cache does not know to key by.
        builtins.exec(
            source, vars(dataclasses) if namespace is None else namespace, local_namespace, **options
        )
        return
    code = _CODES.get(source)
    if code is None:
        code = compile(source, "<string>", "exec", dont_inherit=True)
        _CODES[source] = _NEW[source] = code
    builtins.exec(code, namespace, local_namespace)


def install(root: Path | None = None) -> None:
    """Give ``dataclasses`` the kept code (once per process) and keep what is new at exit."""
    if _PATH:
        return
    path = cache_path(root)
    _PATH.append(path)
    _CODES.update(_read(path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(_keep)


def installed() -> bool:
    """Whether ``dataclasses`` runs :func:`_exec` (what :func:`install` set is still there)."""
    return getattr(dataclasses, "exec", None) is _exec


def _keep() -> None:
    """Write the file anew when this process compiled texts it did not hold (with what another
    process kept meanwhile), in a cache directory that is there already."""
    if not _NEW or not _PATH:
        return
    path = _PATH[0]
    if not path.parent.parent.is_dir():  # never the one to make the cache directory
        return
    merged = _read(path)
    if len(merged) + len(_NEW) > LIMIT:
        merged = {}
    merged.update(_NEW)
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        replace_whole(path, marshal.dumps(merged))
    _NEW.clear()
