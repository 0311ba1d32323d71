"""The code of dataclasses' methods kept between processes (``dataclass_code``): the same
functions as ``dataclasses`` makes itself, keyed by their whole text, kept only in a cache
directory that is there, and an unreadable file compiled anew."""

from __future__ import annotations
import __future__

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

import pi_continuity_harness
from pi_continuity_harness import dataclass_code

ROOT = Path(pi_continuity_harness.__file__).resolve().parents[1]


def _classes() -> list[type]:
    """Dataclasses with every kind of method ``dataclasses`` writes."""

    @dataclasses.dataclass(frozen=True, order=True)
    class Frozen:
        a: int
        b: str = "x"
        c: list[int] = dataclasses.field(default_factory=list)
        d: ClassVar[int] = 3

    @dataclasses.dataclass(kw_only=True, unsafe_hash=True)
    class KeywordOnly:
        self: int = 0  # a field named ``self``: the methods name their instance otherwise
        other: Any = None

    @dataclasses.dataclass(slots=True)
    class Slots:
        value: float
        init_only: dataclasses.InitVar[int] = 0

        def __post_init__(self, init_only: int) -> None:
            self.value += init_only

    return [Frozen, KeywordOnly, Slots]


_METHODS = (
    "__init__",
    "__repr__",
    "__eq__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__setattr__",
    "__delattr__",
)


def _codes(classes: list[type]) -> list[tuple[str, str, Any]]:
    return [
        (cls.__name__, name, getattr(cls.__dict__[name], "__code__", None))
        for cls in classes
        for name in _METHODS
        if cls.__dict__.get(name) is not None  # ``__hash__ = None``: no code of its own
    ]


def test_the_kept_exec_makes_the_code_dataclasses_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code objects compare by value, flags included: compiled here with this module's
    ``from __future__ import annotations`` (which ``dataclasses`` does not have), the
    annotations of ``__init__`` would become strings and the codes differ."""
    made = _codes(_classes())
    monkeypatch.setattr(dataclasses, "exec", dataclass_code._exec, raising=False)
    monkeypatch.setattr(dataclass_code, "_CODES", {})
    monkeypatch.setattr(dataclass_code, "_NEW", {})
    kept = _codes(_classes())
    assert len(made) > 15 and len(dataclass_code._NEW) > 15  # compiled here, each text once
    again = _codes(_classes())  # now every text runs from the code kept above
    assert made == kept == again


def test_dataclasses_passes_no_future_flag_to_exec() -> None:
    """``exec`` of a text inherits its caller's ``from __future__`` features; the kept code is
    compiled without any, which is what ``dataclasses``' own ``exec`` gets."""
    features = [value for value in vars(dataclasses).values() if isinstance(value, __future__._Feature)]
    assert features == []


def _run(cache: Path, body: str) -> str:
    """``body`` in a new process with the code kept in ``cache``; its standard output."""
    script = textwrap.dedent(
        """
        import dataclasses
        from pathlib import Path
        from pi_continuity_harness import dataclass_code
        dataclass_code.install(Path({cache!r}))
        assert dataclass_code.installed()
        """
    ).format(cache=str(cache)) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


_POINT = """
@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    {name}: int = 2
print(Point(1), len(dataclass_code._NEW))
"""


def test_a_later_process_runs_the_kept_code(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    first = _run(cache, _POINT.format(name="y"))
    assert first.split()[0] == "Point(x=1," and int(first.split()[-1]) > 0
    (kept,) = (cache / "dataclass-code").iterdir()
    assert kept == dataclass_code.cache_path(cache)
    assert _run(cache, _POINT.format(name="y")).split()[-1] == "0"  # nothing compiled again


def test_a_changed_class_is_a_new_text_never_the_kept_code(tmp_path: Path) -> None:
    """The key is the method's whole text: a field renamed since is compiled anew (a default
    changed is not in the text: ``dataclasses`` passes it to the code it compiles)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    _run(cache, _POINT.format(name="y"))
    changed = _run(cache, _POINT.format(name="z"))
    assert changed.startswith("Point(x=1, z=2)") and int(changed.split()[-1]) > 0


def test_an_unreadable_file_is_compiled_anew(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    path = dataclass_code.cache_path(cache)
    path.parent.mkdir()
    path.write_bytes(b"\xff not marshal")
    assert _run(cache, _POINT.format(name="y")).startswith("Point(x=1, y=2)")
    assert path.read_bytes() != b"\xff not marshal"
    assert _run(cache, _POINT.format(name="y")).split()[-1] == "0"


def test_nothing_is_kept_where_there_is_no_cache_directory(tmp_path: Path) -> None:
    _run(tmp_path / "cache", _POINT.format(name="y"))
    assert not (tmp_path / "cache").exists()


def test_an_exec_with_a_keyword_goes_to_the_builtin_as_it_came(monkeypatch: pytest.MonkeyPatch) -> None:
    """A later Python's ``dataclasses`` may pass ``exec`` a keyword (``closure=``, 3.13): such a
    call is not one this cache knows to key by, so it reaches the builtin whole."""
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(dataclass_code.builtins, "exec", lambda *args, **kwargs: calls.append((args, kwargs)))
    namespace: dict[str, Any] = {}
    dataclass_code._exec("x = 1", namespace, None, closure=None)
    assert calls == [(("x = 1", namespace, None), {"closure": None})]
    assert "x = 1" not in dataclass_code._NEW
