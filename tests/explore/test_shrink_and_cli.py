"""Minimisation, the ``explore`` command, and the regressions it writes.

The failing implementation here is a proxy-only mutant (it patches no module), so running it
in this process is safe; module-patching mutants only ever run in subprocesses.
"""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import ExtensionAPI
from pi_continuity_harness.cli import main as cli
from pi_continuity_harness.explore.continuity.plugin import PLUGIN, case_for_seed
from pi_continuity_harness.explore.engine import ExploreSettings, explore_seed
from pi_continuity_harness.explore.executor import SchedulerError, open_pool
from pi_continuity_harness.explore.regression import replay_command
from pi_continuity_harness.explore.runner import run_case
from pi_continuity_harness.explore.shrink import ddmin, minimise
from pi_continuity_harness.features.oracle import MESSAGE_PREFIX
from pi_continuity_harness.reference.psc import extension as reference_extension

STEER = "pi_continuity_harness.mutants.catalogue:continuation_as_steer"
_LOADS = itertools.count()


def nondeterministic(pi: ExtensionAPI) -> None:
    """The reference plus a notification that counts loads across runs in this process."""
    reference_extension(pi)
    load = next(_LOADS)
    pi.on("session_start", lambda event, ctx: ctx.ui.notify(f"{MESSAGE_PREFIX}: load {load}", "info"))


def test_ddmin_finds_a_one_minimal_sublist() -> None:
    calls = 0

    def fails(items: list[int]) -> bool:
        nonlocal calls
        calls += 1
        return 3 in items and 7 in items

    assert ddmin(list(range(20)), fails, budget=lambda: True) == [3, 7]
    assert calls < 100


def test_a_failure_shrinks_to_a_few_operations_and_keeps_its_invariant(tmp_path: Path) -> None:
    case = case_for_seed(0, 30)
    failure = run_case(PLUGIN, case, implementation=STEER, workdir=tmp_path / "run")
    assert failure.first is not None and failure.first.invariant == "continuation_is_follow_up"
    shrunk = minimise(PLUGIN, case, failure, implementation=STEER, workdir=tmp_path / "run", max_seconds=60)
    assert shrunk.result.first is not None
    assert shrunk.result.first.invariant == "continuation_is_follow_up"
    assert len(shrunk.case.operations) <= 3 < len(case.operations)
    assert len(shrunk.case.operations) < failure.operations_run


