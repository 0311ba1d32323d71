"""Seeds of the blitz handoff explorer expand into cases: settings, user actions, model behaviours.

``random.Random(seed)`` draws, in a fixed order, the machine (random handoff settings,
sometimes a project Call template, sometimes repeated automatic attempts) and a sequence of
user actions (``/sh start``, a model-started handoff, ``/sh cancel``, prompts while idle and
while the model writes, turns that fill the context, a manual compaction, an invalid settings
edit, reloads) with the model's behaviours (GET, repeated GET, the native write, Finish with
the returned ID, a foreign ID or twice, early stops, slow or context-filling replies, a file
that appears where the dossier goes, receivers that read and delete the dossier, or fail).
In an RPC session kept in a file, three writers in ten are interrupted by the user (a new
session, a resume, a fork or a compaction held in the reply that asks for the template or in
one after it), which the extension must block while the handoff is protected and let through
before it (a stream of draws of its own, so the rest of a seed's case is what it was before).

The intruder file is planted at ``.pi/handoff_<session id>.md``: the id is the one the seed's
first session gets (``runner.first_session_id``), so the file lands where the extension would
reserve the dossier. Only the seed's first writer can be an intruder (often one, sometimes
followed by a ``/sh cancel``): after a handoff the live session has another id, and a file
planted at the first session's path lands where no dossier goes.

Some forms follow from a seed's or a step's number instead of a draw, so that adding them left
every draw of every seed as it was: the user's prompt forms (:func:`prompt_text`), a named first
session (:func:`named_session_id`), automatic cycles exactly at their level (:func:`over_level`),
an empty or untitled dossier (:func:`dossier_text`), a forged, padded or truncated foreign
Finish ID (:func:`foreign_finish_id`), a writer's full turn before or after its template
response, and the time an idle reply or a full turn takes (:data:`SLOW_TURN_MS`).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, replace
from typing import Any

from pi_continuity_harness.explore.runner import first_session_id
from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.scenario.document import Scenario, parse_scenario
from pi_continuity_harness.scenario.model_script import Reply
from pi_continuity_harness.scenario.operations import Operation

__all__ = [
    "CONFIG_FORMS",
    "DOSSIER",
    "EMERGENCY_TOKENS",
    "FINISH",
    "FINISH_ID",
    "FINISH_ID_BUT_LAST",
    "GET",
    "MANAGED",
    "MODES",
    "SESSIONS",
    "WINDOW",
    "BlitzCase",
    "Space",
    "blitz_case",
    "dossier_text",
    "foreign_finish_id",
    "generate_blitz_scenario",
    "named_session_id",
    "over_level",
    "prompt_text",
]

MANAGED = "$AGENT/pi-blitz-handoff"
GET = "session_handoff_get_template"
FINISH = "session_handoff_finish"
FINISH_ID = "{{match:" + oracle.FINISH_ID_MATCH + "}}"
DOSSIER = "{{match:" + oracle.DOSSIER_MATCH + "}}"
DELETE = "{{match:" + oracle.DELETION_MATCH + "}}"
WINDOW = 200_000
#: A full context: exactly 90 % of the window, the emergency's level (reference §4: at or
#: above, H53), below the native threshold (190,000 here). 180,000 / 200,000 x 100 is 90.0 in
#: IEEE doubles, as Pi computes the percent (dist/core/agent-session.js:3642 of 1.6.0). At
#: 182,000 (91 %) a mutant that escalates only strictly above 90 % was out of reach.
EMERGENCY_TOKENS = 180_000
#: How long a context-filling tool turn and an idle prompt's reply take: longer than the
#: shortest readinessRetrySeconds (1-3 s here), so a reminder is due by their end.
SLOW_TURN_MS = 3_500
NATIVE_THRESHOLD = 190_000  # window 200,000 − reserveTokens 10,000

#: How the handoff config reaches the extension: ``written`` (a valid ``config.json``),
#: ``absent`` (no file: the defaults of the settings table), ``invalid`` (a file the settings
#: table refuses: reference §6 "An invalid config file is a loud error").
CONFIG_FORMS: tuple[str, ...] = ("written", "absent", "invalid")
#: Pi's modes (``rpc`` has dialogs; ``print`` and ``json`` have none) and session stores.
MODES: tuple[str, ...] = ("rpc", "print", "json")
SESSIONS: tuple[str, ...] = ("file", "memory")
#: Invalid config files: (label, file spec). Each breaks one rule of the settings table.
_INVALID_CONFIGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("critical-above-100", {"json": {"criticalWarningPercent": 120}}),
    ("warning-not-below-critical", {"json": {"contextWarningPercent": 80, "criticalWarningPercent": 80}}),
    ("unknown-key", {"json": {"speedMode": True}}),
    ("not-json", {"text": '{"deferPromptsFrom": '}),
)
#: Added to the seed for the configuration-space generator (the seed's own stream is unchanged).
_SPACE_SALT = 0xB117_C0F6


@dataclass(frozen=True)
class Space:
    """Where a seed sits in the configuration space (issue 10 item 5), drawn from the seed."""

    config: str = "written"
    invalid: str | None = None
    mode: str = "rpc"
    session: str = "file"
    trust: str = "always"
    #: Scripted outcomes of Pi's own summarization, one per compaction: ``ok``, ``error``
    #: (the summary request fails: a failed compaction) or ``abort`` (its stream is aborted).
    compactions: tuple[str, ...] = ()
    #: Pi's ``compaction.keepRecentTokens``: 100 makes the explorer's sessions large enough to
    #: compact (Pi cuts after the newest entries worth that many chars/4 tokens; below it a
    #: compaction ends "Nothing to compact" before ``session_before_compact``, pi-host-1.6.md
    #: §9.1d, so the rules about compactions, H60a, H61 and H77c, were out of reach); 2,000 keeps
    #: the small sessions of before.
    keep_recent_tokens: int = 2_000

    def to_json(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "invalid": self.invalid,
            "mode": self.mode,
            "session": self.session,
            "trust": self.trust,
            "compactions": list(self.compactions),
            "keep_recent_tokens": self.keep_recent_tokens,
        }


def draw_space(seed: int) -> Space:
    """The seed's configuration-space draws, from a generator of their own."""
    rng = random.Random(_SPACE_SALT + seed)
    compactions = tuple(rng.choices(("ok", "error", "abort"), (2, 2, 1))[0] for _ in range(8))
    config, invalid, mode, session, trust = "written", None, "rpc", "file", "always"
    # Three seeds in five keep the defaults of the space (failing compactions aside).
    if rng.random() < 0.4:
        config = rng.choices(CONFIG_FORMS, (5, 2, 3))[0]
        # The kind of invalid file rotates with the seed, so a few seeds carry each one.
        invalid = _INVALID_CONFIGS[(seed // 4) % len(_INVALID_CONFIGS)][0] if config == "invalid" else None
        mode = rng.choices(MODES, (4, 1, 1))[0]
        session = rng.choices(SESSIONS, (4, 1))[0]
        trust = "never" if rng.random() < 0.2 else "always"
    # Drawn last, so the draws above are those of the seeds before it was added.
    keep_recent = rng.choice((100, 100, 2_000))
    return Space(config, invalid, mode, session, trust, compactions, keep_recent)


@dataclass(frozen=True)
class BlitzCase:
    """One seed's concrete run: its settings and the scenario's operations and agent replies."""

    seed: int
    steps: int
    #: The handoff settings the first operation writes (``config.json``).
    settings: dict[str, Any]
    base: Scenario
    operations: tuple[Operation, ...]
    agent: tuple[Reply, ...]
    space: Space = Space()
    #: How many leading operations configure the extension (the ``config.json`` write up to the
    #: reload that loads it): :meth:`without` keeps them, so a minimised case still runs with the
    #: settings its invariants read (``invariants._settings``: the written file). A case that lost
    #: the reload ran the extension with the defaults while its invariants expected the written
    #: settings, and a failure they then reported could pass for a minimised one (seen: a
    #: request-mode window judged open in a case whose extension ran in writing mode).
    setup: int = 0

    @property
    def name(self) -> str:
        return f"blitz-explore-{self.seed}"

    def scenario(self, *, operations: tuple[Operation, ...] | None = None) -> Scenario:
        return self.base.model_copy(
            update={
                "model": self.base.model.model_copy(update={"agent": self.agent}),
                "operations": self.operations if operations is None else operations,
            }
        )

    def without(self, **changes: Any) -> BlitzCase:
        """This case with ``changes``; new ``operations`` keep the :attr:`setup` ones first."""
        operations = changes.get("operations")
        if operations is not None and self.setup:
            fixed = self.operations[: self.setup]
            rest = tuple(op for op in operations if not any(op is kept for kept in fixed))
            changes["operations"] = (*fixed, *rest)
        return replace(self, **changes)

    def describe(self) -> str:
        s = self.settings
        automatic = (
            f"automatic {s.get('automaticSessionHandoffPercent')}%"
            if s.get("automaticSessionHandoff")
            else "manual"
        )
        space = self.space
        config = space.config + (f"/{space.invalid}" if space.invalid else "")
        return (
            f"seed {self.seed}: config {config} deferPromptsFrom {s.get('deferPromptsFrom', 'writing')} delete "
            f"{'no' if s.get('deleteHandoffAfterReading') is False else 'yes'} "
            f"retry {s.get('readinessRetrySeconds', 60)}s chain {s.get('maxSessionChainLength', 25)} "
            f"warning {s.get('contextWarningPercent', 60)}% critical {s.get('criticalWarningPercent', 90)}% "
            f"{automatic} mode {space.mode} session {space.session} trust {space.trust} "
            f"compactions {','.join(space.compactions[:3])} keep {space.keep_recent_tokens}"
        )

    def options_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "steps": self.steps,
            "settings": dict(self.settings),
            **self.space.to_json(),
        }


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def prompt_text(label: str, seed: int, number: int) -> str:
    """The text of the user's ``number``-th prompt of a seed, in one of four forms by its number
    (nothing drawn): plain, with white space around it, with a decomposed accent (NFD: ``e`` and
    a combining acute) and with a CRLF line break. A captured prompt is kept byte for byte
    (reference §3.4, H27b), so an implementation that strips, normalises or rewrites line ends
    of what it captures changes a prompt the explorer can see (before, every prompt was one
    plain line, and the three mutants of those slips were out of its reach)."""
    text = f"{label} {seed}-{number}"
    form = number % 4
    if form == 1:
        return f"  {text} \t"
    if form == 2:
        return f"{text} cafe\u0301"
    if form == 3:
        return f"{text}\r\nsecond line"
    return text


def _writer(rng: random.Random, n: int, session_marker: str | None) -> tuple[list[dict[str, Any]], str]:
    """One writer behaviour: the replies of a source run after a handoff request.

    ``session_marker`` is the live session's id while it is known (the first session, before
    any handoff could have switched it), else None: an intruder then would land at a stale
    path, where no dossier goes, and plants nothing; the first writer is an intruder more often.
    """
    if session_marker is not None and rng.random() < 0.25:
        kind = "intruder"
    else:
        kind = _kind(rng)
        if kind == "intruder" and session_marker is None:
            kind = "good"
    return _replies(rng, n, session_marker or "", kind), kind


#: The Finish ID a template response gave without its last character (``{{match:...}}``).
FINISH_ID_BUT_LAST = "{{match:" + oracle.FINISH_ID_BUT_LAST_MATCH + "}}"


def foreign_finish_id(n: int) -> str:
    """The ID a "foreign" writer of step ``n`` finishes with, every one refused ("exact returned
    ID only", reference §3.5, H29a), by the step (nothing drawn): a forged one; the returned ID
    with a space before it, which only a comparison that trims would accept; the returned ID
    without its last character, which only a prefix comparison would accept."""
    return (f"forged-{n}", f" {FINISH_ID}", FINISH_ID_BUT_LAST)[n % 3]


def dossier_text(n: int) -> str:
    """What the writer of step ``n`` writes to the dossier (nothing drawn): a titled Markdown
    dossier; on one step in seven nothing at all, which a Finish must refuse ("metadata-only
    nonempty-regular-file check", reference §3.6, H34a); on another no heading, which a Finish
    must accept (the check is metadata only, H34c)."""
    if n % 7 == 5:
        return ""
    if n % 7 == 6:
        return f"Next action: step {n}.\n"
    return f"# Dossier {n}\n\nNext action: step {n}.\n"


def _kind(rng: random.Random) -> str:
    return rng.choice(
        [
            "good",
            "good",
            "good",
            "repeat_get",
            "foreign",
            "twice",
            "stop_early",
            "finish_first",
            "slow",
            "full",
            "intruder",
        ]
    )


def _replies(rng: random.Random, n: int, session_marker: str, kind: str) -> list[dict[str, Any]]:
    dossier = dossier_text(n)
    get = {"tool_calls": [_call(GET)], "context_tokens": 12_000}
    write = {"tool_calls": [_call("write", path=DOSSIER, content=dossier)], "context_tokens": 12_500}
    finish = {"tool_calls": [_call(FINISH, id=FINISH_ID)], "context_tokens": 13_000}
    done = {"text": f"writer {n} done", "context_tokens": 13_100}
    replies: list[dict[str, Any]]
    if kind == "repeat_get":
        replies = [get, get, write, finish, done]
    elif kind == "foreign":
        replies = [get, write, {"tool_calls": [_call(FINISH, id=foreign_finish_id(n))]}, done]
    elif kind == "twice":
        replies = [get, write, finish, finish, done]
    elif kind == "stop_early":
        replies = [get, done]
    elif kind == "finish_first":
        replies = [{"tool_calls": [_call(FINISH, id=f"early-{n}")]}, done]
    elif kind == "slow":
        slow = {
            "tool_calls": [_call("bash", command="echo thinking")],
            "latency_ms": rng.choice([1500, 4000, 9000]),
        }
        replies = [slow, get, write, finish, done]
    elif kind == "full":
        # Slow as well (nothing drawn): by its end the reminder is due (readinessRetrySeconds
        # 1-3 s), and the emergency must cancel it (H51), on this turn and the ones after.
        full = {
            "tool_calls": [_call("bash", command="echo gathering")],
            "context_tokens": EMERGENCY_TOKENS,
            "latency_ms": SLOW_TURN_MS,
        }
        # Before the template response on even steps, after it on odd ones (nothing drawn): the
        # emergency must keep the Finish ID that response returned (H51, "retain current
        # request/file/ID"), which only a request with an ID can show.
        replies = [full, get, write, finish, done] if n % 2 == 0 else [get, full, write, finish, done]
    elif kind == "intruder":
        plant = {
            "edit_file": {
                "path": f".pi/handoff_{session_marker}.md",
                "text": f"intruder {n}: not the extension's\n",
            }
        }
        first = {"tool_calls": [_call("bash", command="echo preparing")], "during": [plant]}
        replies = [first, get, done]
    else:
        replies = [get, write, finish, done]
    return replies


#: What the user does while a handoff is written: a new session, another session resumed, a
#: fork or a compaction, which the extension must block from the deferral boundary to
#: completion or cancel ("protects user replacement/fork/compaction", H77a, H77b, H77c) and
#: after an accepted Finish ("Finish awaiting transition protected too", H77d); blocked, they
#: change nothing else. Before the boundary a navigation is not blocked ("Before protection
#: navigation may discard pending request", H77e). ``switch_session`` resumes the previous
#: session (refused, before any hook, in a process's first session). Pi's compaction aborts
#: the running turn first (agent-session.js ``compact`` starts with ``abort``), so a compaction
#: cuts the writer short whether or not it is then blocked; it reaches the extension's
#: ``session_before_compact`` only when the session is large enough (``Space.keep_recent_tokens``).
INTRUSIONS: tuple[dict[str, Any], ...] = (
    {"new_session": {}},
    {"fork": {}},
    {"compact": {}},
    {"switch_session": {"to": "previous"}},
)


def _intrude(rng: random.Random, writer: list[dict[str, Any]], space: Space) -> int:
    """Three writers in ten, in an RPC session kept in a file, get one user operation held in a
    reply (``during``: while Pi streams it): two in three after their first template retrieval
    (by then the GET has run, and when it succeeded the window is open in either deferral mode
    unless the request ended), one in three in the reply that asks for it (before the GET runs:
    the window is open only with ``deferPromptsFrom: request``, H77e). The invariant
    ``user_operation_blocked_while_protected`` judges it by the trace, so a failed GET, or a
    writer's replies that another turn used, is no violation. Returns how many compactions it
    held (each may take a summary reply)."""
    if space.mode != "rpc" or space.session != "file" or rng.random() >= 0.3:
        return 0
    gets = [i for i, reply in enumerate(writer) if any(c["name"] == GET for c in reply.get("tool_calls", ()))]
    if not gets:
        return 0
    if rng.random() < 1 / 3:
        index = gets[0]
    elif gets[0] + 1 < len(writer):
        index = rng.randrange(gets[0] + 1, len(writer))
    else:
        return 0
    held = dict(writer[index])
    intrusion = json.loads(json.dumps(rng.choice(INTRUSIONS)))
    held["during"] = [*held.get("during", []), intrusion]
    writer[index] = held
    return int("compact" in intrusion)


def _receiver(rng: random.Random) -> list[dict[str, Any]]:
    outcome = rng.choice(["reads", "reads", "error"])
    if outcome == "error":
        return [{"error": {"status": 400, "message": "bad request"}}]
    return [
        {"tool_calls": [_call("read", path=DOSSIER)]},
        {"tool_calls": [_call("bash", command="rm -f '" + DELETE + "'")]},
        {"text": "continuing"},
    ]


def _settings(rng: random.Random) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "deferPromptsFrom": rng.choice(["writing", "request"]),
        "deleteHandoffAfterReading": rng.random() < 0.7,
        "readinessRetrySeconds": rng.choice([1, 2, 3, 60]),
        "maxSessionChainLength": rng.choice([1, 2, 3, 25]),
    }
    if rng.random() < 0.4:
        settings["automaticSessionHandoff"] = True
        settings["automaticSessionHandoffPercent"] = rng.choice([0, 70])
    return settings


