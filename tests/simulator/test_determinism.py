"""Determinism is tested, not assumed: same scenario and seed → byte-identical outputs.

Every example runs twice in the same work directory path; the trace, the session files
and the project files (the probe extension writes Briefs using ``time.time()`` and
``uuid.uuid4()``, which the simulator virtualises) must be byte-identical. A subprocess with
a different ``PYTHONHASHSEED`` proves no output depends on hash order, and a different seed
changes the ids.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_continuity_harness.features.suite import run_suite

from .helpers import EXAMPLE_NAMES, EXAMPLES, run_example


def digest(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_same_seed_gives_byte_identical_outputs(tmp_path: Path, name: str) -> None:
    workdir = tmp_path / "run"
    first = run_example(name, workdir)
    first_files = first.output_files()
    second = run_example(name, workdir)
    second_files = second.output_files()
    assert sorted(first_files) == sorted(second_files)
    assert "trace.jsonl" in first_files
    assert any(n.startswith("sessions/") for n in first_files)
    for path, data in first_files.items():
        assert data == second_files[path], f"{path} differs between runs"
    assert first.trace_text() == second.trace_text()


def test_the_trace_uses_work_placeholders_not_absolute_paths(tmp_path: Path) -> None:
    result = run_example("threshold-compaction", tmp_path / "run")
    text = result.trace_path.read_text(encoding="utf-8")
    assert str(tmp_path) not in text and "$WORK/" in text
    traces = [run_example("threshold-compaction", tmp_path / d).trace_path.read_bytes() for d in ("a", "b")]
    assert traces[0] == traces[1]  # the trace does not depend on where the run lives


def test_a_different_seed_changes_the_ids(tmp_path: Path) -> None:
    one = run_example("threshold-compaction", tmp_path / "one", seed=1)
    two = run_example("threshold-compaction", tmp_path / "two", seed=2)
    header_one = json.loads(one.session_files()[0].read_text().splitlines()[0])
    header_two = json.loads(two.session_files()[0].read_text().splitlines()[0])
    assert header_one["id"] != header_two["id"]
    ids_one = [r["id"] for r in one.host.trace.records if r["kind"] == "entry"]
    ids_two = [r["id"] for r in two.host.trace.records if r["kind"] == "entry"]
    assert len(ids_one) == len(ids_two) and set(ids_one).isdisjoint(ids_two)


_CHILD = """
import hashlib, json, sys
sys.path.insert(0, {tests!r})
from simulator import probe_extension
from pi_continuity_harness.simulator import load_scenario, simulate
digests = {{}}
for name in {names!r}:
    result = simulate(load_scenario({examples!r} + "/" + name + ".yaml"), workdir={workdir!r} + "/" + name,
                      implementation=probe_extension.extension)
    digests[name] = {{k: hashlib.sha256(v).hexdigest() for k, v in result.output_files().items()}}
