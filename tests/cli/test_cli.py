"""The command line assembles every subcommand, and a bare call prints help with status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pi_continuity_harness.cli import SUBCOMMANDS, build_parser, main


def test_every_subcommand_is_registered_under_its_command_name() -> None:
    parser = build_parser()
    for name in SUBCOMMANDS:
        command = name.replace("_", "-")
        with pytest.raises(SystemExit) as exited:
            parser.parse_args([command, "--help"])
        assert exited.value.code == 0, command


def test_no_subcommand_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


#: What ``--version`` and ``--help`` must not import (issue 16: the CLI answers them in well
#: under 0.2 s because it imports no subcommand module, and these are what those pull in).
HEAVY_MODULES = (
    "pi_continuity_harness.commands.run",
    "pi_continuity_harness.commands.explore",
    "pi_continuity_harness.simulator",
    "pi_continuity_harness.scenario",
    "pi_continuity_harness.features",
    "pi_continuity_harness.explore",
    "pi_continuity_harness.mutants",
    "pi_continuity_harness.targets",
    "pydantic",
    "yaml",
    "rich",
    "pytest",
    "distributed",
)

_IMPORTED = """
import json, sys
from pi_continuity_harness.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_no_subcommand_module(option: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, option], capture_output=True, text=True, check=True
    )
    imported = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "pi_continuity_harness.cli" in imported
    heavy = sorted(m for m in imported if any(m == h or m.startswith(h + ".") for h in HEAVY_MODULES))
    assert heavy == []
    assert ("0.1.0" in done.stdout) if option == "--version" else ("explore" in done.stdout)


def test_a_subcommand_imports_its_own_module_only() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, "schema", "--help"], capture_output=True, text=True, check=True
    )
    imported = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "pi_continuity_harness.commands.schema" in imported
    assert "pi_continuity_harness.commands.explore" not in imported
    assert "pi_continuity_harness.mutants" not in imported


def test_the_lazy_help_lists_what_the_modules_register() -> None:
    """The top-level help, built without the modules, shows each module's own summary."""
    lazy = build_parser("").format_help()
    full = build_parser().format_help()
    assert lazy == full


@pytest.mark.parametrize("command", ["run", "compare", "matrix"])
def test_the_number_of_parallel_workers_has_an_upper_bound(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """Before: ``-n 100000`` tried to start as many pytest-xdist workers (each with a Pi process
    on real Pi); the bound is checked before anything runs."""
    monkeypatch.chdir(str(tmp_path))
    assert main([command, "-n", "100000"]) == 2
    assert capsys.readouterr().err == f"pi-continuity-harness {command}: -n must be at most 64 (got 100000)\n"
