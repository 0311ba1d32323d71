"""``explore --target pi`` with a Python implementation plays, after each seed's host-behaviour
cases, the seed's case of the system's explorer plug-in on both targets
(``explore/differential/runner.py``: ``_plays``): the case the simulator explores, without what
only the simulator can do, and only in the mode real Pi is driven in (RPC)."""

from __future__ import annotations

from pi_continuity_harness.explore.differential.runner import _plays
from pi_continuity_harness.explore.engine import ExploreSettings, differential_times
from pi_continuity_harness.explore.plugins import plugin_named


def _settings(system: str, steps: int = 12) -> ExploreSettings:
    return ExploreSettings(
        steps=steps, extension="reference", system=system, out_dir=None, work_root="/nonexistent", target="pi"
    )


def test_a_seed_plays_its_host_cases_then_its_system_case_without_simulator_only_faults() -> None:
    system = "pi-session-continuity"
    played = stripped = 0
    for seed in range(40):
        plays, not_played = _plays(seed, _settings(system))
        labels = [label for label, _ in plays]
        assert labels[:2] == ["x", "n"]
        case = plugin_named(system).case(seed, 12)
        if case.scenario().mode != "rpc":
            assert labels == ["x", "n"] and not_played is not None
            continue
        assert not_played is None
        played += 1
        assert labels == ["x", "n", "s"]
        [(_, chosen)] = [p for p in plays if p[0] == "s"]
        # The plug-in's case, its operations and options kept; the trace-level faults gone.
        assert chosen.operations == case.operations
        for name in ("fs", "crash", "tamper"):
            if hasattr(chosen, name):
                stripped += bool(getattr(case, name))
                assert getattr(chosen, name) == ()
    assert played >= 30
    assert stripped > 0  # some seeds had simulator-only faults to leave out


def test_blitz_handoffs_cases_are_not_played_on_both_targets_and_the_seed_says_why() -> None:
    """Its cases run wall-clock timers (a reminder 1 s after a readiness retry), which real Pi
    reads from the machine's clock and the simulator from its virtual one: with no tolerance,
    they cannot agree. The host cases are played."""
    settings = _settings("pi-blitz-handoff")
    for seed in range(20):
        plays, not_played = _plays(seed, settings)
        assert [label for label, _ in plays] == ["x", "n"]
        assert not_played is not None
        assert not_played.startswith("not played: its cases run the handoff's wall-clock timers")


def test_a_print_mode_seed_plays_no_system_case_and_says_why() -> None:
    seed = next(
        s for s in range(100) if plugin_named("pi-session-continuity").case(s, 12).scenario().mode == "print"
    )
    plays, not_played = _plays(seed, _settings("pi-session-continuity"))
    assert [label for label, _ in plays] == ["x", "n"]
    assert not_played == "not played: real Pi is driven over RPC, the case's mode is print"


def test_the_summary_counts_the_seeds_whose_system_case_was_not_played_by_why() -> None:
    costs = [
        {"simSeconds": 1.0, "piSeconds": 9.0, "runs": 3},
        {"simSeconds": 1.0, "piSeconds": 9.0, "runs": 2, "systemCase": "not played: b"},
        {"simSeconds": 1.0, "piSeconds": 9.0, "runs": 2, "systemCase": "not played: a"},
        {"simSeconds": 1.0, "piSeconds": 9.0, "runs": 2, "systemCase": "not played: b"},
    ]
    summary = differential_times(costs)
    assert summary["runsPerTarget"] == 9
    assert list(summary["systemCasesNotPlayed"].items()) == [("not played: a", 1), ("not played: b", 2)]
