"""The memos of one run's messages (``scenario/identity_memo.py`` ``run_memo``) are emptied when
the next run starts: each entry holds its message, and no later run ever finds one again (its
messages are its own objects), so an exploration process grew by about 0.5 MiB a seed (454 MiB
of resident memory after 600 seeds) until the memos' limits were reached (issue 16's millions
of seeds per worker)."""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.scenario import model_script
from pi_continuity_harness.scenario.identity_memo import IdentityMemo, forget_runs, run_memo

from .helpers import run_example

MEMOS = (model_script._MESSAGE_TEXTS, model_script._MESSAGE_CHARS, model_script._SEARCHES)


def _held(memos: tuple[IdentityMemo[object], ...]) -> list[object]:
    return [obj for memo in memos for obj, _value in memo._known.values()]


def test_a_run_start_forgets_the_memos_of_the_last_runs_messages(tmp_path: Path) -> None:
    run_example("threshold-compaction", tmp_path / "first")
    first = _held(MEMOS)  # kept alive here, so no later object can take one's identity
    assert len(first) >= 5
    run_example("threshold-compaction", tmp_path / "second")
    second = _held(MEMOS)
    assert second, "the second run's messages are remembered during it"
    assert not {id(o) for o in first} & {id(o) for o in second}


def test_forget_runs_empties_every_run_memo_and_no_other() -> None:
    mine = run_memo(limit=4)
    other: IdentityMemo[int] = IdentityMemo(limit=4)
    message = {"role": "user"}
    assert mine.get(message, lambda: 1) == 1 and other.get(message, lambda: 1) == 1
    forget_runs()
    assert len(mine) == 0 and len(other) == 1
    assert mine.get(message, lambda: 2) == 2  # made again, not found


def test_a_run_memo_keeps_at_most_its_limit_oldest_first() -> None:
    memo = run_memo(limit=3)
    messages = [{"n": n} for n in range(5)]
    for n, message in enumerate(messages):
        memo.get(message, lambda n=n: n)
    assert [obj for obj, _ in memo._known.values()] == messages[2:]
