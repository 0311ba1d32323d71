"""The ``summaryFiles`` witness of ``session_compact`` (spec §3 "Durable Continuity Brief first").

Pi appends the compaction entry and emits ``session_compact`` with no await in between
(``agent-session.js:2402-2409, 2691-2698``); the real-Pi observer, loaded first, lists the
project's files holding the summary's exact bytes before any later handler runs. The simulator
records the same in the ``event:session_compact`` trace record, as the host (never traced).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import CONFIG_DIR_NAME, BeforeCompactResult, CompactionResult, ExtensionAPI
from pi_continuity_harness.scenario.observed import summary_files

from .helpers import base, event_records, long_text, run

SUMMARY = "# Brief\n\nthe exact summary bytes\n"


def brief_writer(*, before_commit: bool) -> Any:
    """Returns :data:`SUMMARY` as the custom summary; writes it to ``.pi/brief.md`` in the hook
    (``before_commit``) or only in ``session_compact``, once Pi has appended the entry."""

    def factory(pi: ExtensionAPI) -> None:
        def write(ctx: Any) -> None:
            directory = os.path.join(ctx.cwd, CONFIG_DIR_NAME)
            os.makedirs(directory, exist_ok=True)
            with open(os.path.join(directory, "brief.md"), "w", encoding="utf-8") as handle:
                handle.write(SUMMARY)

        async def before(event: Any, ctx: Any) -> BeforeCompactResult:
            if before_commit:
                write(ctx)
            prep = event.preparation
            return BeforeCompactResult(
                compaction=CompactionResult(
                    summary=SUMMARY,
                    first_kept_entry_id=prep.first_kept_entry_id,
                    tokens_before=prep.tokens_before,
                )
            )

        async def committed(event: Any, ctx: Any) -> None:
            if not before_commit:
                write(ctx)

        pi.on("session_before_compact", before)
        pi.on("session_compact", committed)

    return factory


COMPACTION = [{"prompt": long_text("one")}, {"prompt": long_text("two")}, {"compact": None}]


@pytest.mark.parametrize(("before_commit", "witnessed"), [(True, True), (False, False)])
def test_the_witness_lists_the_files_that_held_the_summary_when_pi_appended_the_entry(
    tmp_path: Path, before_commit: bool, witnessed: bool
) -> None:
    result = run(tmp_path, base(operations=COMPACTION), brief_writer(before_commit=before_commit))
    [event] = event_records(result, "session_compact")
    brief = f"$WORK/project/{CONFIG_DIR_NAME}/brief.md"
    assert event["summaryFiles"] == ([brief] if witnessed else [])
    # Either way the file exists afterwards: only the witness tells the two apart.
    assert (result.machine_dir / "project" / CONFIG_DIR_NAME / "brief.md").read_text() == SUMMARY
    # The witness is the host's reading: no fs record of the implementation's for it.
    reads = [r for r in result.host.trace.records if r["kind"] == "fs" and r["name"] == "read"]
    assert reads == []


def test_summary_files_match_exact_bytes_only_and_skip_symbolic_links(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "same.md").write_bytes(SUMMARY.encode())
    (tmp_path / "b.md").write_bytes(SUMMARY.encode())
    (tmp_path / "longer.md").write_bytes(SUMMARY.encode() + b"\n")
    (tmp_path / "other.md").write_bytes(SUMMARY.upper().encode())
    (tmp_path / "link.md").symlink_to(tmp_path / "b.md")
    assert summary_files(str(tmp_path), SUMMARY) == [str(tmp_path / "a" / "same.md"), str(tmp_path / "b.md")]
    assert summary_files(str(tmp_path / "missing"), SUMMARY) == []
