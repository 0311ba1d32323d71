"""The command line as a program collects the garbage once at exit and freezes the rest, so the
interpreter's teardown does not walk it again (``cli._no_collector_pass_at_teardown``); a caller
that passes its arguments, as these tests do, keeps its collector as it was."""

from __future__ import annotations

import atexit
import sys
from collections.abc import Callable

import pytest

from pi_continuity_harness import cli


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], None]]:
    handlers: list[Callable[[], None]] = []
    monkeypatch.setattr(cli, "_AT_EXIT", [])
    monkeypatch.setattr(atexit, "register", handlers.append)
    return handlers


def test_a_program_run_collects_and_freezes_at_exit_once(
    registered: list[Callable[[], None]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["pi-continuity-harness", "schema"])
    assert cli.main() == 0
    assert cli.main() == 0
    assert registered.count(cli._collect_and_freeze) == 1
    capsys.readouterr()


def test_a_caller_with_arguments_keeps_its_collector(
    registered: list[Callable[[], None]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["schema"]) == 0
    assert cli._collect_and_freeze not in registered
    capsys.readouterr()
