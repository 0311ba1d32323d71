"""``pi.register_flag`` and ``pi.get_flag`` on the simulator, one test per rule of Pi 1.6
(``registerFlag``, ``getFlag`` and ``commit``, dist/core/extensions/loader.js:268-283, 306-311,
457-467). The differential twin is ``tests/realpi/test_differential_flags.py``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI, PiError
from pi_continuity_harness.api.flags import flag_options
from pi_continuity_harness.simulator.runner import ExtensionRunner

from .helpers import base, run_all


def _play(tmp_path: Path, *factories: Any) -> None:
    run_all(tmp_path, base(operations=[{"command": "/probe"}]), *factories)


def test_a_default_of_another_type_than_the_flags_is_pis_error() -> None:
    with pytest.raises(PiError, match=r'^Invalid default for flag "n": expected string, got number$'):
        flag_options("n", "string", 5, None)
    assert flag_options("v", "boolean", None, "d") == {"type": "boolean", "description": "d"}


def test_get_flag_answers_none_for_a_flag_this_extension_did_not_register(tmp_path: Path) -> None:
    seen: list[Any] = []

    def owner(pi: ExtensionAPI) -> None:
        pi.register_flag("shared", type="string", default="mine")

    def other(pi: ExtensionAPI) -> None:
        async def probe(args: str, ctx: Any) -> None:
            seen.append(pi.get_flag("shared"))

        pi.register_command("probe", probe)

    _play(tmp_path, owner, other)
    assert seen == [None]


def test_a_default_registered_while_loading_is_pending_then_the_runtimes_value_and_the_first_wins(
    tmp_path: Path,
) -> None:
    seen: list[Any] = []

    def first(pi: ExtensionAPI) -> None:
        pi.register_flag("level", type="string", default="first")
        seen.append(("first loading", pi.get_flag("level")))

    def second(pi: ExtensionAPI) -> None:
        pi.register_flag("level", type="string", default="second")
        seen.append(("second loading", pi.get_flag("level")))

        async def probe(args: str, ctx: Any) -> None:
            seen.append(("second command", pi.get_flag("level")))

        pi.register_command("probe", probe)

    _play(tmp_path, first, second)
    assert seen == [("first loading", "first"), ("second loading", "first"), ("second command", "first")]


def test_a_default_registered_after_loading_is_the_value_at_once_unless_the_runtime_has_one(
    tmp_path: Path,
) -> None:
    seen: list[Any] = []

    def extension(pi: ExtensionAPI) -> None:
        pi.register_flag("kept", type="boolean", default=True)

        async def probe(args: str, ctx: Any) -> None:
            pi.register_flag("late", type="string", default="x")
            pi.register_flag("kept", type="boolean", default=False)
            seen.append((pi.get_flag("late"), pi.get_flag("kept")))

        pi.register_command("probe", probe)

    _play(tmp_path, extension)
    assert seen == [("x", True)]


def test_a_factory_that_fails_leaves_no_flag_value() -> None:
    """``discard`` (loader.js:469-476) drops the pending defaults; ``commit`` keeps a value the
    runtime has. (At startup a failed extension stops the host, so the runner is driven here.)"""

    def failing(pi: ExtensionAPI) -> None:
        pi.register_flag("level", type="string", default="failed")
        raise RuntimeError("no")

    def second(pi: ExtensionAPI) -> None:
        pi.register_flag("level", type="string", default="second")

    runner = ExtensionRunner(
        cwd="/",
        mode="rpc",
        session_manager=None,
        model_registry=None,
        ui=None,  # type: ignore[arg-type]
        on_error=lambda *_: None,
        on_call=lambda *_: None,
    )
    failures = asyncio.run(runner.load([("failing", failing), ("second", second)]))
    assert failures == [("failing", "no")]
    assert runner.flag_values == {"level": "second"}