def _thresholds(seed: int, settings: dict[str, Any]) -> dict[str, Any]:
    """Warning, critical and automatic levels other than the defaults (a generator of their own).

    ``criticalWarningPercent`` 94 lies above the turns that reach 91 % (the emergency level is
    fixed at 90 % whatever it says: reference §4), 80 and 85 below them; every level stays under
    Pi's native threshold here (95 %), so a turn can reach it without a native compaction."""
    rng = random.Random(_SPACE_SALT + 1_000_003 * (seed + 1))
    out = dict(settings)
    critical = rng.choice([None, None, 80, 85, 94])
    if critical is not None:
        out["criticalWarningPercent"] = critical
    warning = rng.choice([None, 50, 70])
    if warning is not None and warning < (critical or 90):
        out["contextWarningPercent"] = warning
    if (
        out.get("automaticSessionHandoff")
        and out.get("automaticSessionHandoffPercent")
        and rng.random() < 0.5
    ):
        out["automaticSessionHandoffPercent"] = rng.choice([50, 85])
    return out


def config_file(seed: int, settings: dict[str, Any]) -> dict[str, Any]:
    """The ``config.json`` the seed writes (an ``edit_file`` spec): the settings, or an invalid file."""
    space = draw_space(seed)
    if space.config == "invalid":
        return dict(dict(_INVALID_CONFIGS)[str(space.invalid)])
    return {"json": settings}


