"""The ``fork`` operation (RPC ``get_fork_messages`` + ``fork``, ``agent-session-runtime.js:185-270``):
a new session holding the path up to the chosen user message's parent, linked to the source;
``session_before_fork`` may cancel it; no such message is the operation's error. Both targets
are compared in ``tests/realpi/test_differential_fidelity.py`` (fork tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import load_scenario

from .helpers import base, run


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _op_ends(result: Any) -> list[tuple[str, bool, str | None]]:
    return [
        (r["name"], r["ok"], r.get("error"))
        for r in result.host.trace.records
        if r["kind"] == "op" and r.get("phase") == "end"
    ]


def test_a_fork_before_the_second_prompt_keeps_the_first_exchange_and_links_the_source(
    tmp_path: Path,
) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"prompt": "two"}, {"fork": {"message": 2}}],
        model={"agent": [{"text": "first answer"}, {"text": "second answer"}]},
    )
    result = run(tmp_path, scenario)
    assert _op_ends(result)[-1] == ("fork", True, None)
    files = sorted(result.session_files())
    assert len(files) == 2
    source, forked = (_lines(f) for f in files)
    assert str(forked[0]["parentSession"]).endswith("/" + files[0].name)
    # The path up to the second prompt's parent: everything of the source before "two".
    cut = next(
        i
        for i, e in enumerate(source)
        if e.get("type") == "message"
        and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == "two"
    )
    assert [e["id"] for e in forked[1:]] == [e["id"] for e in source[1:cut]]
    assert forked[1]["parentId"] is None
    starts = [r for r in result.host.trace.records if r["kind"] == "event" and r["name"] == "session_start"]
    assert starts[-1]["reason"] == "fork"


def test_an_extension_cancels_the_fork(tmp_path: Path) -> None:
    seen: list[Any] = []

    def ext(pi: ExtensionAPI) -> None:
        def before_fork(event: Any, _ctx: Any) -> Any:
            seen.append((event.entry_id is not None, event.position))
            return {"cancel": True}

        pi.on("session_before_fork", before_fork)

    scenario = base(operations=[{"prompt": "one"}, "fork"], model={"agent": [{"text": "answer"}]})
    result = run(tmp_path, scenario, ext)
    assert seen == [(True, "before")]
    assert _op_ends(result)[-1] == ("fork", False, "cancelled")
    assert len(result.session_files()) == 1


def test_no_such_message_is_the_operations_error(tmp_path: Path) -> None:
    scenario = base(
        operations=[{"prompt": "one"}, {"fork": {"message": 3}}], model={"agent": [{"text": "a"}]}
    )
    result = run(tmp_path, scenario)
    assert _op_ends(result)[-1] == ("fork", False, "fork: no user message 3 to fork before (1 offered)")


def test_message_zero_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\noperations: [{fork: {message: 0}}]\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert str(raised.value).replace(str(path), "bad.yaml") == (
        "bad.yaml: operations[0].fork.message: 0 names no message (1 is the first, -1 the last)"
    )
