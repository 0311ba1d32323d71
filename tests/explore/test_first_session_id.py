"""``first_session_id`` says a seed's first session id without starting a host (issue 16): it
must be the id a started host gives, or planted artifacts land where no session looks."""

from __future__ import annotations

import pytest

from pi_continuity_harness.explore.runner import first_session_id, probe_session_id


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 39, 40, 123, 4096, 2**31 - 1])
def test_first_session_id_is_the_started_hosts(seed: int) -> None:
    assert first_session_id(seed) == probe_session_id(seed)
