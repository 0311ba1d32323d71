"""The Jinja2 environment of the report's pages, and writing a page.

Why Jinja2: the standard templating library, with autoescape on every template, so every value
taken from a run (a Brief, a model reply, a notification, a failure message) is text unless the
code marks it as markup; the only markup is the chart's SVG (``report/chart.py``) and
markdown-it's HTML, both escaped by their writers. ``StrictUndefined``: a misspelt name in a template is an error, not
an empty cell. The templates are package data (``report/templates``).

Every page carries a Content-Security-Policy that allows no script and no network at all, so
even a mistake in the escaping could not run anything.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from pi_continuity_harness import __version__
from pi_continuity_harness.report.chart import COLOURS
from pi_continuity_harness.report.markdown import render_markdown
from pi_continuity_harness.report.page_paths import shown_path

__all__ = ["CSP", "render_page"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{float(value):.2f}s"


def _scalar(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return "null" if value is None else str(value)


@lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pi_continuity_harness.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["tokens"] = _tokens
    env.filters["seconds"] = _seconds
    env.filters["markdown"] = render_markdown
    env.filters["scalar"] = _scalar
    env.filters["shown_path"] = shown_path
    env.globals["COLOURS"] = COLOURS
    env.globals["harness_version"] = __version__
    return env


def render_page(template: str, *, csp: str | None = CSP, **context: Any) -> str:
    """One page: ``template`` with ``context``; ``csp=None`` leaves the policy out (the tests
    use that to show the escaping alone keeps a planted script from running)."""
    return _environment().get_template(template).render(csp=csp, **context)
