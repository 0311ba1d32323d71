"""Exploration of pi-blitz-handoff: random sessions checked against the handoff invariants.

Each seed generates one machine (random handoff settings, sometimes a project Call template)
and a sequence of user actions (``/sh start``, a model-started handoff, ``/sh cancel``,
prompts while idle and while the model writes, turns that fill the context, a manual
compaction, an invalid settings edit, reloads) and model behaviours (GET, repeated GET, the
native write, Finish with the returned ID, a foreign ID or twice, early stops, slow or
context-filling replies, a file that appears where the dossier goes, receivers that read
and delete the dossier, or fail). The run is checked at the end against
:data:`HANDOFF_INVARIANTS`, which read only what the run leaves behind (operations, session
files, the trace, the managed files), never the reference's code. The first four are the
rules the brief names:

``captured_prompts_kept_in_order``
    every prompt the implementation captured (``handled``) is kept, unchanged, in the
    recovery directory or delivered to a model after its capture, and prompts found
    together keep their capture order;
``dossier_kept_until_receiver_turn``
    after a Finish was accepted, the implementation never removes the dossier before the
    receiving session's bootstrap turn has settled;
``one_active_request``
    within one request (until a cancel, a reload or a session switch) every successful
    template response carries the same Finish ID and one Call instruction is sent at most;
``finish_only_with_returned_id``
    an accepted Finish carries exactly the Finish ID of the latest successful template
    response of that session, and no Finish is accepted twice.

The others: ``receiver_link_follows_chain_limit``, ``one_reminder_per_request``,
``emergency_once_at_90_percent``, ``automatic_initiation_budget``, ``settings_file_valid``,
``dossier_retained_when_deletion_off``, ``foreign_files_untouched``,
``project_call_template_used``.

:func:`explore_handoff` runs seeds and returns plain reports and the throughput (seeds/s);
:func:`run_explore_command` is what ``pi-continuity-harness explore`` runs for an
implementation that declares ``pi_continuity_system = "pi-blitz-handoff"``.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.scenario.document import parse_scenario
from pi_continuity_harness.scenario.transcript import content_text as _text
from pi_continuity_harness.simulator.simulation import Simulation, resolve_implementation

__all__ = [
    "HANDOFF_INVARIANTS",
    "SYSTEM",
    "HandoffSeedReport",
    "explore_handoff",
    "explore_handoff_seed",
    "generate_handoff_scenario",
    "implementation_system",
    "run_explore_command",
]

SYSTEM = "pi-blitz-handoff"
MANAGED = "$AGENT/pi-blitz-handoff"
GET = "session_handoff_get_template"
FINISH = "session_handoff_finish"
FINISH_ID = r"{{match:Finish ID: (\S+)}}"
DOSSIER = r"{{match:Dossier file: (\S+)}}"
WINDOW = 200_000
EMERGENCY_TOKENS = 182_000  # 91% of the window; the native threshold is 190,000 here
_ID_IN_RESULT = re.compile(r"Finish ID: (\S+)")
_DOSSIER_IN_RESULT = re.compile(r"Dossier file: (\S+)")
#: The product's mandatory protocol line of every Call instruction (what the model is told).
_CALL_PROTOCOL = re.compile(r"session_handoff_get_template\(\{\}\)` before you write")
_REMINDER = re.compile(r"handoff reminder", re.IGNORECASE)
_EMERGENCY = re.compile(r"EMERGENCY")


def implementation_system(spec: Any) -> str:
    """The system an implementation declares (``pi_continuity_system``), else Session Continuity."""
    _name, factory = resolve_implementation(spec)
    declared = getattr(factory, "pi_continuity_system", None)
    return declared if isinstance(declared, str) and declared else "pi-session-continuity"


# ======================================================================== generation
def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _writer(rng: random.Random, n: int, session_marker: str) -> tuple[list[dict[str, Any]], str]:
    """One writer behaviour: the replies of a source run after a handoff request."""
    kind = rng.choice(
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
    return replies, kind


def _receiver(rng: random.Random) -> list[dict[str, Any]]:
    outcome = rng.choice(["reads", "reads", "error"])
    if outcome == "error":
        return [{"error": {"status": 400, "message": "bad request"}}]
    return [
        {"tool_calls": [_call("read", path=r"{{match:read the entire file (\S+)}}")]},
        {"tool_calls": [_call("bash", command=r"rm -f {{match:delete exactly this file: (\S+)}}")]},
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


def generate_handoff_scenario(seed: int, steps: int) -> dict[str, Any]:
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
    marker = "{session}"
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
            writer, _kind = _writer(rng, n, marker)
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
        "name": f"handoff-explore-{seed}",
        "seed": seed,
        "models": [{"id": "fake/fake-model", "context_window": WINDOW, "max_tokens": 16_384}],
        "settings": {
            "project": {"compaction": {"enabled": True, "reserveTokens": 10_000, "keepRecentTokens": 2_000}}
        },
        "model": model,
        "operations": operations,
    }


# ======================================================================== observation
@dataclass
class _Run:
    """What a finished simulation shows, read the same way for any implementation."""

    simulation: Simulation
    settings: dict[str, Any]

    @property
    def host(self) -> Any:
        return self.simulation.host

    @property
    def records(self) -> list[dict[str, Any]]:
        return list(self.host.trace.records)

    def real(self, path: str) -> str:
        return path.replace("$WORK", self.host.paths.workdir)

    def session_files(self) -> list[Path]:
        return sorted(Path(self.host.paths.session_dir).glob("*.jsonl"))

    def session_entries(self) -> list[list[dict[str, Any]]]:
        """Entries per session, in creation order (files on disk, plus the live session)."""
        out = []
        live = self.host.runtime.session_manager if self.host.runtime is not None else None
        live_file = live.get_session_file() if live is not None else None
        for path in self.session_files():
            if str(path) == live_file:
                continue
            out.append(_lines(path)[1:])
        if live is not None:
            out.append(list(live.get_entries()))
        return out

    def managed(self, *parts: str) -> Path:
        return Path(self.host.paths.agent_dir, "pi-blitz-handoff", *parts)

    def recovery_texts(self) -> list[str]:
        root = self.managed("recovery")
        if not root.is_dir():
            return []
        return [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()]

    def boundaries(self) -> list[int]:
        """Trace positions where a request ends for sure: a cancel, a reload, a session switch."""
        return sorted(
            int(r["seq"])
            for r in self.records
            if (
                r["kind"] == "op"
                and r["name"] == "command"
                and str(r.get("text", "")).startswith("/sh cancel")
            )
            or (
                r["kind"] == "event" and r["name"] == "session_start" and r.get("reason") in ("new", "reload")
            )
        )

    def epoch(self, seq: int) -> int:
        return sum(1 for b in self.boundaries() if b < seq)


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError):
        return []


def _tool_exchanges(entries: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool name, call arguments, result message) in transcript order."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in entries:
        message = entry.get("message") or {}
        if entry.get("type") != "message":
            continue
        if message.get("role") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    calls[str(block.get("id"))] = (str(block.get("name")), dict(block.get("arguments") or {}))
        elif message.get("role") == "toolResult":
            name, arguments = calls.get(str(message.get("toolCallId")), (str(message.get("toolName")), {}))
            yield name, arguments, message


def _submitted_dossiers(run: _Run) -> set[str]:
    submitted: set[str] = set()
    for entries in run.session_entries():
        dossier = None
        for name, _arguments, result in _tool_exchanges(entries):
            if name == GET and not result.get("isError"):
                match = _DOSSIER_IN_RESULT.search(_text(result.get("content")))
                dossier = match.group(1) if match else dossier
            if name == FINISH and not result.get("isError") and dossier:
                submitted.add(dossier)
    return submitted


def _per_request(run: _Run, pattern: re.Pattern[str]) -> dict[int, int]:
    """How many user/custom messages matching ``pattern`` entered a transcript, per request
    (the :meth:`_Run.epoch` of the message)."""
    counts: dict[int, int] = {}
    for record in run.records:
        if (
            record["kind"] == "session"
            and record["name"] == "message_end"
            and record.get("role") in ("user", "custom")
            and pattern.search(str(record.get("text", "")))
        ):
            epoch = run.epoch(int(record["seq"]))
            counts[epoch] = counts.get(epoch, 0) + 1
    return counts


# ======================================================================== invariants
Invariant = Callable[[_Run, list[dict[str, Any]]], Iterator[str]]


def captured_prompts_kept_in_order(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Captured prompts are kept unchanged in the recovery directory or delivered after capture;
    prompts found together keep their capture order (reference §3.4, §4)."""
    captured = [op["text"] for op in ops if op["kind"] == "prompt" and op.get("disposition") == "handled"]
    if not captured:
        return
    delivered = [_text(m.get("content")) for request in run.host.service.requests for m in request.messages]
    sinks = run.recovery_texts() + delivered

    def where(text: str, sink: str) -> int:
        """Position of ``text`` as a whole line (or the whole message) in ``sink``, else -1."""
        found = re.search(r"(?m)^" + re.escape(text) + r"$", sink)
        return found.start() if found else -1

    for text in captured:
        if not any(where(text, sink) >= 0 for sink in sinks):
            yield f"the captured prompt {text!r} is neither in a recovery file nor delivered to a model"
    for sink in sinks:
        positions = [(where(t, sink), t) for t in captured if where(t, sink) >= 0]
        if [p for p, _ in positions] != sorted(p for p, _ in positions):
            yield f"captured prompts are out of order in {sink[:80]!r}: {[t for _, t in positions]}"