def _summary_reply(outcome: str) -> dict[str, Any]:
    """Pi's own summarization reply for one compaction (blitz handoff does not summarise)."""
    if outcome == "error":
        return {"error": {"status": 500, "message": "summarizer unavailable", "type": "server_error"}}
    if outcome == "abort":
        return {"text": "a summary cut short", "stream": {"upto": 4, "then": "abort"}}
    return {"text": "## Goal\nKeep going.\n"}


def generate_blitz_scenario(seed: int, steps: int) -> dict[str, Any]:
    """A scenario (plain data) of ``steps`` user actions with the model's replies.

    The intruder file is planted at ``.pi/handoff_<marker>.md`` where the marker is the
    session ID the simulator derives from the seed; a wrong guess only plants a harmless file.
    """
    rng = random.Random(seed)
    space = draw_space(seed)
    menus = random.Random(_SPACE_SALT + 2 * seed + 1)  # which starts and cancels go through /sh
    # Which writers the user interrupts, where and with what (a stream of its own: the seed's
    # other draws are those of the explorer before it).
    intrusions = random.Random(_SPACE_SALT + 3 * seed + 2)
    agent: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    written = _thresholds(seed, _settings(rng))
    # The settings the extension runs with: the written ones, else the defaults (an invalid
    # file refuses every start, so nothing automatic happens either).
    settings = written if space.config == "written" else {}
    if space.config != "absent":
        operations.append({"edit_file": {"path": f"{MANAGED}/config.json", **config_file(seed, written)}})
    if rng.random() < 0.3:
        operations.append(
            {
                "edit_file": {
                    "path": f"{MANAGED}/templates/call_project.cmpl",
                    "text": f"PROJECT-CALL-{seed}\n",
                }
            }
        )
        operations.append({"reload": {}})
        operations.append(
            {
                "command": {
                    "text": "/sh project-template",
                    "answers": [{"select": "/^Call:/"}, {"select": "/call_project/"}, {"cancel": True}],
                }
            }
        )
    else:
        operations.append({"reload": {}})
    setup_end = len(operations)
    prompt_no = 0
    compactions = 0
    marker: str | None = "{session}"
    for n in range(steps):
        action = rng.choice(
            [
                "start",
                "start",
                "start",
                "model_start",
                "prompt",
                "cancel",
                "reload",
                "held_prompts",
                "fill",
                "compact",
                "bad_setting",
            ]
        )
        if action == "cancel" and menus.random() < 0.4:
            # The /sh menu, dismissed (Escape): it initiates nothing (reference §2 Interface).
            operations.append({"command": {"text": "/sh", "answers": [{"cancel": True}]}})
            continue
        if action in ("start", "model_start"):
            writer, kind = _writer(rng, n, marker)
            marker = None  # from here on a handoff may have switched the session
            if rng.random() < 0.4 and len(writer) > 1:
                prompt_no += 1
                held = dict(writer[1])
                held["during"] = [
                    *held.get("during", []),
                    {
                        "prompt": {
                            "text": prompt_text("deferred", seed, prompt_no),
                            "streaming_behavior": "followUp",
                        }
                    },
                ]
                writer[1] = held
            compactions += _intrude(intrusions, writer, space)
            if action == "model_start":
                agent.append(
                    {"tool_calls": [_call("blitz_handoff", action="start")], "context_tokens": 11_000}
                )
                agent += writer + _receiver(rng)
                operations.append({"prompt": f"please hand this session off now ({seed}-{n})"})
            else:
                agent += writer + _receiver(rng)
                if menus.random() < 0.3:
                    # The menu's primary entry: Start when idle (when a handoff is active it
                    # reads Cancel, and Recovery, refused while active, is picked instead).
                    operations.append(
                        {"command": {"text": "/sh", "answers": [{"select": "/^(Start|Recovery)/"}]}}
                    )
                else:
                    operations.append({"command": "/sh start"})
            if kind == "intruder" and rng.random() < 0.5:
                # The user gives up on the request whose dossier path a foreign file took.
                operations.append({"command": "/sh cancel"})
        elif action == "prompt":
            prompt_no += 1
            # It takes a while (nothing drawn): after a cancel, a cancelled request's reminder
            # would be due by its end (H70b).
            agent.append({"text": f"answer {n}", "context_tokens": 10_000, "latency_ms": SLOW_TURN_MS})
            operations.append({"prompt": prompt_text("idle prompt", seed, prompt_no)})
        elif action == "held_prompts":
            prompt_no += 1
            agent.append(
                {
                    "text": f"working {n}",
                    "context_tokens": 10_000,
                    "during": [
                        {
                            "prompt": {
                                "text": prompt_text("while busy", seed, prompt_no),
                                "streaming_behavior": "steer",
                            }
                        }
                    ],
                }
            )
            operations.append({"prompt": f"task {seed}-{n}"})
        elif action == "fill":
            tokens = rng.choice([145_000, 150_000, EMERGENCY_TOKENS])
            agent.append({"text": f"long work {n}", "context_tokens": tokens})
            operations.append({"prompt": f"long task {seed}-{n}"})
            if settings.get("automaticSessionHandoff") and rng.random() < 0.7:
                operations.append({"command": "/sh cancel"})
        elif action == "compact":
            operations.append({"compact": {}})
            compactions += 1
        elif action == "bad_setting":
            key, value = rng.choice(
                [
                    ("criticalWarningPercent", "50"),
                    ("contextWarningPercent", "95"),
                    ("readinessRetrySeconds", "0"),
                ]
            )
            operations.append(
                {
                    "command": {
                        "text": "/sh settings",
                        "answers": [{"select": f"/^{key}:/"}, {"input": value}, {"cancel": True}],
                    }
                }
            )
        elif action == "cancel":
            operations.append({"command": "/sh cancel"})
        else:
            operations.append({"reload": {}})
    model: dict[str, Any] = {"agent": agent}
    if (
        settings.get("automaticSessionHandoff")
        and settings.get("automaticSessionHandoffPercent")
        and rng.random() < 0.6
    ):
        # First, turns that fill the context, each followed by a cancel: repeated automatic
        # attempts (a request adds one steered model call, hence two replies per cycle).
        # The first attempt comes at the automatic level, the final one at the critical level
        # (reference §4), so the turns reach both; a compaction between the second and third
        # cycle may fail (space.compactions): a failed compaction keeps the budget (H61).
        level = max(
            int(settings["automaticSessionHandoffPercent"]), int(settings.get("criticalWarningPercent", 90))
        )
        tokens = min(math.ceil(level * WINDOW / 100) + over_level(seed), NATIVE_THRESHOLD - 2_000)
        cycle_ops: list[dict[str, Any]] = []
        cycle_replies: list[dict[str, Any]] = []
        for cycle in range(3):
            if cycle == 2:
                cycle_ops.append({"compact": {}})
                compactions += 1
            cycle_ops += [{"prompt": f"more work {seed}-{cycle}"}, {"command": "/sh cancel"}]
            # The second cycle's due turn also calls a tool: the automatic request is steering,
            # before the model's next turn, not a follow-up after the run (H15, H56a).
            tool = {"tool_calls": [_call("bash", command="echo filling")]} if cycle == 1 else {}
            cycle_replies += [
                {"text": f"filled {cycle}", "context_tokens": tokens, **tool},
                {"text": f"noted {cycle}", "context_tokens": tokens + (500 if over_level(seed) else 0)},
            ]
        operations[setup_end:setup_end] = cycle_ops
        model["agent"] = cycle_replies + agent
    model["summary"] = [_summary_reply(outcome) for outcome in space.compactions[: compactions * 2]]
    named = named_session_id(seed)
    return {
        "name": f"blitz-explore-{seed}",
        "seed": seed,
        **({"session_id": named} if named else {}),
        "mode": space.mode,
        "session": space.session,
        "trust": space.trust,
        "models": [{"id": "fake/fake-model", "context_window": WINDOW, "max_tokens": 16_384}],
        "settings": {
            "project": {
                "compaction": {
                    "enabled": True,
                    "reserveTokens": 10_000,
                    "keepRecentTokens": space.keep_recent_tokens,
                }
            }
        },
        "model": model,
        "operations": operations,
    }


