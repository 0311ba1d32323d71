"""The context curve of one session: what the chart draws, read from a run's records.

Two sources, one result (:class:`Curve`):

* :func:`curve_from_trace`: the simulator's ``trace.jsonl`` records (``kind``/``name``/fields);
* :func:`curve_from_observation`: the normalised ``observation.json`` both targets write
  (``session_events`` and ``extension_events``; real Pi has no trace).

The same event names appear in both; in a trace a session event is ``kind == "session"`` and
an extension event ``kind == "event"``:

============================  ==============================================  =========================
what                          record                                          field(s)
============================  ==============================================  =========================
context tokens (a sample)     session ``message_end``, ``role == assistant``   ``totalTokens`` (the usage
                                                                              Pi's threshold check starts
                                                                              from: ``agent-session.js:2496``
                                                                              ``_checkCompaction``),
                                                                              ``stopReason``
compaction start              session ``compaction_start``                    ``reason``
compaction end                session ``compaction_end``                      ``aborted``, ``willRetry``,
                                                                              ``errorMessage``,
                                                                              ``result.tokensBefore``,
                                                                              ``result.estimatedTokensAfter``,
                                                                              ``result.fromExtension``
reserve at a compaction       extension ``session_before_compact``            ``preparation.settings.reserveTokens``
model change (a new window)   extension ``model_select``                      ``model``, ``previousModel``,
                                                                              ``contextWindow``
abort                         trace ``op abort``; session ``agent_settled``   ``aborted``
                              (and ``stopReason == "aborted"``)
x-axis ticks                  trace ``op`` records                            ``name``, ``index``
silent skip (simulator)       trace ``host compaction_skipped``               ``reason``, ``why``
window and reserve in force   trace ``host runtime``                          ``contextWindow``,
                                                                              ``reserveTokens``
============================  ==============================================  =========================

Outcome of a compaction: ``committed`` when ``compaction_end`` has a ``result``, ``cancelled``
when ``aborted`` is true (an extension's ``{cancel: true}`` or an abort), ``failed`` otherwise
(an ``errorMessage``, or no result), ``interrupted`` when a ``compaction_start`` has no
``compaction_end`` before the process crashed or the record ends.

Where the record does not say which window and reserve were in force at the start (real Pi's
observation; a trace from before the ``host runtime`` record carried them), the caller passes
them in (:class:`Limits`, found by :func:`pi_continuity_harness.report.data.initial_limits`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "OUTCOMES",
    "REASONS",
    "Compaction",
    "Curve",
    "Limits",
    "Marker",
    "Sample",
    "curve_from_observation",
    "curve_from_trace",
]

REASONS = ("threshold", "overflow", "manual")
OUTCOMES = ("committed", "cancelled", "failed", "interrupted")

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Limits:
    """The window and native reserve at the session's start, and where each number came from."""

    window: int | None
    reserve: int | None
    window_source: str = "unknown"
    reserve_source: str = "unknown"


@dataclass
class Sample:
    x: int
    tokens: int
    stop_reason: str = ""


@dataclass
class Compaction:
    x: int
    reason: str
    outcome: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    will_retry: bool = False
    from_extension: bool | None = None
    error: str = ""


@dataclass
class Marker:
    """An abort, a model change, a reload, restart or crash, or a silent compaction skip."""

    x: int
    kind: str  # abort | model-change | reload | restart | crash | skipped
    text: str


@dataclass
class Curve:
    samples: list[Sample] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    #: (x, window) at the start and whenever it changes.
    windows: list[tuple[int, int]] = field(default_factory=list)
    #: (x, reserveTokens) likewise.
    reserves: list[tuple[int, int]] = field(default_factory=list)
    #: x positions where the curve is not continuous (a crash, a restart).
    breaks: list[int] = field(default_factory=list)
    #: (x, label) at each operation's start (trace) or each agent run (observation).
    ticks: list[tuple[int, str]] = field(default_factory=list)
    limits: Limits = field(default_factory=lambda: Limits(None, None))
    source: str = "trace"
    last_x: int = 0

    @property
    def empty(self) -> bool:
        return not self.samples and not self.compactions

    def thresholds(self) -> list[tuple[int, int]]:
        """(x, window − reserveTokens) at every change of either: Pi compacts when the context
        is strictly above it (``core/compaction/compaction.js:173`` ``shouldCompact``)."""
        points = sorted({x for x, _ in self.windows} | {x for x, _ in self.reserves})
        out: list[tuple[int, int]] = []
        for x in points:
            window, reserve = _at(self.windows, x), _at(self.reserves, x)
            if window is not None and reserve is not None:
                out.append((x, window - reserve))
        return out


