"""The command line assembles every subcommand, and a bare call prints help with status 2."""

from __future__ import annotations

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