def over_level(seed: int) -> int:
    """How many tokens above the automatic (or critical) level the automatic cycles' turns
    report: 1,000 on even seeds, none on odd ones (nothing drawn, so no other choice of a seed
    moves). An odd seed's turns sit exactly at the level, which Pi computes as ``(tokens /
    contextWindow) * 100`` (dist/core/agent-session.js:3642 of 1.6.0): 140,000, 170,000,
    180,000 and 188,000 of 200,000 are exactly 70, 85, 90 and 94 in IEEE doubles. "At the
    threshold" includes it (reference §4 Automatic, H56a, H58): with every cycle turn above the
    level, an implementation that started attempts only strictly above it was out of reach."""
    return 1_000 if seed % 2 == 0 else 0


def named_session_id(seed: int) -> str | None:
    """The id a seed gives its first session (Pi's ``--session-id``), or None for Pi's UUIDv7:
    one seed in seven (nothing drawn) names it with an underscore and a dot, which Pi accepts
    (``assertValidSessionId``, session-manager.js:15-19) and a recovery file's name must reduce
    to letters, digits and hyphens (reference §3.4, H46a: with UUIDv7 ids only, an
    implementation that kept the id unreduced was out of reach)."""
    return f"team_blitz.s{seed}" if seed % 7 == 3 else None


def blitz_case(seed: int, steps: int) -> BlitzCase:
    """The case ``seed`` expands to, its intruder planted where the first session's dossier goes."""
    data = generate_blitz_scenario(seed, steps)
    first = data["operations"][0].get("edit_file", {})
    settings_written = first.get("path") == f"{MANAGED}/config.json"
    settings = dict(first.get("json") or {}) if settings_written else {}
    data = json.loads(json.dumps(data).replace("{session}", named_session_id(seed) or first_session_id(seed)))
    scenario = parse_scenario(data, f"blitz handoff exploration seed {seed}")
    reloads = [i for i, op in enumerate(data["operations"]) if "reload" in op]
    return BlitzCase(
        seed=seed,
        steps=steps,
        settings=settings,
        base=scenario.model_copy(update={"operations": ()}),
        operations=scenario.operations,
        agent=scenario.model.agent,
        space=draw_space(seed),
        setup=reloads[0] + 1 if settings_written and reloads else 0,
    )
