"""The README's test command hands the slowest tests out first (issue 16).

``tests/conftest.py`` sorts the collection so that the slow real-Pi tests come first, and
``--dist loadscope`` hands a worker one scope (a module or a class) at a time. pytest-xdist 3.8
also reorders the scopes by their number of tests, largest first, unless
``--no-loadscope-reorder`` is given: that put the three real-Pi suite runs (one test each, 60
to 90 s) at the very end of the run on one worker while the other sat idle. Measured on 3
December 2026 on the idle 2-core machine: 363 s with the reorder, 345 s without it.

These tests drive xdist's own scheduler with this run's configuration and collection, so they
fail when the option is dropped from ``addopts`` or xdist changes how it hands out scopes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from xdist.scheduler import LoadScopeScheduling


@dataclass
class _Gateway:
    id: str


@dataclass
class _Node:
    """The part of xdist's ``WorkerController`` that the scheduler talks to."""

    name: str
    sent: list[int] = field(default_factory=list)
    shutting_down: bool = False

    @property
    def gateway(self) -> _Gateway:
        return _Gateway(self.name)

    def send_runtest_some(self, indices: Sequence[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True

    def __hash__(self) -> int:
        return hash(self.name)


def _first_scopes(config: pytest.Config, collection: list[str]) -> list[str]:
    """The scope of the first test each of two workers is given, as xdist schedules them."""
    scheduler = LoadScopeScheduling(config)
    scheduler.numnodes = 2
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        scheduler.add_node(node)  # type: ignore[arg-type]
        scheduler.add_node_collection(node, collection)  # type: ignore[arg-type]
    scheduler.schedule()
    return [collection[node.sent[0]].rsplit("::", 1)[0] for node in nodes]


def _slow_realpi_scopes(items: Sequence[pytest.Item]) -> list[str]:
    return [
        item.nodeid.rsplit("::", 1)[0]
        for item in items
        if item.get_closest_marker("realpi") is not None and item.get_closest_marker("slow") is not None
    ]


def test_the_test_command_keeps_the_collection_order_of_scopes(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getoption("loadscopereorder") is False, (
        "pytest-xdist reorders scopes by size: the slow real-Pi tests would run last "
        "(add --no-loadscope-reorder to addopts)"
    )


@pytest.mark.parametrize(
    ("reorder", "slowest_first"),
    [(None, True), (True, False)],
    ids=["this-configuration-starts-the-two-slowest-real-pi-scopes", "xdists-reorder-would-not"],
)
def test_the_two_workers_start_with_the_two_slowest_real_pi_scopes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, reorder: bool | None, slowest_first: bool
) -> None:
    """With this run's configuration the two workers start with the two slowest real-Pi
    scopes; with xdist's reorder forced on they would not (the check can fail). A run that does
    not collect them (this file alone) schedules a collection of the same shape: two one-test
    real-Pi scopes first, then a scope of many tests."""
    collection = [item.nodeid for item in request.session.items]
    slow = list(dict.fromkeys(_slow_realpi_scopes(request.session.items)))
    if len(slow) < 2:  # a run of a few tests: a collection shaped as the whole command's
        slow = ["tests/realpi/test_a.py", "tests/realpi/test_b.py"]
        collection = [f"{scope}::test_suite" for scope in slow] + [f"tests/test_c.py::t{i}" for i in range(9)]
    monkeypatch.setattr(request.config.option, "tx", ["2*popen"], raising=False)
    if reorder is not None:
        monkeypatch.setattr(request.config.option, "loadscopereorder", reorder)
    first = _first_scopes(request.config, collection)
    assert (first == slow[:2]) is slowest_first, f"the workers start with {first}; the slowest: {slow[:2]}"