def _at(steps: list[tuple[int, int]], x: int) -> int | None:
    value = None
    for at, v in steps:
        if at <= x:
            value = v
    return value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Builder:
    """Walks the events in order; every sample, compaction and marker takes the next x."""

    def __init__(self, limits: Limits, source: str) -> None:
        self.curve = Curve(limits=limits, source=source)
        self.x = 0
        self.pending_reason: str | None = None
        self.last_tokens: int | None = None
        if limits.window is not None:
            self.curve.windows.append((0, limits.window))
        if limits.reserve is not None:
            self.curve.reserves.append((0, limits.reserve))

    def step(self) -> int:
        self.x += 1
        return self.x

    def set_window(self, window: int, source: str) -> None:
        self._set(self.curve.windows, window)
        if self.x == 0:
            self.curve.limits = replace(self.curve.limits, window=window, window_source=source)

    def set_reserve(self, reserve: int, source: str) -> None:
        self._set(self.curve.reserves, reserve)
        if self.x == 0:
            self.curve.limits = replace(self.curve.limits, reserve=reserve, reserve_source=source)

    def _set(self, steps: list[tuple[int, int]], value: int) -> None:
        if steps and steps[-1][0] == self.x:
            steps[-1] = (self.x, value)
        elif _at(steps, self.x) != value:
            steps.append((self.x, value))

    def assistant(self, item: Record) -> None:
        tokens = _int(item.get("totalTokens"))
        stop = str(item.get("stopReason") or "")
        if tokens is not None and tokens > 0:
            self.curve.samples.append(Sample(self.step(), tokens, stop))
            self.last_tokens = tokens
        if stop == "aborted":
            self.marker("abort", "reply aborted")

    def compaction_start(self, item: Record) -> None:
        self.pending_reason = str(item.get("reason") or "")

    def compaction_end(self, item: Record) -> None:
        reason = str(item.get("reason") or self.pending_reason or "unknown")
        raw = item.get("result")
        result: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        if result:
            outcome = "committed"
        elif item.get("aborted"):
            outcome = "cancelled"
        else:
            outcome = "failed"
        before = _int(result.get("tokensBefore"))
        after = _int(result.get("estimatedTokensAfter"))
        from_extension = result.get("fromExtension")
        self.curve.compactions.append(
            Compaction(
                self.step(),
                reason,
                outcome,
                tokens_before=before if before is not None else self.last_tokens,
                tokens_after=after,
                will_retry=bool(item.get("willRetry")),
                from_extension=from_extension if isinstance(from_extension, bool) else None,
                error=str(item.get("errorMessage") or ""),
            )
        )
        if outcome == "committed" and after is not None:
            self.last_tokens = after
        self.pending_reason = None

    def before_compact(self, item: Record) -> None:
        preparation = item.get("preparation")
        settings = preparation.get("settings") if isinstance(preparation, Mapping) else None
        reserve = _int(settings.get("reserveTokens")) if isinstance(settings, Mapping) else None
        if reserve is not None:
            self.set_reserve(reserve, "session_before_compact (preparation.settings.reserveTokens)")

    def model_select(self, item: Record) -> None:
        window = _int(item.get("contextWindow"))
        text = f"model {item.get('previousModel') or '?'} → {item.get('model') or '?'}"
        if window is not None:
            text += f" (window {window:,})"
        self.marker("model-change", text)
        if window is not None:
            self._set(self.curve.windows, window)

    def interrupted(self, why: str) -> None:
        """A compaction that started and never ended (the process died, or the record ends)."""
        if self.pending_reason is None:
            return
        self.curve.compactions.append(
            Compaction(
                self.step(), self.pending_reason, "interrupted", tokens_before=self.last_tokens, error=why
            )
        )
        self.pending_reason = None

    def marker(self, kind: str, text: str) -> None:
        if kind == "crash":
            self.interrupted("the process crashed before compaction_end")
        self.curve.markers.append(Marker(self.step(), kind, text))
        if kind in ("crash", "restart"):
            self.curve.breaks.append(self.x)

    def tick(self, label: str) -> None:
        self.curve.ticks.append((self.x + 1, label))

    def finish(self) -> Curve:
        self.interrupted("no compaction_end in the record")
        self.curve.last_x = max(self.x, 1)
        return self.curve


_RUNTIME = "trace (host runtime record)"


