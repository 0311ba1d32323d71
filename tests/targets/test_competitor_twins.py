"""The competing extensions have a TypeScript twin each for real Pi (``targets/realpi/
competitors.ts``): the same behaviour names on both sides, so a scenario's competitor means the
same on either target (the real-Pi runs of the P70d outline judge their replies)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pi_continuity_harness.targets.realpi as realpi
from pi_continuity_harness.scenario.competitors import CompetitorBehaviour


def test_every_competitor_behaviour_has_its_typescript_twin_and_no_other() -> None:
    source = (Path(realpi.__file__).parent / "competitors.ts").read_text(encoding="utf-8")
    union = re.search(r"export type CompetitorBehaviour =([^;]+);", source)
    assert union is not None
    typescript = set(re.findall(r'"([A-Za-z0-9_]+)"', union.group(1)))
    assert typescript == set(typing.get_args(CompetitorBehaviour))
    # Every name the union lists is handled by a case of the switch (none falls to the default).
    handled = set(re.findall(r'case "([A-Za-z0-9_]+)":', source))
    assert typescript - {"none"} <= handled
