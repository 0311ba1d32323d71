"""What ``Trace.emit`` keeps of its fields: numbers and booleans as they are, ``None`` left out,
the work directory and each alias written ``$WORK`` in strings, inside lists, tuples and dicts
too, and a sibling directory left alone."""

from __future__ import annotations

import enum

import pytest

from pi_continuity_harness.scenario.trace import Trace


class _Level(enum.IntEnum):
    HIGH = 2


def test_emit_keeps_numbers_and_writes_every_root_as_work() -> None:
    trace = Trace(lambda: 7, "/w/run-7", aliases=("/v/root", "/alias"))
    record = trace.emit(
        "fs",
        "write",
        count=3,
        ratio=0.5,
        flag=False,
        level=_Level.HIGH,
        missing=None,
        path="/w/run-7/project/a.md",
        sibling="/w/run-70/a.md",
        both="/v/root/x and /alias/y",
        nested={"paths": ["/w/run-7/b", ("/alias/c", 1)], "n": True},
    )
    assert record == {
        "seq": 0,
        "t": 7,
        "kind": "fs",
        "name": "write",
        "count": 3,
        "ratio": 0.5,
        "flag": False,
        "level": 2,
        "path": "$WORK/project/a.md",
        "sibling": "/w/run-70/a.md",
        "both": "$WORK/x and $WORK/y",
        "nested": {"paths": ["$WORK/b", ["$WORK/c", 1]], "n": True},
    }
    assert type(record["flag"]) is bool and type(record["level"]) is _Level


def test_emit_refuses_reserved_fields() -> None:
    trace = Trace(lambda: 0, "/w")
    with pytest.raises(ValueError, match=r"\['seq'\] are reserved"):
        trace.emit("host", "x", seq=1)
