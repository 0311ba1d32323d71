"""Spec §1/§4/§14: the package has no concepts of repeated runs built in."""

from __future__ import annotations

import re
from pathlib import Path

import pi_continuity_harness.reference.psc as psc
from pi_continuity_harness.reference.psc.synthesis import build_synthesis_request

# Whole words, also inside identifiers: snake_case and camelCase parts count as words.
FORBIDDEN = re.compile(
    r"(?:(?<![A-Za-z])(?:loop|campaign|episode)|(?<![A-Z])(?:Loop|Campaign|Episode)"
    r"|(?<![A-Za-z])(?:LOOP|CAMPAIGN|EPISODE))s?(?![a-z])"
)
PACKAGE_DIR = Path(psc.__file__).parent


def test_package_source_never_uses_the_words_loop_campaign_or_episode() -> None:
    sources = sorted(PACKAGE_DIR.rglob("*.py"))
    assert len(sources) >= 10
    hits = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if FORBIDDEN.search(line)
    ]
    assert hits == []


def test_the_vocabulary_check_would_catch_an_offending_line() -> None:
    assert FORBIDDEN.search("# track the Loop state")
    assert FORBIDDEN.search("campaign_id = 1")
    assert FORBIDDEN.search("currentEpisodeId = 2")
    assert FORBIDDEN.search("EPISODES = ()")
    assert FORBIDDEN.search("the agent loops")
    assert not FORBIDDEN.search("loopback = 'episodic'")


def test_synthesis_prompt_is_phrased_as_state_of_the_work() -> None:
    request = build_synthesis_request([], handoff_reason="threshold")
    assert "state of the work" in request.system_prompt
    assert "state of the work" in request.user_text
    assert not FORBIDDEN.search(request.system_prompt + request.user_text)
