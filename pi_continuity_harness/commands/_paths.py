"""Output paths checked before a run, so a mistake costs nothing.

Before, ``--cucumber`` into a missing directory raised a traceback after the whole run and the
``--json``, ``--junit`` and ``--report`` asked for alongside were never written; ``--report`` at a
file, an unwritable ``--json`` and ``run --workdir`` at a file were tracebacks too. Every output
path is now checked before anything runs or is written: :func:`check_file` for a file option
(its directory must exist: a typo there is a mistake to report, not a directory to create),
:func:`check_directory` for a directory option (created with its parents when missing, as run
directories always were). A file where a directory is needed, a directory where a file is
needed, a missing directory for a file and a place the process cannot write are each a
:class:`UsageError` naming the option and the path. Nothing is created by a check: writability
is tried with a temporary file that is removed at once (permission bits alone say nothing when
running as root). A symbolic link loop on the way is refused too: before, it passed the checks
and the write after the run failed with ELOOP.

:func:`check_distinct` then compares a command's paths with each other: two outputs naming the
same file (``--json x --html x``: the JSON silently replaced by the page), or an output naming
one of the command's inputs (``simulate s.yaml --trace s.yaml``: the scenario replaced by its
trace), are refused before anything runs.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from pi_continuity_harness.commands import UsageError

__all__ = [
    "check_creatable",
    "check_directory",
    "check_distinct",
    "check_file",
    "same_path",
    "typescript_inputs",
]


def _existing_ancestor(path: Path, option: str) -> Path:
    """The nearest existing ancestor of ``path``, which must be a directory."""
    current = path.parent
    while not current.exists():
        if current.is_symlink():
            raise UsageError(f"{option} {path}: {current} is a dangling symbolic link")
        current = current.parent
    if not current.is_dir():
        raise UsageError(f"{option} {path}: {current} is not a directory")
    return current


def _is_link_loop(path: Path) -> bool:
    """Whether following ``path`` goes round a loop of symbolic links (ELOOP): ``exists()`` and
    ``is_dir()`` both say False there, so without this a loop looked like a path to create."""
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def _try_writing_in(directory: Path, option: str, path: Path) -> None:
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".pi-continuity-harness-probe-"):
            pass
    except OSError as error:
        raise UsageError(f"{option} {path}: cannot write in {directory}: {error.strerror or error}") from None


def check_file(option: str, path: Path | None) -> None:
    """``path`` can be written as a file by option ``option`` (None: not asked for)."""
    if path is None:
        return
    if _is_link_loop(path):
        raise UsageError(f"{option} {path}: goes round a loop of symbolic links")
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory")
    parent = path.parent
    if not parent.exists():
        raise UsageError(f"{option} {path}: no such directory: {parent}")
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: {parent} is not a directory")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: is not writable")
    _try_writing_in(parent, option, path)


def check_creatable(option: str, path: Path) -> None:
    """A file can be written at ``path`` by option ``option`` with its missing directories (which
    the writer makes: ``--html``): tried in the nearest existing ancestor."""
    _try_writing_in(_existing_ancestor(path, option), option, path)


def check_directory(option: str, path: Path | None) -> None:
    """``path`` can be (or become) a directory that option ``option`` writes into."""
    if path is None:
        return
    if _is_link_loop(path):
        raise UsageError(f"{option} {path}: goes round a loop of symbolic links")
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"{option} {path}: exists and is not a directory")
        _try_writing_in(path, option, path)
        return
    _try_writing_in(_existing_ancestor(path, option), option, path)


def same_path(first: Path, second: Path) -> bool:
    """Whether ``first`` and ``second`` name one file: the same path once links are followed
    (``./x`` and ``x``, a link and its target), or two names (hard links) of one existing file."""
    try:
        if first.resolve() == second.resolve():
            return True
    except (OSError, RuntimeError):  # a loop of symbolic links: compare the paths as given
        if first.absolute() == second.absolute():
            return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (yet): only the comparison above can say
        return False


def check_distinct(
    outputs: Mapping[str, Path | None],
    *,
    inputs: Sequence[tuple[str, Path | None]] = (),
    writes: Mapping[str, tuple[str, ...]] | None = None,
) -> None:
    """No two outputs name one path and no output names an input (None: not asked for).

    ``outputs``: the paths a command writes, by option (files and directories alike: two
    options writing into one directory, or a file where a directory goes, clash as well).
    ``inputs``: what it reads, each with how a message names it (``the scenario``, ``--expect-trace``).
    ``writes``: for a directory option, the files it writes in it (``--report``:
    ``validation-record.json``...), so a file option naming one of them is refused as well.
    """
    named = _written(outputs, writes or {})
    for index, (what, path) in enumerate(named):
        for label, source in inputs:
            if source is not None and same_path(path, source):
                raise UsageError(
                    f"{what}: the same path as {label} {source}: an output must not replace an input"
                )
        for other, other_path in named[:index]:
            if same_path(path, other_path):
                raise UsageError(f"{other} and {what} name the same path: each output needs its own")


def _written(
    outputs: Mapping[str, Path | None], writes: Mapping[str, tuple[str, ...]]
) -> list[tuple[str, Path]]:
    """Each output as (how a message names it, the path it writes): a directory option once for
    itself and once per file it writes there (``--report out (validation-record.json)``)."""
    named: list[tuple[str, Path]] = []
    for option, path in outputs.items():
        if path is None:
            continue
        named.append((f"{option} {path}", path))
        named.extend((f"{option} {path} ({name})", path / name) for name in writes.get(option, ()))
    return named


def typescript_inputs(extensions: Sequence[str]) -> list[tuple[str, Path | None]]:
    """The TypeScript implementations among ``--extension`` values, as inputs of
    :func:`check_distinct`: before, ``run --target pi --extension ext.ts --json ext.ts`` replaced
    the implementation with the results."""
    return [("--extension", Path(spec)) for spec in extensions if spec.endswith(".ts")]
