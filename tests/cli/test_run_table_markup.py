"""The run table prints scenario names and failure details as text, never as rich markup.

An outline's example value (``/gpt-4o``) is part of a scenario's name and an implementation's own
error message is part of a failure's detail: a ``[/gpt-4o]`` among them made ``run`` stop with a
``MarkupError`` traceback instead of printing its table.
"""

from __future__ import annotations

import io

from rich.console import Console

from pi_continuity_harness.commands.run import render_table
from pi_continuity_harness.features.suite import ScenarioResult, SuiteRun


def test_names_and_details_with_brackets_print_as_they_are() -> None:
    result = ScenarioResult(
        name="a synthesis model id is rejected [/gpt-4o]",
        assertion="invalid-config [x]",
        system="pi-session-continuity",
        status="failed",
        duration_s=0.01,
        detail="failing step: Then a notification names [/bold] and [red]",
        feature_file="features/pi_session_continuity/install/invalid-config-fails-closed.feature",
    )
    run = SuiteRun(target="sim", implementation="x", environment={}, results=[result])
    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(render_table(run))
    text = out.getvalue()
    assert "[/gpt-4o]" in text
    assert "invalid-config [x]" in text
    assert "[/bold] and [red]" in text
