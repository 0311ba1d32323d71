"""The context chart of one session, as inline SVG drawn by matplotlib's SVG backend.

Why matplotlib (and not a hand-written SVG or another chart library): it is the one candidate
that gives all of repeatable bytes from documented settings, an ``id`` on every drawn part
(``gid``), run text kept as escaped ``<text>`` and no script. pygal always writes an inline
``<script>`` and random ids; leather cannot set ids.

Repeatable bytes: ``svg.hashsalt`` (per chart, so the clip-path ids of many charts in one page
stay unique), ``svg.id`` for the root element, ``metadata={"Date": None, "Creator": None}``,
``svg.fonttype: none`` (text stays ``<text>``, escaped by matplotlib's XML writer). No pyplot
and no global backend: a :class:`~matplotlib.figure.Figure` of its own, saved as SVG.

Every drawn thing has a ``gid``, which the SVG backend writes as the ``id`` of its group, so
the DOM can be queried (the browser test does):

* ``<p>-chart`` (the ``<svg>``), ``<p>-context`` (the curve), ``<p>-window``, ``<p>-threshold``;
* ``<p>-compaction-<n>-<reason>-<outcome>``, one per compaction, at its ``tokensBefore``
  (a committed one drops the curve to its ``estimatedTokensAfter``);
* ``<p>-abort-<n>``, ``<p>-model-change-<n>``, ``<p>-restart-<n>``, ``<p>-reload-<n>``,
  ``<p>-crash-<n>``, ``<p>-skipped-<n>``.

Labels are drawn with ``parse_math=False`` (no mathtext on a ``$`` in a model id).
"""

from __future__ import annotations

import io
import math
import re
from typing import Any, cast

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from pi_continuity_harness.report.curve import Curve

__all__ = ["COLOURS", "EVENT_STYLE", "MARKERS", "ident", "render_chart"]

#: Marker shape by compaction reason, colour by outcome (the HTML legend uses the same).
MARKERS = {"threshold": "v", "overflow": "X", "manual": "s"}
COLOURS = {"committed": "#1a7f37", "cancelled": "#bf8700", "failed": "#cf222e", "interrupted": "#6e7781"}
EVENT_STYLE = {
    "abort": ("#cf222e", ":"),
    "model-change": ("#8250df", "-."),
    "restart": ("#57606a", "--"),
    "reload": ("#57606a", "--"),
    "crash": ("#cf222e", "--"),
    "skipped": ("#8c959f", ":"),
}
LINE = "#0969da"
WINDOW = "#24292f"
THRESHOLD = "#d1242f"
_GREY = "#57606a"


def ident(text: str) -> str:
    """``text`` as a piece of a DOM id: lower case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "x"


def _tokens(value: float, _pos: int | None = 0) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    if value >= 1_000:
        return f"{value / 1_000:.0f}k"
    return f"{value:.0f}"


def _steps(points: list[tuple[int, int]], last_x: int) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for i, (x, v) in enumerate(points):
        end = points[i + 1][0] if i + 1 < len(points) else last_x + 1
        xs += [max(x, 0), end]
        ys += [v, v]
    return xs, ys


def _thin(ticks: list[tuple[int, str]], most: int) -> list[tuple[int, str]]:
    if len(ticks) <= most:
        return ticks
    step = -(-len(ticks) // most)
    return ticks[::step]


def _curve_points(curve: Curve) -> list[tuple[int, float]]:
    """The samples, each committed compaction's drop, and a gap at every crash or restart."""
    points: list[tuple[int, float]] = [(s.x, float(s.tokens)) for s in curve.samples]
    for c in curve.compactions:
        if c.outcome == "committed" and c.tokens_after is not None:
            if c.tokens_before is not None:
                points.append((c.x, float(c.tokens_before)))
            points.append((c.x, float(c.tokens_after)))
    points += [(x, math.nan) for x in curve.breaks]
    points.sort(key=lambda p: p[0])  # stable: a drop's before stays ahead of its after
    return points


