"""``pi-continuity-harness schema``: the JSON Schema of scenario files.

Prints it, or writes it to ``--output``. The committed copy lives at
``docs/schema/scenario.schema.json``; a test keeps it equal to this output.
"""

# ``--output`` is checked as every command's file output is (``commands/_paths.check_file``): its
# directory must exist. Before, a missing one was created with its parents (``--output typo/x.json``
# left a ``typo/`` behind) where ``run --json typo/x.json`` refuses with one line, exit 2.

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pi_continuity_harness.commands import SUMMARIES, UsageError
from pi_continuity_harness.commands._paths import check_file
from pi_continuity_harness.scenario.document import scenario_json_schema

__all__ = ["register", "render_scenario_schema"]


def render_scenario_schema() -> str:
    """The exact text of ``docs/schema/scenario.schema.json``."""
    return json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema",
        help=SUMMARIES["schema"],
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument(
        "--output", metavar="PATH", default=None, help="write the schema here instead of printing it"
    )
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    text = render_scenario_schema()
    if args.output is None:
        sys.stdout.write(text)
        return 0
    target = Path(args.output)
    check_file("--output", target)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--output {args.output}: {error.strerror or error}") from None
    print(f"wrote {target}")
    return 0