def test_explore_passes_on_the_reference_and_checks_determinism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "explore.json"
    code = cli(
        [
            "explore",
            "--seeds",
            "3",
            "--steps",
            "20",
            "--check-determinism",
            "--json",
            str(report),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "operations/s" in out and "seeds/s" in out and "all seeds passed" in out
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [s["determinism"] for s in data["seeds"]] == ["identical"] * 3
    assert all(s["swarm"]["seed"] == s["seed"] for s in data["seeds"])


def test_the_determinism_check_reports_the_first_difference_of_two_runs(tmp_path: Path) -> None:
    def explore(extension: str) -> Any:
        settings = ExploreSettings(
            steps=10,
            extension=extension,
            system=PLUGIN.system,
            out_dir=None,
            work_root=str(tmp_path),
            check_determinism=True,
        )
        return explore_seed(3, settings)

    deterministic = explore("reference")
    assert deterministic.ok and deterministic.determinism == "identical"
    report = explore(f"{__name__}:nondeterministic")
    assert report.violation is None and not report.harness_errors
    assert not report.ok
    assert report.determinism is not None and report.determinism.startswith("first difference at record")
    assert "load 0" in report.determinism


def test_explore_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["explore", "--seeds", "0"]) == 2
    assert cli(["explore", "--extension", "no.such.module:factory"]) == 2
    capsys.readouterr()


class _ReachedError(Exception):
    """Raised in place of the exploration (or the kill matrix): the arguments were accepted."""


def _reached(*_args: object, **_kwargs: object) -> None:
    raise _ReachedError


@pytest.mark.parametrize(
    ("command", "option", "most", "before"),
    [
        ("explore", "--seeds", 1_000_000, ["--steps", "1"]),
        ("explore", "--steps", 1_000, ["--seeds", "1"]),
        ("mutants", "--explore-seeds", 1_000_000, ["--only", "continuation_as_steer"]),
        ("mutants", "--explore-steps", 1_000, ["--only", "continuation_as_steer"]),
        ("explore", "--jobs", 64, ["--seeds", "1"]),
        ("mutants", "--jobs", 64, ["--only", "continuation_as_steer"]),
    ],
    ids=[
        "explore-seeds",
        "explore-steps",
        "mutants-explore-seeds",
        "mutants-explore-steps",
        "explore-jobs",
        "mutants-jobs",
    ],
)
def test_seeds_and_steps_have_a_documented_upper_bound_checked_before_anything_runs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    option: str,
    most: int,
    before: list[str],
) -> None:
    """Before: ``--seeds 100000000000000`` was a MemoryError traceback at once, and ``--steps
    1000000000000`` grew until the machine ran out of memory; ``mutants`` passed its values on
    to every mutant's explorer. The bound itself is accepted. Neither the exploration nor the
    kill matrix runs here: both are replaced by a function that says they were reached."""
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))  # the explorer's work directory, left here
    monkeypatch.setattr("pi_continuity_harness.commands.explore.explore_seeds", _reached)
    monkeypatch.setattr("pi_continuity_harness.commands.mutants.run_matrix", _reached)
    out = ["--out", str(tmp_path / "out")] if command == "explore" else []
    for value in (100_000_000_000_000, most + 1):
        assert cli([command, *before, *out, option, str(value)]) == 2
        assert capsys.readouterr().err == (
            f"pi-continuity-harness {command}: {option} must be at most {most:,} (got {value})\n"
        )
    with pytest.raises(_ReachedError):
        cli([command, *before, *out, option, str(most)])


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("garbage", "no port (tcp://HOST:PORT; 8786 is Dask's default)"),
        ("tcp://10.0.0.1", "no port (tcp://HOST:PORT; 8786 is Dask's default)"),
        ("tcp://10.0.0.1:port", "the port is not a number from 1 to 65535 (tcp://HOST:PORT)"),
        ("tcp://10.0.0.1:70000", "the port is not a number from 1 to 65535 (tcp://HOST:PORT)"),
        ("tcp://:8786", "not an address (tcp://HOST:PORT)"),
        ("udp://10.0.0.1:8786", "unknown protocol 'udp' (tcp://HOST:PORT or tls://HOST:PORT)"),
    ],
    ids=["garbage", "no-port", "a-word-for-a-port", "port-too-large", "no-host", "udp"],
)
@pytest.mark.parametrize("command", ["explore", "mutants"])
def test_a_scheduler_that_is_no_address_is_refused_before_the_pool_opens(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    address: str,
    problem: str,
) -> None:
    """Before: Dask tried ``--scheduler garbage`` for a minute, then a ValueError traceback
    (``missing port number in address 'garbage'``). No pool opens here: ``open_pool`` is
    replaced by a function that says it was reached (a good address reaches it)."""
    monkeypatch.chdir(tmp_path)  # explore's --out, explore-out, is held (and created) here
    monkeypatch.setattr(f"pi_continuity_harness.commands.{command}.open_pool", _reached)
    jobs = ["--jobs", "1"] if command == "mutants" else []
    assert cli([command, *jobs, "--scheduler", address]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness {command}: --scheduler {address}: {problem}\n"
    with pytest.raises(_ReachedError):
        cli([command, *jobs, "--scheduler", "tcp://10.0.0.1:8786"])


def test_a_scheduler_dask_cannot_read_is_one_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """What Dask raises for an address it cannot read (a ValueError) is a SchedulerError, as
    one it cannot reach (an OSError) was; no cluster is started (the client is replaced)."""
    import distributed  # noqa: PLC0415  (the scale extra)

    def unreadable(address: str, **_kwargs: object) -> None:
        raise ValueError(f"missing port number in address {address!r}")

    monkeypatch.setattr(distributed, "Client", unreadable)
    expected = "cannot reach the Dask scheduler at tcp://h:1: missing port"
    with pytest.raises(SchedulerError, match=expected), open_pool(scheduler="tcp://h:1"):
        pass


def test_the_replay_command_of_a_failure_is_quoted_for_the_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the printed (and ``--json``) command was the paths as they are, so in a
    directory with a space it split into other arguments when pasted."""
    here = tmp_path / "a dir"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("PCH_SCRATCH", str(here))  # the failing run is kept: keep it here
    argv = [
        "explore",
        "--seeds",
        "1",
        "--steps",
        "30",
        "--extension",
        STEER,
        "--out",
        "out dir",
        "--no-minimise",
    ]
    assert cli([*argv, "--quiet", "--json", "r.json"]) == 1
    [printed] = [
        line.split("replay:", 1)[1] for line in capsys.readouterr().out.splitlines() if "replay:" in line
    ]
    [seed] = json.loads((here / "r.json").read_text(encoding="utf-8"))["seeds"]
    assert seed["minimised"]["replay"] == printed.strip()
    words = shlex.split(printed)
    out = here / "out dir"
    name = Path(seed["minimised"]["yaml"]).stem
    assert words == [
        "pi-continuity-harness",
        "replay",
        str(out / f"{name}.yaml"),
        "--workdir",
        str(out / "runs" / name),
        "--expect-trace",
        str(out / f"{name}.trace.jsonl"),
        "--extension",
        STEER,
    ]
    assert cli([*words[1:], "--quiet"]) == 0  # the command, as the shell splits it, replays
    assert "byte-identical" in capsys.readouterr().out
    # An extension spec is quoted too (one with shell characters stays one argument).
    spec = "my ext:$factory"
    assert shlex.split(replay_command(out / "s.yaml", out, out / "t.jsonl", spec))[-2:] == [
        "--extension",
        spec,
    ]


@pytest.mark.slow
def test_a_failing_seed_is_written_as_a_replayable_scenario_and_a_regression_feature(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    replay_feature: Callable[[Path, str], subprocess.CompletedProcess[str]],
) -> None:
    monkeypatch.setenv("PCH_SCRATCH", str(tmp_path))  # the failing run is kept: keep it here
    out = tmp_path / "out"
    code = cli(
        ["explore", "--seeds", "1", "--steps", "30", "--extension", STEER, "--out", str(out), "--quiet"]
    )
    printed = capsys.readouterr().out
    assert code == 1
    assert "continuation_is_follow_up" in printed and "replay:" in printed
    [yaml_file] = sorted(out.glob("*.yaml"))
    [feature] = sorted(out.glob("*.feature"))
    [trace] = sorted(out.glob("*.trace.jsonl"))
    workdir = out / "runs" / yaml_file.stem
    assert (
        cli(
            [
                "replay",
                str(yaml_file),
                "--workdir",
                str(workdir),
                "--expect-trace",
                str(trace),
                "--extension",
                STEER,
                "--quiet",
            ]
        )
        == 0
    )
    assert "byte-identical" in capsys.readouterr().out
    text = feature.read_text(encoding="utf-8")
    assert f'Given the scenario file "{yaml_file.name}"' in text
    assert 'Then invariant "continuation_is_follow_up" holds' in text

    against_mutant = replay_feature(feature, STEER)
    assert against_mutant.returncode == 1, against_mutant.stdout[-2000:]
    assert "continuation_is_follow_up" in against_mutant.stdout
    against_reference = replay_feature(feature, "reference")
    assert against_reference.returncode == 0, against_reference.stdout[-2000:]

    # A misspelt invariant name is an error, never a step that holds because nothing has that name.
    misspelt = out / "misspelt.feature"
    misspelt.write_text(
        text.replace("continuation_is_follow_up", "continuation_is_folow_up"), encoding="utf-8"
    )
    against_typo = replay_feature(misspelt, "reference")
    assert against_typo.returncode == 1, against_typo.stdout[-2000:]
    assert "no invariant is named 'continuation_is_folow_up'" in against_typo.stdout