def render_chart(curve: Curve, prefix: str, *, width: float = 9.0, height: float = 2.7) -> str:
    """The chart as an ``<svg>`` element (no XML declaration or DOCTYPE), ready to inline."""
    prefix = ident(prefix)
    rc: dict[str, Any] = {
        "svg.hashsalt": f"pch-{prefix}",
        "svg.id": f"{prefix}-chart",
        "svg.fonttype": "none",
        "font.family": "sans-serif",
        "font.size": 8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.edgecolor": "#8c959f",
        "xtick.color": _GREY,
        "ytick.color": _GREY,
    }
    with rc_context(cast(Any, rc)):  # the keys are checked by matplotlib at run time
        fig = Figure(figsize=(width, height))
        left, right = 0.62 / width, 1.2 / width  # inches kept for the y labels and the line labels
        ax = fig.add_axes((left, 0.2, 1 - left - right, 0.74))
        last_x = curve.last_x
        values = [w for _, w in curve.windows] + [s.tokens for s in curve.samples]
        values += [c.tokens_before or 0 for c in curve.compactions]
        top = max([*values, 1]) * 1.08

        if curve.windows:
            xs, ys = _steps(curve.windows, last_x)
            ax.plot(xs, ys, color=WINDOW, lw=1.2, gid=f"{prefix}-window")
            window = curve.windows[-1][1]
            ax.text(last_x + 1.1, window, f"window {window:,}", va="center", fontsize=7, color=WINDOW,
                    parse_math=False)  # fmt: skip
        thresholds = curve.thresholds()
        if thresholds:
            xs, ys = _steps(thresholds, last_x)
            ax.plot(xs, ys, color=THRESHOLD, lw=1.2, ls=(0, (5, 3)), gid=f"{prefix}-threshold")
            threshold = thresholds[-1][1]
            ax.text(last_x + 1.1, threshold, f"threshold {threshold:,}", va="center", fontsize=7,
                    color=THRESHOLD, parse_math=False)  # fmt: skip

        points = _curve_points(curve)
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], color=LINE, lw=1.4, marker="o", ms=2.5,
                    gid=f"{prefix}-context")  # fmt: skip

        for n, c in enumerate(curve.compactions, 1):
            y = c.tokens_before if c.tokens_before is not None else 0
            colour = COLOURS.get(c.outcome, _GREY)
            gid = f"{prefix}-compaction-{n}-{ident(c.reason)}-{ident(c.outcome)}"
            ax.plot([c.x], [y], linestyle="none", marker=MARKERS.get(c.reason, "o"), ms=9, mfc=colour,
                    mec="white", mew=0.8, gid=gid)  # fmt: skip
            ax.annotate(str(n), (c.x, y), xytext=(0, 8), textcoords="offset points", ha="center", fontsize=7,
                        color=colour, annotation_clip=False)  # fmt: skip

        counters: dict[str, int] = {}
        for m in curve.markers:
            counters[m.kind] = counters.get(m.kind, 0) + 1
            colour, style = EVENT_STYLE.get(m.kind, (_GREY, ":"))
            ax.axvline(
                m.x, color=colour, ls=style, lw=1.1, gid=f"{prefix}-{ident(m.kind)}-{counters[m.kind]}"
            )
            label = {"model-change": "model", "skipped": "skip"}.get(m.kind, m.kind)
            ax.text(m.x, top, label, rotation=90, va="top", ha="right", fontsize=6.5, color=colour,
                    parse_math=False)  # fmt: skip

        ax.set_xlim(0, last_x + 1)
        ax.set_ylim(0, top)
        ax.yaxis.set_major_formatter(FuncFormatter(_tokens))
        ax.yaxis.set_major_locator(MaxNLocator(5))
        ax.grid(axis="y", color="#eaeef2", lw=0.8)
        ax.set_axisbelow(True)
        ticks = _thin(curve.ticks, 14)
        ax.set_xticks([x for x, _ in ticks])
        ax.set_xticklabels([label for _, label in ticks], fontsize=6.5, rotation=30, ha="right")
        for tick_label in ax.get_xticklabels():
            tick_label.set_parse_math(False)
        ax.set_ylabel("context tokens", fontsize=7.5, color=_GREY)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.find("<svg") :]
    # Let CSS size it: keep the viewBox, drop the fixed width and height (in pt).
    return re.sub(r'^<svg([^>]*?) width="[^"]+" height="[^"]+"', r"<svg\1", svg, count=1)
