"""Seeds of the blitz handoff explorer expand into cases: settings, user actions, model behaviours.

``random.Random(seed)`` draws, in a fixed order, the machine (random handoff settings,
sometimes a project Call template, sometimes repeated automatic attempts) and a sequence of
user actions (``/sh start``, a model-started handoff, ``/sh cancel``, prompts while idle and
while the model writes, turns that fill the context, a manual compaction, an invalid settings
edit, reloads) with the model's behaviours (GET, repeated GET, the native write, Finish with
the returned ID, a foreign ID or twice, early stops, slow or context-filling replies, a file
that appears where the dossier goes, receivers that read and delete the dossier, or fail).

The intruder file is planted at ``.pi/handoff_<session id>.md``: the id is the one the seed's
first session gets (``runner.first_session_id``), so the file lands where the extension would
reserve the dossier. Only the seed's first writer can be an intruder (often one, sometimes
followed by a ``/sh cancel``): after a handoff the live session has another id, and a file
planted at the first session's path lands where no dossier goes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace
from typing import Any

from pi_continuity_harness.explore.runner import first_session_id
from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.scenario.document import Scenario, parse_scenario
from pi_continuity_harness.scenario.model_script import ModelScript, Reply
from pi_continuity_harness.scenario.operations import Operation

__all__ = [
    "DOSSIER",
    "EMERGENCY_TOKENS",
    "FINISH",
    "FINISH_ID",
    "GET",
    "MANAGED",
    "WINDOW",
    "BlitzCase",
    "blitz_case",
    "generate_blitz_scenario",
]

MANAGED = "$AGENT/pi-blitz-handoff"
GET = "session_handoff_get_template"
FINISH = "session_handoff_finish"
FINISH_ID = "{{match:" + oracle.FINISH_ID_MATCH + "}}"
DOSSIER = "{{match:" + oracle.DOSSIER_MATCH + "}}"
DELETE = "{{match:" + oracle.DELETION_MATCH + "}}"
WINDOW = 200_000
EMERGENCY_TOKENS = 182_000  # 91% of the window; the native threshold is 190,000 here


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

    @property
    def name(self) -> str:
        return f"blitz-explore-{self.seed}"

    def scenario(self, *, operations: tuple[Operation, ...] | None = None) -> Scenario:
        return self.base.model_copy(
            update={
                "model": ModelScript(agent=self.agent),
                "operations": self.operations if operations is None else operations,
            }
        )

    def without(self, **changes: Any) -> BlitzCase:
        return replace(self, **changes)

    def describe(self) -> str:
        s = self.settings
        automatic = (
            f"automatic {s.get('automaticSessionHandoffPercent')}%"
            if s.get("automaticSessionHandoff")
            else "manual"
        )
        return (
            f"seed {self.seed}: deferPromptsFrom {s.get('deferPromptsFrom')} delete "
            f"{'yes' if s.get('deleteHandoffAfterReading') else 'no'} retry {s.get('readinessRetrySeconds')}s "
            f"chain {s.get('maxSessionChainLength')} {automatic}"
        )

    def options_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "steps": self.steps, "settings": dict(self.settings)}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


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
    dossier = f"# Dossier {n}\n\nNext action: step {n}.\n"
    get = {"tool_calls": [_call(GET)], "context_tokens": 12_000}
    write = {"tool_calls": [_call("write", path=DOSSIER, content=dossier)], "context_tokens": 12_500}
    finish = {"tool_calls": [_call(FINISH, id=FINISH_ID)], "context_tokens": 13_000}
    done = {"text": f"writer {n} done", "context_tokens": 13_100}
    replies: list[dict[str, Any]]
    if kind == "repeat_get":
        replies = [get, get, write, finish, done]
    elif kind == "foreign":
        replies = [get, write, {"tool_calls": [_call(FINISH, id=f"forged-{n}")]}, done]
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
        full = {"tool_calls": [_call("bash", command="echo gathering")], "context_tokens": EMERGENCY_TOKENS}
        replies = [full, get, write, finish, done]
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


def _receiver(rng: random.Random) -> list[dict[str, Any]]:
    outcome = rng.choice(["reads", "reads", "error"])
    if outcome == "error":
        return [{"error": {"status": 400, "message": "bad request"}}]
    return [
        {"tool_calls": [_call("read", path=DOSSIER)]},
        {"tool_calls": [_call("bash", command="rm -f " + DELETE)]},
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


def generate_blitz_scenario(seed: int, steps: int) -> dict[str, Any]:
    """A scenario (plain data) of ``steps`` user actions with the model's replies.

    The intruder file is planted at ``.pi/handoff_<marker>.md`` where the marker is the
    session ID the simulator derives from the seed; a wrong guess only plants a harmless file.
    """
    rng = random.Random(seed)
    agent: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    settings = _settings(rng)
    operations.append({"edit_file": {"path": f"{MANAGED}/config.json", "json": settings}})
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
        if action in ("start", "model_start"):
            writer, kind = _writer(rng, n, marker)
            marker = None  # from here on a handoff may have switched the session
            if rng.random() < 0.4 and len(writer) > 1:
                prompt_no += 1
                held = dict(writer[1])
                held["during"] = [
                    *held.get("during", []),
                    {"prompt": {"text": f"deferred {seed}-{prompt_no}", "streaming_behavior": "followUp"}},
                ]
                writer[1] = held
            if action == "model_start":
                agent.append(
                    {"tool_calls": [_call("blitz_handoff", action="start")], "context_tokens": 11_000}
                )
                agent += writer + _receiver(rng)
                operations.append({"prompt": f"please hand this session off now ({seed}-{n})"})
            else:
                agent += writer + _receiver(rng)
                operations.append({"command": "/sh start"})
            if kind == "intruder" and rng.random() < 0.5:
                # The user gives up on the request whose dossier path a foreign file took.
                operations.append({"command": "/sh cancel"})
        elif action == "prompt":
            prompt_no += 1
            agent.append({"text": f"answer {n}", "context_tokens": 10_000})
            operations.append({"prompt": f"idle prompt {seed}-{prompt_no}"})
        elif action == "held_prompts":
            prompt_no += 1
            agent.append(
                {
                    "text": f"working {n}",
                    "context_tokens": 10_000,
                    "during": [
                        {"prompt": {"text": f"while busy {seed}-{prompt_no}", "streaming_behavior": "steer"}}
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
        cycle_ops: list[dict[str, Any]] = []
        cycle_replies: list[dict[str, Any]] = []
        for cycle in range(3):
            cycle_ops += [{"prompt": f"more work {seed}-{cycle}"}, {"command": "/sh cancel"}]
            cycle_replies += [
                {"text": f"filled {cycle}", "context_tokens": 146_000},
                {"text": f"noted {cycle}", "context_tokens": 146_500},
            ]
        operations[setup_end:setup_end] = cycle_ops
        model["agent"] = cycle_replies + agent
    return {
        "name": f"blitz-explore-{seed}",
        "seed": seed,
        "models": [{"id": "fake/fake-model", "context_window": WINDOW, "max_tokens": 16_384}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 10_000, "keepRecentTokens": 2_000}}
        },
        "model": model,
        "operations": operations,
    }


def blitz_case(seed: int, steps: int) -> BlitzCase:
    """The case ``seed`` expands to, its intruder planted where the first session's dossier goes."""
    data = generate_blitz_scenario(seed, steps)
    settings = dict(data["operations"][0]["edit_file"]["json"])
    data = json.loads(json.dumps(data).replace("{session}", first_session_id(seed)))
    scenario = parse_scenario(data, f"blitz handoff exploration seed {seed}")
    return BlitzCase(
        seed=seed,
        steps=steps,
        settings=settings,
        base=scenario.model_copy(update={"operations": ()}),
        operations=scenario.operations,
        agent=scenario.model.agent,
    )
