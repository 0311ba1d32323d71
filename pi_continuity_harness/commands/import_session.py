"""``pi-continuity-harness import-session SESSION.jsonl``: a real Pi session file as a scenario.

Reads a Pi 1.6 session file (for instance one attached to a failure report) and writes the
scenario that replays it on the simulator with any implementation: its prompts, the model's
replies with their usage and stop reasons, tool calls, model changes, compactions and settings
(docs/reproducing-a-session.md). The scenario goes to ``--output`` or standard output. What the
file cannot say (context windows, the user's settings) comes from ``--context-window``,
``--max-tokens`` and ``--settings``. A malformed file exits with status 2 and
``file: line N: reason``, and nothing is written; so does an ``--output`` that is the session
file itself or the ``--settings`` file. The recorded tool calls' paths are placed inside the
replay's project (those outside the recorded cwd under ``outside-project/``, each printed), so a
replay never touches the developer's own files.

Then the scenario is replayed on the simulator with the null implementation and its session
compared with the file (entry types, order, parent links, compactions, replies' stop reasons
and usage); a compaction the replay misses or adds is replayed the other way (automatic or
manual) and the check prints whether the replay reproduces the session, or the first entry
that differs (``--no-check``: skip it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._paths import check_distinct, check_file
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario.atomic_write import write_atomically
from pi_continuity_harness.scenario.document import Scenario, dump_scenario
from pi_continuity_harness.scenario.field_path import field_path
from pi_continuity_harness.scenario.option_values import positive_whole
from pi_continuity_harness.scenario.owned_dirs import owned_temporary_directory
from pi_continuity_harness.scenario.session_import import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    IMAGE_NOTE,
    OUTSIDE_NOTE,
    import_session,
    session_shape,
)
from pi_continuity_harness.scenario.yaml_text import json_data_problem
from pi_continuity_harness.simulator.simulation import simulate

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import-session",
        help=SUMMARIES["import-session"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("session", metavar="SESSION.jsonl", help="a Pi 1.6 session file")
    parser.add_argument("--output", metavar="S.yaml", default=None, help="write the scenario here")
    parser.add_argument(
        "--context-window",
        type=positive_whole,
        default=DEFAULT_CONTEXT_WINDOW,
        help=f"every model's context window (default {DEFAULT_CONTEXT_WINDOW})",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_whole,
        default=DEFAULT_MAX_TOKENS,
        help=f"every model's output limit (default {DEFAULT_MAX_TOKENS})",
    )
    parser.add_argument(
        "--settings",
        metavar="settings.json",
        default=None,
        help="the user's Pi settings file, used as the scenario's global settings",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="do not replay the scenario to check it reproduces the session",
    )
    parser.set_defaults(func=main)


def _settings(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--settings {path}: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"--settings {path}: not JSON: {error}") from None
    except RecursionError:  # json's C decoder recurses per level
        raise UsageError(f"--settings {path}: not JSON: nested too deeply to read") from None
    if not isinstance(value, dict):
        raise UsageError(f"--settings {path}: a settings file is a JSON object")
    # Python's json reads NaN, Infinity and 1e400 (as inf), which Pi's JSON.parse does not: named
    # here, in this file, not later as a field of the "(imported scenario)" of the session file.
    problem = json_data_problem(value)
    if problem is not None:
        where, reason = problem
        raise UsageError(f"--settings {path}: {field_path(where) or '(top level)'}: {reason}")
    return value


Shape = list[tuple[Any, ...]]

#: How many compactions in a row the replay check tries the other way without the first
#: difference moving before it stops (:func:`checked_import`).
MAX_FRUITLESS_FLIPS = 8


def _replayed_shape(scenario: Scenario) -> tuple[Shape, str | None]:
    """The session shape of the scenario replayed with the null implementation (a temporary run),
    and what stopped the replay when its budget ran out (``the budget of 50,000 host operations
    ... ran out at ...``), else None."""
    with owned_temporary_directory("pi-continuity-import-check-") as tmp:
        result = simulate(scenario, workdir=Path(tmp) / "run", implementation="null")
        files = result.session_files()
        shape = session_shape(files[0]) if len(files) == 1 else []
    budget = None
    if result.over_budget is not None:
        budget = result.over_budget.split("\n", 1)[0].removeprefix(f"{scenario.name}: ").rstrip(".")
    return shape, budget


def _first_difference(recorded: Shape, replayed: Shape) -> int | None:
    for index, (want, got) in enumerate(zip(recorded, replayed, strict=False)):
        if want != got:
            return index
    return None if len(recorded) == len(replayed) else min(len(recorded), len(replayed))


def checked_import(session: str, **options: Any) -> tuple[Scenario, str]:
    """The scenario whose replay agrees longest with the session, and the check's verdict.

    Each compaction, nearest the first difference first (at or after it, then before it), is
    tried the other way (``flip``: automatic instead of manual or back); a flip is kept when the
    first difference moves on. At most one replay per compaction, plus one; and the search stops
    after :data:`MAX_FRUITLESS_FLIPS` flips in a row that did not move the difference (the
    compactions nearest it were tried first, so the farther ones would not either). Before, every
    compaction was tried: a session of a few hundred compactions whose replay parts early (a
    different ``--settings``) replayed it a few hundred times, each replay as long as the session,
    and the command ran for hours.
    """
    recorded = session_shape(session)
    compactions = [index + 2 for index, item in enumerate(recorded) if item[0] == "compaction"]

    def attempt(flip: frozenset[int]) -> tuple[int | None, Scenario, Shape, str | None]:
        scenario = import_session(session, flip=flip, **options)
        replayed, budget = _replayed_shape(scenario)
        return _first_difference(recorded, replayed), scenario, replayed, budget

    def cut_short(first: int | None, replayed: Shape, budget: str | None) -> bool:
        """The replay ended at its budget before the first difference: no flip moves that."""
        return budget is not None and first is not None and first >= len(replayed)

    flip: frozenset[int] = frozenset()
    first, scenario, replayed, budget = attempt(flip)
    untried = list(compactions)
    fruitless = 0
    while (
        first is not None
        and untried
        and fruitless < MAX_FRUITLESS_FLIPS
        and not cut_short(first, replayed, budget)
    ):
        at = first + 2
        line = min(untried, key=lambda c: (c < at, abs(c - at)))
        untried.remove(line)
        trial = attempt(flip ^ {line})
        if trial[0] is None or trial[0] > first:
            flip ^= {line}
            first, scenario, replayed, budget = trial
            fruitless = 0
        else:
            fruitless += 1
    if first is None:
        return scenario, f"replay check: the simulator reproduces all {len(recorded)} entries"
    if cut_short(first, replayed, budget):
        # Before, this read as the replay parting from the recording ("replayed (no entry)"),
        # blaming --context-window, --max-tokens and --settings, when the simulator had stopped it.
        return scenario, (
            f"replay check: the replay stopped after entry {first} of {len(recorded)} (line {first + 1}): "
            f"{budget}; the scenario is still written whole, and runs further with a larger budget "
            "(simulate --budget-ops N, or budget.operations in the scenario)"
        )
    want = recorded[first][:3] if first < len(recorded) else "(no entry)"
    got = replayed[first][:3] if first < len(replayed) else "(no entry)"
    return scenario, (
        f"replay check: entry {first + 1} (line {first + 2}) differs: recorded {want}, replayed {got}; "
        "the scenario is still written whole, the replay parting from the recording there "
        "(--context-window, --max-tokens and --settings give the recording's host)"
        + (
            f"; {len(untried)} compactions farther from it were not tried the other way"
            if untried and fruitless >= MAX_FRUITLESS_FLIPS
            else ""
        )
    )


def _same_file(session: str, output: Path) -> bool:
    """``--output`` names the session file itself (by any path: a link, ``./``, another case of
    the same directory entry), so writing the scenario would replace the report it came from."""
    try:
        return os.path.samefile(session, output)
    except OSError:  # either is missing (or unreadable): nothing to overwrite
        return False


def main(args: argparse.Namespace) -> int:
    output = Path(args.output) if args.output else None
    if output is not None and _same_file(args.session, output):
        raise UsageError(
            f"--output {args.output}: is the session file {args.session}; the scenario would replace it"
        )
    check_file("--output", output)
    # The settings file is an input too: before, --output at it replaced it with the scenario.
    check_distinct(
        {"--output": output}, inputs=[("--settings", Path(args.settings) if args.settings else None)]
    )
    settings = _settings(args.settings)
    options: dict[str, Any] = {
        "context_window": args.context_window,
        "max_tokens": args.max_tokens,
        "settings": settings,
    }
    try:
        scenario = import_session(args.session, **options)
        verdict = None if args.no_check else checked_import(args.session, **options)
    except ScenarioError as error:  # SessionImportError, or a scenario the file could not make
        raise UsageError(str(error)) from None
    if verdict is not None:
        scenario = verdict[0]
    text = dump_scenario(scenario)
    # A tool path the recording had outside its project is replayed elsewhere (under
    # OUTSIDE_PROJECT), and a prompt image the scenario cannot send is left out: said here too,
    # not only in the description, since it changes the replay.
    moved = [note for note in scenario.description.split("\n") if OUTSIDE_NOTE in note or IMAGE_NOTE in note]
    if output is None:
        sys.stdout.write(text)
        for note in moved:
            print(note, file=sys.stderr)
        if verdict is not None:
            print(verdict[1], file=sys.stderr)
        return 0
    try:
        write_atomically(output, text)
    except OSError as error:
        raise UsageError(f"--output {args.output}: {error.strerror or error}") from None
    replies = len(scenario.model.agent)
    print(f"wrote {output}: {len(scenario.operations)} operations, {replies} model replies ({args.session})")
    for note in moved:
        print(note)
    if verdict is not None:
        print(verdict[1])
    return 0
