"""Fixtures shared by the test packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from pi_continuity_harness.targets.realpi import bytecode_cache_env, default_cache_dir

ReplayFeature = Callable[..., "subprocess.CompletedProcess[str]"]


def _keep_bytecode() -> None:
    """The tests' Python processes keep compiled modules in the harness's bytecode cache
    (``<cache>/tmp/pycache``, :func:`bytecode_cache_env`), also under
    ``PYTHONDONTWRITEBYTECODE=1``.

    The README's test command starts about 860 Python processes (pytest-xdist's workers, the
    CLI, nested pytest runs, Dask workers, real Pi's bridges). With bytecode writing off, each
    compiled every harness module it imported (0.33 against 0.23 CPU-s for the main packages)
    and each pytest rewrote the assertions of every test module again (pytest caches the
    rewritten modules only when it may write bytecode). A prefix keeps the environment's promise
    that no ``__pycache__`` appears beside a source file. Set here, at the first conftest's
    import, before pytest-xdist starts its workers, so they and every subprocess inherit it;
    the rest of this process writes there too. Measured on 3 December 2026 (idle 2-core
    machine, a cold cache): 345 s and 555 CPU-s before, 331 s and 531 CPU-s after."""
    prefix = bytecode_cache_env(default_cache_dir())["PYTHONPYCACHEPREFIX"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_keep_bytecode()


def _pin_hypothesis() -> None:
    """Every Hypothesis test draws the same examples on every run, from a seed made from the
    test's own name (``derandomize``), and keeps no example database: a clean clone's verdict
    is the same on every machine and every run, so a release gate cannot pass once and fail
    the next time on the same tree.

    Before, each run drew new random examples. That is how the test of the YAML loader met
    ``0x_`` on 7 December 2026, outside the change under test; that example is now an
    ``@example`` of its test. Looking for new counterexamples is still a command away:
    ``pytest --hypothesis-profile dev`` (or ``HYPOTHESIS_PROFILE=dev``) draws at random, and
    pins what it finds as an ``@example``. ``tests/explore/test_state_machine.py`` reads the
    same variable for its own example and step counts."""
    settings.register_profile("ci", derandomize=True, database=None)
    settings.register_profile("dev", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_pin_hypothesis()


def _start_order(item: pytest.Item) -> tuple[int, float]:
    """(0: slow on real Pi, 1: slow, 2: the rest; then the longest first, by the ``seconds``
    a ``slow`` mark may give: see :func:`pytest_collection_modifyitems`)."""
    slow = item.get_closest_marker("slow")
    if slow is None:
        return (2, 0.0)
    seconds = -float(slow.kwargs.get("seconds", 0))
    return (0 if item.get_closest_marker("realpi") is not None else 1, seconds)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` start first, those on real Pi before the others, the longest
    (``@pytest.mark.slow(seconds=N)``, N measured) before the rest (a stable sort: otherwise in
    collection order, the same in every pytest-xdist worker, as xdist requires).

    ``--dist loadscope`` hands a worker a module (or class) at a time in the order of the
    collection, so the three real-Pi suite runs, collected last, ran at the end of the run with
    the other core idle. Measured on an idle machine, one tree after the other: 591 s before
    (the three took 140, 124 and 107 s), 501 s with this order and two scenarios at once in
    each (74, 70 and 53 s). Real-Pi tests go first because they mostly wait for Pi, so they
    overlap well with the rest."""
    items.sort(key=_start_order)


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A work directory at a short path, for runs on real Pi: its machine root is exactly 128
    characters, so a scenario's run directory may have at most 126, and pytest's ``tmp_path``
    under xdist plus a scenario's name (up to 80 characters) is longer than that."""
    root = Path(tempfile.mkdtemp(prefix="pch-s-", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def replay_feature(tmp_path: Path, short_tmp: Path) -> ReplayFeature:
    """Run a regression ``.feature`` the explorer wrote, with the suite's steps, against an
    implementation: in a fresh pytest process (the suite's conftest as the only plugin, no ini
    of this repository), the way a user who copied it into the suite would."""

    def replay(feature: Path, extension: str, *extra: str) -> subprocess.CompletedProcess[str]:
        module = feature.with_name(f"test_{feature.stem.replace('-', '_')}.py")
        module.write_text(
            f"from pytest_bdd import scenarios\n\nscenarios({feature.name!r})\n", encoding="utf-8"
        )
        ini = tmp_path / "none.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        workdir = short_tmp / f"bdd-{len(list(short_tmp.glob('bdd-*')))}"
        command = [
            sys.executable, "-m", "pytest", str(module), "-q", "-p", "pi_continuity_harness.features.plugin",
            "-p", "no:cacheprovider", "-c", str(ini), "--rootdir", str(feature.parent),
            "--extension", extension, "--harness-workdir", str(workdir), *extra,
        ]  # fmt: skip
        return subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)

    return replay
