"""The kept model requests on the run page: each as what it adds to the previous request of
its series, the first and any that does not extend the previous one whole, with the reason."""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
from pathlib import Path
from typing import Any

from pi_continuity_harness.report import render_run
from pi_continuity_harness.report.timeline import REQUEST_LIMIT

from .conftest import copy_run
from .html_dom import parse

SYSTEM = "SYSTEM-PROMPT-" + "x" * 200


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def _exchange(kind: str, index: int, messages: list[dict[str, Any]], reply: str) -> dict[str, Any]:
    """A kept exchange as the simulator writes it (``requests/<kind>-<index>.json``)."""
    return {
        "kind": kind,
        "index": index,
        "request": {
            "kind": kind,
            "index": index,
            "model": "fake/fake-model",
            "systemPrompt": SYSTEM,
            "messages": messages,
            "tools": ["read", "bash"],
            "maxTokens": 16384,
        },
        "reply": _assistant(reply),
    }


def _page(small_run: dict[str, Any], tmp_path: Path, files: dict[str, Any]) -> str:
    """The page of the small run's first scenario with ``files`` as its ``requests/``."""
    run = copy_run(small_run, tmp_path)
    first = run["record"]["assertions"][0]
    requests = Path(first["observed"]["workdir"]) / "requests"
    shutil.rmtree(requests, ignore_errors=True)
    requests.mkdir()
    for name, document in files.items():
        (requests / name).write_text(json.dumps(document), encoding="utf-8")
    return render_run(dict(run["record"], assertions=[first]))


def _shown(page: str, name: str) -> str:
    """The text the page shows of one request file (from its summary to the end of its block)."""
    start = page.index(f"<code>{name}</code>")
    return html_module.unescape(page[start : page.index("</details>", start)])


CONVERSATION = [
    _exchange("agent", 0, [_user("PROMPT-ONE")], "REPLY-ONE"),
    _exchange(
        "agent", 1, [_user("PROMPT-ONE"), _assistant("REPLY-ONE"), _user("PROMPT-TWO <b>")], "REPLY-TWO"
    ),
]


def test_the_first_request_of_a_series_is_shown_whole(small_run: dict[str, Any], tmp_path: Path) -> None:
    first = CONVERSATION[0]
    page = _page(small_run, tmp_path, {"agent-0000.json": first})
    shown = _shown(page, "agent-0000.json")
    assert "The first agent request: shown whole." in shown
    assert json.dumps(first, indent=1, ensure_ascii=False) in shown
    assert "same as request" not in shown


def test_a_request_that_extends_the_previous_shows_only_what_it_adds(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    # the assistant message appended is not the first request's reply (it answered otherwise)
    first = _exchange("agent", 0, [_user("PROMPT-ONE")], "ANOTHER REPLY")
    page = _page(small_run, tmp_path, {"agent-0000.json": first, "agent-0001.json": CONVERSATION[1]})
    shown = _shown(page, "agent-0001.json")
    # it names the request it extends (a link to it on the page) and how many messages it shares
    assert "The first message is the same as request agent-0000.json's (all of its messages)" in shown
    assert "messages 2–3 of 3" in shown
    assert 'href="#s1-request-1"' in shown and "s1-request-1" in parse(page).ids()
    # only the appended messages are shown (escaped), the shared one and the same fields are not
    assert "REPLY-ONE" in shown and "PROMPT-TWO <b>" in shown and "PROMPT-TWO &lt;b&gt;" in page
    assert "PROMPT-ONE" not in shown and SYSTEM not in shown
    assert "Its model, systemPrompt, tools, maxTokens are the same too, left out." in shown
    # what is shown is the file's own text otherwise: its reply, its index
    assert "REPLY-TWO" in shown and '"index": 1' in shown


def test_a_message_appended_that_is_the_previous_reply_is_named_not_repeated(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    page = _page(
        small_run, tmp_path, {"agent-0000.json": CONVERSATION[0], "agent-0001.json": CONVERSATION[1]}
    )
    shown = _shown(page, "agent-0001.json")
    assert (
        "The first message is the same as request agent-0000.json's (all of its messages), and message 2 "
        "is that request's reply (its role and content), not repeated; shown: what this request adds, "
        "message 3 of 3." in shown
    )
    assert "REPLY-ONE" not in shown and "PROMPT-TWO <b>" in shown and "REPLY-TWO" in shown
    assert "REPLY-ONE" in _shown(page, "agent-0000.json")  # shown with the request it answered


def test_a_request_that_does_not_extend_the_previous_is_shown_whole_with_the_reason(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    compacted = _exchange("agent", 2, [_user("SUMMARY"), _user("PROMPT-THREE")], "REPLY-THREE")
    shorter = _exchange("agent", 3, [_user("SUMMARY")], "REPLY-FOUR")
    brief = _exchange("extension", 0, [_user("PROMPT-ONE")], "A BRIEF")  # another series
    page = _page(
        small_run,
        tmp_path,
        {
            "agent-0000.json": CONVERSATION[0],
            "agent-0001.json": CONVERSATION[1],
            "agent-0002.json": compacted,
            "agent-0003.json": shorter,
            "extension-0000.json": brief,
        },
    )
    shown = _shown(page, "agent-0002.json")
    assert json.dumps(compacted, indent=1, ensure_ascii=False) in shown
    assert (
        "Shown whole: it does not extend request agent-0001.json (the previous agent request) by "
        "appending messages: its message 1 differs from that request's." in shown
    )
    shown = _shown(page, "agent-0003.json")
    assert json.dumps(shorter, indent=1, ensure_ascii=False) in shown
    assert "it has 1 message, fewer than that request's 2." in shown
    # an extension request is compared with extension requests only
    shown = _shown(page, "extension-0000.json")
    assert "The first extension request: shown whole." in shown and "PROMPT-ONE" in shown


def test_what_a_request_adds_is_cut_at_the_limit(small_run: dict[str, Any], tmp_path: Path) -> None:
    long = "LONG " * (REQUEST_LIMIT // 4)
    second = _exchange("agent", 1, [_user("PROMPT-ONE"), _user(long)], "END-OF-REPLY")
    page = _page(small_run, tmp_path, {"agent-0000.json": CONVERSATION[0], "agent-0001.json": second})
    shown = _shown(page, "agent-0001.json")
    assert "The first message is the same as request agent-0000.json's" in shown
    assert re.search(r"… \([\d,]+ more characters in .*agent-0001\.json\)", shown)
    assert "END-OF-REPLY" not in shown
