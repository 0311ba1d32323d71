"""``pi.set_label`` and ``ctx.session_manager.get_label`` on the simulator, one test per rule of
Pi 1.6 (``appendLabelChange``, session-manager.js:1055-1075; ``getLabel``, :1047-1049;
``setLabel``, agent-session.js:2902-2904). The differential twin is
``tests/realpi/test_differential_set_label.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_continuity_harness.api import ExtensionAPI, PiError

from .helpers import base, entries, run, session_entries


def _labeller(seen: list[Any]) -> Any:
    """``/label <role> <label|<none>>`` labels the first message of that role (or the id given)
    and records ``get_label`` of the first user message, or the error."""

    def extension(pi: ExtensionAPI) -> None:
        async def label(args: str, ctx: Any) -> None:
            which, _, text = args.partition(" ")
            found = {}
            for entry in ctx.session_manager.get_entries():
                if entry["type"] == "message":
                    found.setdefault(entry["message"]["role"], entry["id"])
            try:
                pi.set_label(found.get(which, which), None if text == "<none>" else text)
            except PiError as error:
                seen.append(("error", str(error)))
                return
            seen.append((args, ctx.session_manager.get_label(found["user"])))

        pi.register_command("label", label)

    return extension


def _play(tmp_path: Path, seen: list[Any], *labels: str) -> Any:
    operations: list[Any] = [{"prompt": "hello"}, *({"command": f"/label {text}"} for text in labels)]
    return run(tmp_path, base(operations=operations), _labeller(seen))


def _labels(result: Any) -> list[dict[str, Any]]:
    return [e for e in entries(result) if e["type"] == "label"]


def test_set_label_appends_a_label_entry_at_the_leaf_naming_the_target(tmp_path: Path) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, "user one")
    [user] = [e for e in entries(result) if e["type"] == "message" and e["message"]["role"] == "user"]
    [label] = _labels(result)
    assert label["targetId"] == user["id"] and label["label"] == "one"
    assert label["parentId"] == entries(result)[-2]["id"], "appended at the leaf"
    assert seen == [("user one", "one")]


def test_get_label_answers_the_latest_label(tmp_path: Path) -> None:
    seen: list[Any] = []
    _play(tmp_path, seen, "user one", "user two")
    assert seen == [("user one", "one"), ("user two", "two")]


def test_a_none_or_empty_label_clears_it_and_none_writes_no_label_key(tmp_path: Path) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, "user one", "user <none>", "user two", "user ")
    assert seen == [("user one", "one"), ("user <none>", None), ("user two", "two"), ("user ", None)]
    written = [e for e in session_entries(result) if e["type"] == "label"]
    assert ["label" in e for e in written] == [True, False, True, True]
    assert written[-1]["label"] == ""


def test_set_label_of_an_unknown_entry_raises_pis_error_and_appends_nothing(tmp_path: Path) -> None:
    seen: list[Any] = []
    result = _play(tmp_path, seen, "missing one")
    assert seen == [("error", "Entry missing not found")]
    assert _labels(result) == []
