"""The context chart of one session, as an inline SVG written directly.

Why written here and not drawn by a chart library: the chart is a handful of polylines, markers
and labels, and what the page needs of it is repeatable bytes, an ``id`` on every drawn part, run
text kept as escaped ``<text>`` and no script. Until December 2026 matplotlib's SVG backend drew
it (pygal always writes an inline ``<script>`` and random ids; leather cannot set ids). That cost
57 ms of CPU per chart and about a second of import: 10 of the 24 CPU-seconds ``run --html``
added to the 223-scenario Pi Session Continuity suite (issue 16: CI renders five such pages). Written
directly, a chart costs well under a millisecond and the report needs no plotting library
(``bench/bench_report.py``).

The geometry keeps matplotlib's: a figure of ``width`` x ``height`` inches at 72 points per inch
(the ``viewBox``; no ``width``/``height``, so CSS sizes it), the axes from 0.62 in on the left to
1.2 in from the right (room for the y labels and the line labels), 20 % to 94 % of the height;
y ticks on "nice" steps (1, 2, 2.5, 5 times a power of ten, at most five intervals: matplotlib's
``MaxNLocator(5)``), x ticks at the operations, thinned to at most 14 labels.

Every drawn thing is a ``<g>`` with an ``id``, so the DOM can be queried (the browser test does):

* ``<p>-chart`` (the ``<svg>``), ``<p>-context`` (the curve), ``<p>-window``, ``<p>-threshold``;
* ``<p>-compaction-<n>-<reason>-<outcome>``, one per compaction, at its ``tokensBefore``
  (a committed one drops the curve to its ``estimatedTokensAfter``);
* ``<p>-abort-<n>``, ``<p>-model-change-<n>``, ``<p>-restart-<n>``, ``<p>-reload-<n>``,
  ``<p>-crash-<n>``, ``<p>-skipped-<n>``.

Text from the run (tick labels, model ids) is escaped with :func:`html.escape`, quotes too, and
never interpreted (no mathtext, no markup).
"""

from __future__ import annotations

import math
import re
from html import escape

from pi_continuity_harness.report.curve import Curve

__all__ = ["COLOURS", "EVENT_STYLE", "MARKERS", "ident", "render_chart"]

#: Marker shape by compaction reason (matplotlib's codes: triangle down, filled X, square),
#: colour by outcome (the HTML legend uses the same).
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
_SPINE = "#8c959f"
_GRID = "#eaeef2"
_POINTS_PER_INCH = 72
#: Dash patterns in units of the line width (matplotlib's ``lines.*_pattern``, scaled by width).
_DASHES = {":": (1.0, 1.65), "--": (3.7, 1.6), "-.": (6.4, 1.6, 1.0, 1.6)}
_TICK = 3.5  # tick length and the gap to its label, points