def dossier_kept_until_receiver_turn(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """After an accepted Finish the implementation never removes the dossier before the receiver's
    bootstrap turn settled (reference §3.7; the receiver model deletes it, not the extension)."""
    submitted = _submitted_dossiers(run)
    if not submitted:
        return
    pending = switched = False
    for record in run.records:
        kind, name = record["kind"], record["name"]
        if kind == "session" and name == "tool_execution_end" and record.get("toolName") == FINISH:
            pending = pending or not record.get("isError")
        elif kind == "event" and name == "session_start" and record.get("reason") == "new":
            switched = pending
        elif kind == "session" and name == "agent_settled" and switched and not record.get("aborted"):
            pending = switched = False
        elif kind == "fs" and name in ("remove", "replace") and pending:
            path = run.real(str(record.get("path", "")))
            if path in submitted:
                yield f"the implementation removed the submitted dossier {path} before the receiver's turn settled"


def _template_responses(run: _Run) -> list[tuple[int, dict[str, Any]]]:
    """(trace seq, tool result) of every template retrieval: the trace's executions paired in
    order with the results the session file recorded for them."""
    executions = [
        r
        for r in run.records
        if r["kind"] == "session" and r["name"] == "tool_execution_end" and r.get("toolName") == GET
    ]
    results = [
        result
        for entries in run.session_entries()
        for name, _a, result in _tool_exchanges(entries)
        if name == GET
    ]
    return [(int(record["seq"]), result) for record, result in zip(executions, results, strict=False)]


def _get_results(run: _Run) -> list[tuple[int, str | None]]:
    """(trace seq, Finish ID) of every template response, in order (None: an error result)."""
    out = []
    for seq, result in _template_responses(run):
        match = None if result.get("isError") else _ID_IN_RESULT.search(_text(result.get("content")))
        out.append((seq, match.group(1) if match else None))
    return out


def _call_instructions(run: _Run) -> list[tuple[int, str]]:
    """(trace seq, text) of every Call instruction sent to the model (as a prompt or steering)."""
    out = []
    for record in run.records:
        if record["kind"] == "event" and record["name"] == "input" and record.get("source") == "extension":
            text = str(record.get("text", ""))
            if _CALL_PROTOCOL.search(text):
                out.append((int(record["seq"]), text))
    for entries in run.session_entries():
        for entry in entries:
            if entry.get("type") == "custom_message" and _CALL_PROTOCOL.search(_text(entry.get("content"))):
                out.append((-1, _text(entry.get("content"))))
    return out


def one_active_request(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Until a cancel, a reload or a session switch, every successful GET carries the same Finish
    ID and at most one Call instruction is sent (reference §3.1, one active request)."""
    per_epoch: dict[int, int] = {}
    for seq, _text_sent in _call_instructions(run):
        if seq < 0:
            continue
        epoch = run.epoch(seq)
        per_epoch[epoch] = per_epoch.get(epoch, 0) + 1
        if per_epoch[epoch] == 2:
            yield "another Call instruction was sent while a request was active"
    current: tuple[int, str] | None = None
    for seq, fid in _get_results(run):
        if fid is None:
            continue
        epoch = run.epoch(seq)
        if current is not None and current[0] == epoch and current[1] != fid:
            yield f"a second request replaced the active one ({current[1]} -> {fid})"
        current = (epoch, fid)


def finish_only_with_returned_id(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """An accepted Finish carries the Finish ID of the latest successful GET, once (reference §3.5)."""
    for index, entries in enumerate(run.session_entries()):
        latest: str | None = None
        accepted: set[str] = set()
        for name, arguments, result in _tool_exchanges(entries):
            if name == GET and not result.get("isError"):
                match = _ID_IN_RESULT.search(_text(result.get("content")))
                latest = match.group(1) if match else latest
            if name == FINISH and not result.get("isError"):
                fid = str(arguments.get("id"))
                if fid != latest:
                    yield f"session {index}: Finish accepted with a foreign ID {fid!r} (returned: {latest!r})"
                if fid in accepted:
                    yield f"session {index}: Finish accepted twice for {fid!r}"
                accepted.add(fid)


def _chain_length(path: str, limit: int) -> int:
    length, seen = 1, {path}
    header = (_lines(Path(path)) or [{}])[0]
    parent = header.get("parentSession")
    while isinstance(parent, str) and parent and length < limit and parent not in seen:
        seen.add(parent)
        length += 1
        parent = (_lines(Path(parent)) or [{}])[0].get("parentSession")
    return length


def receiver_link_follows_chain_limit(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A receiver is parent-linked to its source unless the source's chain (master included)
    already reached maxSessionChainLength: then it is an independent master (reference §7)."""
    limit = int(run.settings.get("maxSessionChainLength", 25))
    created = [
        r for r in run.records if r["kind"] == "host" and r["name"] == "runtime" and r.get("reason") == "new"
    ]
    for record in created:
        new_file = run.real(str(record.get("sessionFile") or ""))
        lines = _lines(Path(new_file))
        if not lines:
            continue  # never written: nothing was delivered there
        start = next(
            (
                r
                for r in run.records
                if r["kind"] == "event" and r["name"] == "session_start" and r["seq"] > record["seq"]
            ),
            None,
        )
        source = run.real(str((start or {}).get("previousSessionFile") or ""))
        parent = lines[0].get("parentSession")
        at_limit = _chain_length(source, limit) >= limit
        if at_limit and parent is not None:
            yield f"{new_file}: linked to {parent} although the chain reached {limit}"
        if not at_limit and parent != source:
            yield f"{new_file}: parent {parent!r}, expected the source {source}"


def one_reminder_per_request(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """At most one visible reminder per request (reference §4)."""
    for count in _per_request(run, _REMINDER).values():
        if count > 1:
            yield "a second reminder for the same request"


def emergency_once_at_90_percent(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """With a requested, unsubmitted handoff, the first completed turn at or above 90% gets the
    fixed emergency instruction, once per request; never without a request (reference §4)."""
    emergencies = _per_request(run, _EMERGENCY)
    for count in emergencies.values():
        if count > 1:
            yield "a second emergency instruction for the same request"
    active = submitted = False
    owed: int | None = None
    calls = {seq for seq, _t in _call_instructions(run) if seq >= 0}
    boundaries = set(run.boundaries())
    for record in run.records:
        seq = int(record["seq"])
        kind, name = record["kind"], record["name"]
        if seq in calls or (
            kind == "session"
            and name == "tool_execution_end"
            and record.get("toolName") == GET
            and not record.get("isError")
        ):
            active = True
        if kind == "session" and name == "tool_execution_end" and record.get("toolName") == FINISH:
            submitted = submitted or not record.get("isError")
        if seq in boundaries:
            if owed is not None and not emergencies.get(owed):
                yield "a completed turn at or above 90% with an unsubmitted request got no emergency instruction"
            active = submitted = False
            owed = None
        if (
            kind == "model"
            and name == "reply"
            and record.get("caller") == "agent"
            and record.get("stopReason") in ("stop", "toolUse")
            and (record.get("totalTokens") or 0) >= math.ceil(0.9 * WINDOW)
            and active
            and not submitted
            and owed is None
        ):
            owed = run.epoch(seq)
    if owed is not None and not emergencies.get(owed):
        yield "a completed turn at or above 90% with an unsubmitted request got no emergency instruction"


def automatic_initiation_budget(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Automatic requests only when enabled with a nonzero threshold, at most two per session
    between successful compactions (reference §4, automatic)."""
    enabled = (
        bool(run.settings.get("automaticSessionHandoff"))
        and run.settings.get("automaticSessionHandoffPercent", 70) != 0
    )
    for index, entries in enumerate(run.session_entries()):
        count = 0
        for entry in entries:
            if entry.get("type") == "compaction":
                count = 0
            if entry.get("type") == "custom_message" and _CALL_PROTOCOL.search(_text(entry.get("content"))):
                count += 1
                if not enabled:
                    yield f"session {index}: an automatic request although automatic initiation is off"
                elif count == 3:
                    yield f"session {index}: a third automatic request without a compaction in between"


def settings_file_valid(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """The saved settings always satisfy the settings table's constraints (reference §6)."""
    path = run.managed("config.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return
    warning = data.get("contextWarningPercent", 60)
    critical = data.get("criticalWarningPercent", 90)
    retry = data.get("readinessRetrySeconds", 60)
    automatic = data.get("automaticSessionHandoffPercent", 70)
    if not (1 <= warning < critical <= 100):
        yield f"saved warning/critical percents {warning}/{critical} break 1 <= warning < critical <= 100"
    if not (isinstance(retry, int) and 1 <= retry <= 300):
        yield f"saved readinessRetrySeconds {retry!r} is not an integer from 1 to 300"
    if not (0 <= automatic <= 100):
        yield f"saved automaticSessionHandoffPercent {automatic!r} is outside 0..100"


def dossier_retained_when_deletion_off(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """With deleteHandoffAfterReading false, every submitted dossier stays (reference §7)."""
    if run.settings.get("deleteHandoffAfterReading", True):
        return
    for path in sorted(_submitted_dossiers(run)):
        if not Path(path).exists():
            yield f"{path} was deleted although deleteHandoffAfterReading is false"


def foreign_files_untouched(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A file the extension did not create is never removed or changed (reference §5).

    A file planted where a template response had already reserved the dossier is not foreign.
    """
    named = _reserved_paths(run)
    for op in ops:
        if op["kind"] != "edit_file" or "content" not in op:
            continue
        path = Path(run.host.paths.project_dir, op["path"])
        if any(seq < op["seq"] and str(path) == where for seq, where in named):
            continue
        later = [
            o for o in ops if o["kind"] == "edit_file" and o["path"] == op["path"] and o["seq"] > op["seq"]
        ]
        expected = later[-1]["content"] if later else op["content"]
        if not path.exists() or path.read_text(encoding="utf-8") != expected:
            yield f"the foreign file {path} was removed or changed"


def _reserved_paths(run: _Run) -> list[tuple[int, str]]:
    """(trace seq, dossier path) of every successful template response."""
    out = []
    for seq, result in _template_responses(run):
        match = _DOSSIER_IN_RESULT.search(_text(result.get("content")))
        if match and not result.get("isError"):
            out.append((seq, match.group(1)))
    return out


def project_call_template_used(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A project Call selection for the cwd is used by every later start (reference §7)."""
    path = run.managed("project-templates.json")
    marker_file = run.managed("templates", "call_project.cmpl")
    if not marker_file.exists():
        return
    selected = any(op["kind"] == "command" and op["text"].startswith("/sh project-template") for op in ops)
    if selected and not path.exists():
        yield f"the project Call selection was not persisted in {path}"
        return
    if not path.exists():
        return
    try:
        assigned = json.loads(path.read_text(encoding="utf-8")).get("projects", {})
    except json.JSONDecodeError:
        return
    if assigned.get(run.host.paths.project_dir, {}).get("call") != "call_project.cmpl":
        return
    marker = marker_file.read_text(encoding="utf-8").strip()
    for _seq, text in _call_instructions(run):
        if marker not in text:
            yield f"a Call instruction without the project's Call template ({marker})"
            return


HANDOFF_INVARIANTS: dict[str, Invariant] = {
    "captured_prompts_kept_in_order": captured_prompts_kept_in_order,
    "dossier_kept_until_receiver_turn": dossier_kept_until_receiver_turn,
    "one_active_request": one_active_request,
    "finish_only_with_returned_id": finish_only_with_returned_id,
    "receiver_link_follows_chain_limit": receiver_link_follows_chain_limit,
    "one_reminder_per_request": one_reminder_per_request,
    "emergency_once_at_90_percent": emergency_once_at_90_percent,
    "automatic_initiation_budget": automatic_initiation_budget,
    "settings_file_valid": settings_file_valid,
    "dossier_retained_when_deletion_off": dossier_retained_when_deletion_off,
    "foreign_files_untouched": foreign_files_untouched,
    "project_call_template_used": project_call_template_used,
}


# ======================================================================== running
@dataclass
class HandoffSeedReport:
    seed: int
    ok: bool
    operations: int
    seconds: float
    violations: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The explore command's seed shape (``violation`` names the first invariant broken)."""
        data = asdict(self)
        if self.violations:
            invariant, _, message = self.violations[0].partition(": ")
            data["violation"] = {"invariant": invariant, "message": message}
        return data


def _ops_from_trace(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every operation (held ``during`` ones too) with its outcome: begins and ends nest."""
    ops: list[dict[str, Any]] = []
    open_ops: list[dict[str, Any]] = []
    for record in records:
        if record["kind"] != "op":
            continue
        if record.get("phase") == "end":
            for index in range(len(open_ops) - 1, -1, -1):
                if open_ops[index]["kind"] == record["name"]:
                    op = open_ops.pop(index)
                    op["disposition"] = record.get("disposition")
                    op["ok"] = record.get("ok")
                    break
            continue
        op = {
            "kind": record["name"],
            "seq": int(record["seq"]),
            "text": str(record.get("text") or ""),
            "path": str(record.get("path") or ""),
            "disposition": None,
            "ok": None,
        }
        ops.append(op)
        open_ops.append(op)
    return ops


def _planted(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Foreign files the scenario plants (held ``during`` edits): (project path, text), in the
    order the replies carrying them are used."""
    out = []
    for reply in data["model"]["agent"]:
        for op in reply.get("during", []):
            edit = op.get("edit_file") if isinstance(op, dict) else None
            if edit and "/handoff_" in edit["path"]:
                out.append((edit["path"], edit.get("text", "")))
    return out


def explore_handoff_seed(seed: int, steps: int, extension: Any, *, workdir: str | Path) -> HandoffSeedReport:
    started = time.perf_counter()
    data = generate_handoff_scenario(seed, steps)
    settings = dict(data["operations"][0]["edit_file"]["json"])
    violations: list[str] = []
    ops: list[dict[str, Any]] = []
    probe = Simulation(parse_scenario({**data, "operations": []}), workdir=workdir, implementation=extension)
    try:
        probe.start()
        session_id = probe.host.runtime.session_manager.get_session_id() if probe.host.runtime else "none"
    finally:
        probe.finish()
    text = json.dumps(data).replace("{session}", session_id)
    data = json.loads(text)
    scenario = parse_scenario(data, f"handoff exploration seed {seed}")
    simulation = Simulation(scenario, workdir=workdir, implementation=extension)
    try:
        simulation.start()
        for operation in scenario.operations:
            simulation.perform(operation)
        ops = _ops_from_trace(simulation.host.trace.records)
        planted = _planted(data)
        edits = [record for record in ops if record["kind"] == "edit_file" and "/handoff_" in record["path"]]
        for record, (_path, content) in zip(edits, planted, strict=False):
            record["content"] = content
        run = _Run(simulation, settings)
        for name, invariant in HANDOFF_INVARIANTS.items():
            violations += [f"{name}: {problem}" for problem in invariant(run, ops)]
    finally:
        simulation.finish()
    return HandoffSeedReport(seed, not violations, len(ops), time.perf_counter() - started, violations)


def explore_handoff(
    seeds: range | list[int], steps: int, extension: Any, *, work_root: str | Path | None = None
) -> tuple[list[HandoffSeedReport], float]:
    """Run ``seeds``; returns the reports and the throughput in seeds per second."""
    root = Path(work_root) if work_root is not None else Path(tempfile.mkdtemp(prefix="handoff-explore-"))
    started = time.perf_counter()
    reports = [_explore_and_tidy(s, steps, extension, root) for s in seeds]
    seconds = time.perf_counter() - started
    _remove_if_empty(root)
    return reports, (len(reports) / seconds if seconds else 0.0)


def _explore_and_tidy(seed: int, steps: int, extension: Any, root: Path) -> HandoffSeedReport:
    """One seed; a passing seed's work directory is removed, a failing one's kept for inspection."""
    workdir = root / f"seed-{seed}"
    report = explore_handoff_seed(seed, steps, extension, workdir=workdir)
    if report.ok:
        shutil.rmtree(workdir, ignore_errors=True)
    return report


def _remove_if_empty(root: Path) -> None:
    with contextlib.suppress(OSError):
        root.rmdir()


def run_explore_command(args: Any) -> int:
    """``pi-continuity-harness explore`` for a pi-blitz-handoff implementation (same options,
    same JSON shape: ``{"implementation", "steps", "summary", "seeds": [...]}``)."""
    seeds = list(range(args.seed_start, args.seed_start + args.seeds))
    work_root = Path(tempfile.mkdtemp(prefix="pch-handoff-explore-"))
    print(
        f"pi-continuity-harness explore ({SYSTEM}): {args.extension}, {len(seeds)} seeds, {args.steps} steps each"
    )
    started = time.perf_counter()
    reports: list[HandoffSeedReport] = []
    for seed in seeds:
        report = _explore_and_tidy(seed, args.steps, args.extension, work_root)
        reports.append(report)
        if not report.ok:
            kept = work_root / f"seed-{seed}"
            print(f"seed {seed} FAILED: {report.violations[0]} (work directory {kept})", flush=True)
        elif not args.quiet:
            print(f"seed {seed} ok ({report.operations} ops, {report.seconds:.2f}s)", flush=True)
        if args.max_failures and sum(1 for r in reports if not r.ok) >= args.max_failures:
            break
    wall = time.perf_counter() - started
    _remove_if_empty(work_root)
    failed = [r for r in reports if not r.ok]
    summary = {
        "seeds": len(reports),
        "failed": len(failed),
        "seconds": round(wall, 3),
        "seedsPerSecond": round(len(reports) / wall, 2) if wall else None,
    }
    print(
        f"{len(reports) - len(failed)}/{len(reports)} seeds passed in {wall:.1f}s ({summary['seedsPerSecond']} seeds/s)"
    )
    if args.json_path is not None:
        args.json_path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "implementation": args.extension,
            "system": SYSTEM,
            "steps": args.steps,
            "summary": summary,
            "seeds": [r.to_json() for r in reports],
        }
        args.json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0 if not failed else 1