def curve_from_trace(records: Iterable[Record], limits: Limits) -> Curve:
    """The curve of a simulator trace (``trace.jsonl`` records, in order)."""
    b = _Builder(limits, "trace")
    aborted_by_op = False
    for r in records:
        kind, name = r.get("kind"), r.get("name")
        if kind == "op":
            if r.get("phase") == "end":
                continue
            if name == "abort":
                b.marker("abort", "abort" + (f" during {r['during']}" if r.get("during") else ""))
                aborted_by_op = True
                continue
            index = r.get("index")
            b.tick(f"#{index} {name}" if index is not None else str(name))
        elif kind == "session":
            if name == "message_end" and r.get("role") == "assistant":
                b.assistant(r)
            elif name == "compaction_start":
                b.compaction_start(r)
            elif name == "compaction_end":
                b.compaction_end(r)
            elif name == "agent_settled" and r.get("aborted"):
                if not aborted_by_op:
                    b.marker("abort", "run settled aborted")
                aborted_by_op = False
        elif kind == "event":
            if name == "session_before_compact":
                b.before_compact(r)
            elif name == "model_select":
                b.model_select(r)
        elif kind == "host":
            if name == "runtime":
                window, reserve = _int(r.get("contextWindow")), _int(r.get("reserveTokens"))
                if window is not None:
                    b.set_window(window, _RUNTIME)
                if reserve is not None:
                    b.set_reserve(reserve, _RUNTIME)
            elif name in ("reload", "crash"):
                b.marker(str(name), str(name))
            elif name == "start" and r.get("resume"):
                b.marker("restart", "restart (session resumed)")
            elif name == "compaction_skipped":
                b.marker("skipped", f"{r.get('reason')} compaction skipped: {r.get('why')}")
    return b.finish()


def _message_role(item: Record) -> str | None:
    """A ``message_end`` event's role: flat (older records) or inside its ``message``."""
    message = item.get("message")
    if isinstance(message, Mapping):
        return str(message.get("role"))
    role = item.get("role")
    return None if role is None else str(role)


def _flat_message_end(item: Record) -> Record:
    """A ``message_end`` event whose ``message`` carries the assistant reply (as the
    observation records it since the whole messages are kept) in the flat shape
    :meth:`_Builder.assistant` reads: ``totalTokens`` from the usage, ``stopReason``."""
    message = item.get("message")
    if not isinstance(message, Mapping):
        return item
    usage = message.get("usage")
    total = usage.get("totalTokens") if isinstance(usage, Mapping) else None
    return {**item, "totalTokens": total, "stopReason": message.get("stopReason")}


def curve_from_observation(record: Record, limits: Limits) -> Curve:
    """The curve of a normalised observation record (``observation.json``, either target).

    The record keeps session events and extension events as two lists without a common
    order, so an extension event is placed by the session event it belongs with:
    ``session_before_compact`` just before its ``compaction_start``; ``model_select`` and a
    ``session_start`` of a reload or resume before the next ``agent_start``. Operations are a
    separate list there too, so the x-axis is labelled by agent run instead.
    """
    b = _Builder(limits, "observation")
    extension_events: list[Record] = [
        e for e in record.get("extension_events") or [] if isinstance(e, Mapping)
    ]
    before_compacts = [e for e in extension_events if e.get("type") == "session_before_compact"]
    # model_select and session_start (reload, resume), each with the count of agent_start
    # events seen before it among the extension events: it goes before that agent run.
    queue: list[tuple[int, Record]] = []
    runs = 0
    for e in extension_events:
        kind = e.get("type")
        if kind == "agent_start":
            runs += 1
        elif kind == "model_select" or (kind == "session_start" and e.get("reason") not in (None, "startup")):
            queue.append((runs, e))

    def flush(upto: int | None) -> None:
        while queue and (upto is None or queue[0][0] <= upto):
            _, e = queue.pop(0)
            if e.get("type") == "model_select":
                b.model_select(e)
            else:
                b.marker("restart", f"session_start ({e.get('reason')})")

    run = 0
    for item in record.get("session_events") or []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind == "agent_start":
            flush(run)
            run += 1
            b.tick(f"run {run}")
        elif kind == "message_end" and _message_role(item) == "assistant":
            b.assistant(_flat_message_end(item))
        elif kind == "compaction_start":
            if before_compacts:
                b.before_compact(before_compacts.pop(0))
            b.compaction_start(item)
        elif kind == "compaction_end":
            b.compaction_end(item)
        elif kind == "agent_settled" and item.get("aborted"):
            b.marker("abort", "run settled aborted")
    flush(None)
    return b.finish()