def ident(text: str) -> str:
    """``text`` as a piece of a DOM id: lower case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-") or "x"


def _tokens(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    if value >= 1_000:
        return f"{value / 1_000:.0f}k"
    return f"{value:.0f}"


def _n(value: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros (the same text for the same value)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


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


def _nice_ticks(top: float, intervals: int = 5) -> list[float]:
    """Ticks from 0 to at most ``top`` on the smallest step of 1, 2, 2.5, 5 or 10 times a power
    of ten that needs at most ``intervals`` intervals (matplotlib's ``MaxNLocator(5)``), and at
    least 1: tokens are whole numbers, so a curve of zeros gets ticks 0 and 1, not five labels
    that all read "0" or "1"."""
    raw = top / intervals
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    step = max(step, 1.0)
    return [i * step for i in range(int(top / step * (1 + 1e-9)) + 1)]


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


def _marker_path(shape: str, x: float, y: float, size: float) -> str:
    """The outline of a marker ``size`` points across, centred on (x, y)."""
    r = size / 2
    if shape == "v":
        corners = [(-r, -r * 0.8), (r, -r * 0.8), (0.0, r * 0.9)]
    elif shape == "s":
        s = r * 0.8
        corners = [(-s, -s), (s, -s), (s, s), (-s, s)]
    elif shape == "X":
        w, c = r * 0.3, math.sqrt(0.5)
        plus = [(-w, -r), (w, -r), (w, -w), (r, -w), (r, w), (w, w), (w, r), (-w, r), (-w, w), (-r, w),
                (-r, -w), (-w, -w)]  # fmt: skip
        corners = [((px - py) * c, (px + py) * c) for px, py in plus]
    else:  # a circle
        return (
            f"M{_n(x - r)} {_n(y)}a{_n(r)} {_n(r)} 0 1 0 {_n(2 * r)} 0a{_n(r)} {_n(r)} 0 1 0 {_n(-2 * r)} 0z"
        )
    return "M" + "L".join(f"{_n(x + dx)} {_n(y + dy)}" for dx, dy in corners) + "z"


class _Canvas:
    """Data coordinates to points, and the SVG text of what is drawn, in order."""

    def __init__(self, width: float, height: float, last_x: int, top: float) -> None:
        self.width, self.height = width * _POINTS_PER_INCH, height * _POINTS_PER_INCH
        self.left = 0.62 * _POINTS_PER_INCH
        self.right = self.width - 1.2 * _POINTS_PER_INCH
        self.top_px, self.bottom = self.height * 0.06, self.height * 0.8
        self.x_span, self.top = last_x + 1, top
        self.parts: list[str] = []

    def x(self, value: float) -> float:
        return self.left + value / self.x_span * (self.right - self.left)

    def y(self, value: float) -> float:
        return self.bottom - value / self.top * (self.bottom - self.top_px)

    def add(self, text: str) -> None:
        self.parts.append(text)

    def polyline(self, xs: list[float], ys: list[float]) -> str:
        """A path through the points; a NaN value starts a new piece (a gap)."""
        pieces: list[str] = []
        pen_down = False
        for xv, yv in zip(xs, ys, strict=True):
            if math.isnan(yv):
                pen_down = False
                continue
            pieces.append(("L" if pen_down else "M") + f"{_n(self.x(xv))} {_n(self.y(yv))}")
            pen_down = True
        return "".join(pieces)


def _stroke(colour: str, width: float, style: str | tuple[float, ...] = "-") -> str:
    dashes = _DASHES.get(style) if isinstance(style, str) else style
    dash = f' stroke-dasharray="{",".join(_n(d * width) for d in dashes)}"' if dashes else ""
    return f'fill="none" stroke="{colour}" stroke-width="{_n(width)}"{dash}'


def _text(x: float, y: float, text: str, *, size: float, colour: str, anchor: str = "start",
          baseline: str = "auto", rotate: float = 0) -> str:  # fmt: skip
    turn = f' transform="rotate({_n(rotate)} {_n(x)} {_n(y)})"' if rotate else ""
    return (
        f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" fill="{colour}" text-anchor="{anchor}"'
        f' dominant-baseline="{baseline}"{turn}>{escape(text, quote=True)}</text>'
    )


def render_chart(curve: Curve, prefix: str, *, width: float = 9.0, height: float = 2.7) -> str:
    """The chart as an ``<svg>`` element (no XML declaration or DOCTYPE), ready to inline."""
    p = ident(prefix)
    last_x = curve.last_x
    values = [w for _, w in curve.windows] + [s.tokens for s in curve.samples]
    values += [c.tokens_before or 0 for c in curve.compactions]
    top = max([*values, 1]) * 1.08
    cv = _Canvas(width, height, last_x, top)
    clip = f'clip-path="url(#{p}-clip)"'
    plot_w, plot_h = cv.right - cv.left, cv.bottom - cv.top_px

    # The grid and the y axis's labels.
    cv.add(f'<g id="{p}-grid">')
    for value in _nice_ticks(top):
        y = cv.y(value)
        cv.add(f'<path d="M{_n(cv.left)} {_n(y)}H{_n(cv.right)}" {_stroke(_GRID, 0.8)}/>')
        cv.add(f'<path d="M{_n(cv.left)} {_n(y)}h{_n(-_TICK)}" {_stroke(_SPINE, 0.8)}/>')
        cv.add(
            _text(
                cv.left - 2 * _TICK, y, _tokens(value), size=8, colour=_GREY, anchor="end", baseline="central"
            )
        )
    cv.add("</g>")

    if curve.windows:
        xs, ys = _steps(curve.windows, last_x)
        window = curve.windows[-1][1]
        line = cv.polyline([float(x) for x in xs], ys)
        cv.add(f'<g id="{p}-window"><path d="{line}" {_stroke(WINDOW, 1.2)} {clip}/>')
        cv.add(_text(cv.x(last_x + 1.1), cv.y(window), f"window {window:,}", size=7, colour=WINDOW,
                     baseline="central") + "</g>")  # fmt: skip
    thresholds = curve.thresholds()
    if thresholds:
        xs, ys = _steps(thresholds, last_x)
        threshold = thresholds[-1][1]
        cv.add(f'<g id="{p}-threshold"><path d="{cv.polyline([float(x) for x in xs], ys)}" '
               f'{_stroke(THRESHOLD, 1.2, (5, 3))} {clip}/>')  # fmt: skip
        cv.add(_text(cv.x(last_x + 1.1), cv.y(threshold), f"threshold {threshold:,}", size=7, colour=THRESHOLD,
                     baseline="central") + "</g>")  # fmt: skip

    points = _curve_points(curve)
    if points:
        xs, ys = [float(x) for x, _ in points], [v for _, v in points]
        dots = "".join(_marker_path("o", cv.x(x), cv.y(v), 2.5) for x, v in points if not math.isnan(v))
        cv.add(f'<g id="{p}-context"><path d="{cv.polyline(xs, ys)}" {_stroke(LINE, 1.4)} {clip}/>'
               f'<path d="{dots}" fill="{LINE}" stroke="{LINE}" stroke-width="1" {clip}/></g>')  # fmt: skip

    for n, c in enumerate(curve.compactions, 1):
        value = c.tokens_before if c.tokens_before is not None else 0
        colour = COLOURS.get(c.outcome, _GREY)
        x, y = cv.x(c.x), cv.y(value)
        shape = _marker_path(MARKERS.get(c.reason, "o"), x, y, 9)
        cv.add(f'<g id="{p}-compaction-{n}-{ident(c.reason)}-{ident(c.outcome)}">'
               f'<path d="{shape}" fill="{colour}" stroke="#ffffff" stroke-width="0.8"/>'
               + _text(x, y - 8, str(n), size=7, colour=colour, anchor="middle") + "</g>")  # fmt: skip

    counters: dict[str, int] = {}
    for m in curve.markers:
        counters[m.kind] = counters.get(m.kind, 0) + 1
        colour, style = EVENT_STYLE.get(m.kind, (_GREY, ":"))
        x = cv.x(m.x)
        label = {"model-change": "model", "skipped": "skip"}.get(m.kind, m.kind)
        cv.add(f'<g id="{p}-{ident(m.kind)}-{counters[m.kind]}">'
               f'<path d="M{_n(x)} {_n(cv.top_px)}V{_n(cv.bottom)}" {_stroke(colour, 1.1, style)}/>'
               + _text(x - 2, cv.y(top), label, size=6.5, colour=colour, anchor="end", baseline="auto", rotate=-90)
               + "</g>")  # fmt: skip

    # The spines, the x axis's ticks and labels, and the y axis's title.
    cv.add(f'<g id="{p}-axes"><path d="M{_n(cv.left)} {_n(cv.top_px)}V{_n(cv.bottom)}H{_n(cv.right)}" '
           f'{_stroke(_SPINE, 0.8)}/>')  # fmt: skip
    for tick_x, tick_label in _thin(curve.ticks, 14):
        x = cv.x(tick_x)
        cv.add(f'<path d="M{_n(x)} {_n(cv.bottom)}v{_n(_TICK)}" {_stroke(_SPINE, 0.8)}/>')
        cv.add(_text(x, cv.bottom + 2 * _TICK, tick_label, size=6.5, colour=_GREY, anchor="end",
                     baseline="hanging", rotate=-30))  # fmt: skip
    cv.add(_text(cv.left - 34, cv.top_px + plot_h / 2, "context tokens", size=7.5, colour=_GREY, anchor="middle",
                 rotate=-90) + "</g>")  # fmt: skip

    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{p}-chart" viewBox="0 0 {_n(cv.width)} {_n(cv.height)}" '
        f'font-family="DejaVu Sans, Arial, Helvetica, sans-serif" role="img" aria-label="context tokens">'
        f'<defs><clipPath id="{p}-clip"><rect x="{_n(cv.left)}" y="{_n(cv.top_px)}" width="{_n(plot_w)}" '
        f'height="{_n(plot_h)}"/></clipPath></defs>'
        f'<rect width="100%" height="100%" fill="#ffffff"/>' + "".join(cv.parts) + "</svg>"
    )
