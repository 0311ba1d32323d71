"""Spec §9's mandatory headings, read three times on purpose: by the oracle, the scripted model
and the reference. Each has its own transcription, so a mistake in one cannot pass through
the other two; this test says they agree (and, on a machine with the spec, that the oracle's
is the spec's own block)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pi_continuity_harness.features.oracle import MANDATORY_HEADINGS
from pi_continuity_harness.reference.psc import constants
from pi_continuity_harness.scenario.continuity_replies import SCRIPTED_BRIEF_HEADINGS, valid_brief_body
from pi_continuity_harness.scenario.model_script import ModelRequest

SPEC = Path("/work/shared/seeds/pi-session-continuity-spec.md")


def test_the_oracle_the_scripted_model_and_the_reference_read_the_same_headings() -> None:
    assert len(MANDATORY_HEADINGS) == 18 and MANDATORY_HEADINGS[0] == "# Continuity Brief"
    assert SCRIPTED_BRIEF_HEADINGS == MANDATORY_HEADINGS
    assert tuple(constants.MANDATORY_HEADINGS) == MANDATORY_HEADINGS


def test_the_scripted_model_writes_every_heading_once_in_order_and_leaves_out_the_one_asked() -> None:
    request = ModelRequest(kind="extension", index=0, model="fake/m", system_prompt=None, messages=[])
    lines = [line for line in valid_brief_body(request).splitlines() if line.startswith("#")]
    assert tuple(lines) == MANDATORY_HEADINGS
    omitted = valid_brief_body(request, omit="## Next Actions")
    assert "## Next Actions" not in omitted.splitlines()


def test_the_oracle_headings_are_the_spec_block_where_the_spec_is_at_hand() -> None:
    if not SPEC.exists():
        pytest.skip(f"the spec is not on this machine ({SPEC}); the three readings still agree")
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("## 9. Mandatory Continuity Brief structure") :]
    block = re.search(r"```md\n(.*?)```", section, re.S)
    assert block is not None
    assert tuple(block.group(1).splitlines()) == MANDATORY_HEADINGS
