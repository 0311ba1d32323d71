"""Markdown of Briefs and dossiers, rendered by markdown-it-py with raw HTML off.

Why markdown-it-py: CommonMark, well kept, already installed with rich, and it can be told to
treat raw HTML as text. ``html: False`` turns any raw HTML in a Brief (``<script>``,
``<img onerror>``) into escaped text; its ``validateLink`` refuses ``javascript:``,
``vbscript:``, ``file:`` and ``data:`` links; images are switched off, so a Brief cannot make
the page load anything (the page's Content-Security-Policy says the same); no linkify.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup

__all__ = ["render_markdown"]


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    return md


def render_markdown(text: str) -> Markup:
    """The HTML of ``text``, safe to insert as it is: every character from the run is escaped."""
    return Markup(_parser().render(text))
