"""The test command's Python processes keep their bytecode in the harness's cache and never
beside a source file (``tests/conftest.py``, ``_keep_bytecode``), whatever
``PYTHONDONTWRITEBYTECODE`` the environment sets.

Without the prefix, an environment with ``PYTHONDONTWRITEBYTECODE=1`` (this machine's) writes
no bytecode at all, and one without it writes ``__pycache__`` beside the sources: either way
the check below fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pi_continuity_harness.targets.realpi import bytecode_cache_env, default_cache_dir


def test_a_subprocess_of_the_tests_writes_bytecode_to_the_cache_and_none_beside_the_source(
    tmp_path: Path,
) -> None:
    (tmp_path / "bytecode_cache_probe.py").write_text("VALUE = 1\n", encoding="utf-8")
    prefix = Path(bytecode_cache_env(default_cache_dir())["PYTHONPYCACHEPREFIX"])
    mirrored = prefix / tmp_path.resolve().relative_to(tmp_path.resolve().anchor)
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import bytecode_cache_probe"],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert not (tmp_path / "__pycache__").exists(), "bytecode beside the source"
        assert list(mirrored.glob("bytecode_cache_probe.*.pyc")), f"no bytecode under {prefix}"
    finally:
        shutil.rmtree(mirrored, ignore_errors=True)
