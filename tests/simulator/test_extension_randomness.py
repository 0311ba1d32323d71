"""Extension code is deterministic without being written for the harness: ``secrets``,
``random.SystemRandom``, ``random``'s module functions and ``tempfile``'s names give the same
values for the same seed in any run (``simulator/determinism.py``). Before stop 28 only
``os.urandom`` (so ``uuid.uuid4``) was virtualised: a ``secrets.token_hex`` or a temporary
file's name, which reaches the trace through the ``fs`` record, differed from run to run."""

from __future__ import annotations

import os
import random
import secrets
import tempfile
from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI

from .helpers import base, run


def _drawing(seen: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    def ext(pi: ExtensionAPI) -> None:
        async def start(_event: Any, _ctx: Any) -> None:
            handle, name = tempfile.mkstemp(suffix=".x")
            os.close(handle)
            seen.append(
                {
                    "secrets": secrets.token_hex(4),
                    "system": random.SystemRandom().random(),
                    "module": random.random(),
                    "choice": random.choice("abcdefgh"),
                    "temporary": os.path.basename(name),
                }
            )

        pi.on("session_start", start)

    return ext


def _trace(result: Any) -> str:
    return Path(result.workdir, "trace.jsonl").read_text(encoding="utf-8")


def test_an_extensions_random_draws_are_the_same_for_the_same_seed(tmp_path: Path) -> None:
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    one = run(tmp_path, base(operations=[{"prompt": "hi"}]), _drawing(first), seed=3, sub="one")
    two = run(tmp_path, base(operations=[{"prompt": "hi"}]), _drawing(second), seed=3, sub="two")
    assert first == second and len(first) == 1
    assert _trace(one) == _trace(two)
    other: list[dict[str, Any]] = []
    run(tmp_path, base(operations=[{"prompt": "hi"}]), _drawing(other), seed=4, sub="three")
    assert other[0]["secrets"] != first[0]["secrets"]
    assert other[0]["temporary"] != first[0]["temporary"]


def test_the_process_keeps_its_own_random_sequence_around_a_simulation(tmp_path: Path) -> None:
    """The module functions' state is swapped in and out: code outside the simulation draws
    what it would have drawn without one, and ``tempfile`` makes its own names again."""
    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    before = random.random()
    run(tmp_path, base(operations=[{"prompt": "hi"}]), _drawing([]), seed=3)
    assert [before, random.random(), random.random()] == expected
    names = tempfile._get_candidate_names()  # type: ignore[attr-defined]
    assert type(names).__module__ == "tempfile"