print(json.dumps(digests, sort_keys=True))
"""


@pytest.mark.slow
def test_outputs_do_not_depend_on_hash_randomisation(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    here = {name: digest(run_example(name, workdir / name).output_files()) for name in EXAMPLE_NAMES}
    code = _CHILD.format(
        tests=str(Path(__file__).resolve().parents[1]),
        names=EXAMPLE_NAMES,
        examples=str(EXAMPLES),
        workdir=str(workdir),
    )
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == here


@pytest.mark.parametrize(
    ("extension", "selection"),
    [
        ("blitz", {"keyword": "template"}),  # the template list reads every candidate (``catalogue``)
        ("reference", {"keyword": "archiveretention or stale"}),  # pending and archive listings
    ],
)
def test_outputs_do_not_depend_on_the_filesystems_listing_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extension: str, selection: dict[str, str]
) -> None:
    """A directory lists in the filesystem's order (ext4 by hash, tmpfs newest first): the
    references read what they list in name order. ``reference/blitz/templates.py`` read its
    template candidates in listing order and each read is in the trace, so the traces of one
    scenario differed between a run on ext4 and one on the RAM disk. Here the second run lists
    every directory backwards."""

    def traces(root: Path) -> dict[str, str]:
        return {
            str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("trace.jsonl"))
        }

    first = run_suite(target="sim", extension=extension, workdir=tmp_path / "a", **selection)
    listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": list(reversed(sorted(listdir(path)))))
    second = run_suite(target="sim", extension=extension, workdir=tmp_path / "b", **selection)
    monkeypatch.undo()
    assert first.results and [r.status for r in first.results] == [r.status for r in second.results]
    one, other = traces(tmp_path / "a"), traces(tmp_path / "b")
    assert one and sorted(one) == sorted(other)
    for name, text in one.items():
        assert text == other[name], f"{name} differs when directories list in another order"


def test_every_machine_file_is_the_same_bytes_in_any_run_directory_the_trust_store_too(
    tmp_path: Path,
) -> None:
    """Pi's trust store holds the project's canonical path; the simulator's canonical paths keep
    its fixed virtual root (before: the run directory's real path, so ``agent/trust.json``
    differed from one directory to the next, found by an audit in stop 28). The decision
    still applies: Pi reads the store with both paths resolved (``simulator/settings.py``)."""
    from pi_continuity_harness.scenario import parse_scenario  # noqa: PLC0415
    from pi_continuity_harness.simulator.settings import TrustDecision, resolve_project_trust  # noqa: PLC0415
    from pi_continuity_harness.simulator.simulation import simulate  # noqa: PLC0415
    from pi_continuity_harness.simulator.virtual_root import VIRTUAL_ROOT  # noqa: PLC0415

    from .helpers import base  # noqa: PLC0415

    scenario = parse_scenario(
        base(saved_trust=False, operations=[{"prompt": "hi"}], model={"agent": [{"text": "ok"}]})
    )
    machines = []
    for name in ("one", "a deeper/two"):
        result = simulate(scenario, workdir=tmp_path / name / "run")
        disk = Path(result.host.disk.workdir)
        machines.append(
            {str(p.relative_to(disk)): p.read_bytes() for p in sorted(disk.rglob("*")) if p.is_file()}
        )
        decision = resolve_project_trust(
            result.host.paths.project_dir, result.host.paths.agent_dir, approve=None
        )
        assert decision == TrustDecision(False, "trust.json decision")
    assert machines[0] == machines[1]
    assert json.loads(machines[0]["agent/trust.json"]) == {f"{VIRTUAL_ROOT}/project": False}


def test_a_hosts_module_random_stream_depends_on_its_seed_alone() -> None:
    """The first state of the module functions' stream is kept per seed (``determinism.py``,
    ``_module_random_template``): each host still starts from ``Random("<seed>:random")``, a
    run's draws do not reach the next host with that seed, and ``True`` is not ``1``."""
    import random  # noqa: PLC0415

    from pi_continuity_harness.simulator.determinism import (  # noqa: PLC0415
        SeededRandom,
        VirtualClock,
        deterministic_environment,
    )
    from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop  # noqa: PLC0415

    expected = random.Random("7:random")
    first = SeededRandom(7)
    assert first.module_random.getstate() == expected.getstate()
    loop = VirtualTimeEventLoop()
    try:
        with deterministic_environment(VirtualClock(loop), first):
            drawn = [random.random() for _ in range(3)]
    finally:
        loop.close()
    assert drawn == [expected.random() for _ in range(3)]
    assert first.module_random.getstate() == expected.getstate()
    again = SeededRandom(7)
    assert again.module_random.getstate() == random.Random("7:random").getstate()
    assert SeededRandom(True).module_random.getstate() == random.Random("True:random").getstate()
    assert SeededRandom(1).module_random.getstate() == random.Random("1:random").getstate()


@pytest.mark.parametrize("in_place", [True, False], ids=["state swapped in place", "getstate and setstate"])
def test_the_module_functions_draw_from_the_run_inside_and_from_the_process_outside(
    monkeypatch: pytest.MonkeyPatch, in_place: bool
) -> None:
    """While a host runs, ``random``'s module functions draw from the run's stream, which goes
    on across the host's steps; outside, from the process's own, which the run never moves.
    Two hosts nest. ``determinism.py`` exchanges the two states in place where it can (CPython:
    ``_views_work``), else through ``getstate``/``setstate``; both must behave alike, with
    ``gauss`` (whose second value waits in ``gauss_next``) as well as ``random``."""
    import random  # noqa: PLC0415

    from pi_continuity_harness.simulator import determinism  # noqa: PLC0415
    from pi_continuity_harness.simulator.virtual_loop import VirtualTimeEventLoop  # noqa: PLC0415

    assert determinism._views_work()  # CPython: the in-place exchange is what runs
    if not in_place:
        monkeypatch.setattr(determinism, "_views_work", lambda: False)
    first, second = determinism.SeededRandom(7), determinism.SeededRandom(8)
    assert (first.module_random_view is not None) is in_place
    run7, run8 = random.Random("7:random"), random.Random("8:random")
    random.seed("the process")
    process = random.Random("the process")
    loop = VirtualTimeEventLoop()
    clock = determinism.VirtualClock(loop)

    def draw(generator: random.Random) -> list[float]:
        return [generator.random(), generator.gauss(0.0, 1.0)]

    try:
        for _step in range(3):
            assert draw(random) == draw(process)  # type: ignore[arg-type]
            with determinism.deterministic_environment(clock, first):
                assert draw(random) == draw(run7)  # type: ignore[arg-type]
                with determinism.deterministic_environment(clock, second):
                    assert draw(random) == draw(run8)  # type: ignore[arg-type]
                assert draw(random) == draw(run7)  # type: ignore[arg-type]
            assert random.gauss(0.0, 1.0) == process.gauss(0.0, 1.0)  # leaves a ``gauss_next``
    finally:
        loop.close()
    assert random.getstate() == process.getstate()
    assert first.module_random.getstate() == run7.getstate()
    assert second.module_random.getstate() == run8.getstate()
