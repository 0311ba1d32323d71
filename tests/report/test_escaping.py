"""Everything taken from a run is text: a planted ``<script>`` or ``<img onerror>`` never
becomes markup, whether it comes in a Brief, a notification, a failure, a step or a trace."""

from __future__ import annotations

from typing import Any

from pi_continuity_harness.report import render_run
from pi_continuity_harness.report.markdown import render_markdown
from pi_continuity_harness.report.run_page import render_run as render_run_with_csp

from .conftest import IMG, PAYLOAD
from .html_dom import Dom, parse

ACTIVE = ("script", "img", "iframe", "object", "embed", "link", "base", "form")


def assert_inert(dom: Dom) -> None:
    assert not [t for t, _ in dom.elements if t in ACTIVE]
    assert not [(t, k) for t, attrs in dom.elements for k in attrs if k.startswith("on")]
    assert not [
        (t, v)
        for t, attrs in dom.elements
        for v in attrs.values()
        if v and v.strip().lower().startswith("javascript:")
    ]


def test_a_planted_payload_is_shown_as_text_everywhere(planted_run: dict[str, Any]) -> None:
    for html in (render_run(planted_run["record"]), render_run_with_csp(planted_run["record"], csp=None)):
        dom = parse(html)
        assert_inert(dom)
        # As text: the failure (in the assertion table, in the row of each rule the scenario
        # proves, as the failing step's observation and in the whole failure), the
        # notification, the Brief's frontmatter and body, the trace record (row and whole).
        rules = len(next(a for a in planted_run["record"]["assertions"] if a["status"] == "failed")["rules"])
        assert rules > 0
        assert dom.text.count("<script>document.title=") == 8 + rules
        # The Brief's frontmatter and body, the notification, the step, the whole trace record.
        assert dom.text.count("<img src=x onerror=") == 5
        assert dom.title.startswith("Pi Continuity Harness")


def test_markdown_escapes_raw_html_and_drops_unsafe_links_and_images() -> None:
    html = str(
        render_markdown(
            "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n"
            "[x](javascript:alert(1)) ![i](http://example.invalid/i.png) <b>bold</b>"
        )
    )
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html and 'href="javascript:' not in html


def test_without_the_escaping_the_planted_payload_would_be_markup() -> None:
    """Control for the checks above: the payload, unescaped, is found by them."""
    dom = parse(f"<p>{PAYLOAD}{IMG}</p>")
    assert [t for t, _ in dom.elements if t in ACTIVE] == ["script", "img"]
