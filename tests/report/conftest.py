"""Fixtures: a small real run of the suite (one scenario fails), and a copy with HTML planted.

The run is the conformance suite, in this process, against the ``summary_regenerated`` mutant
(a proxy mutant: it patches no module), on three scenarios chosen for what the chart must show:
a committed threshold compaction and a failing step (compaction-summary-is-disk-brief), a
compaction cancelled under a smaller window after a model change, and an abort.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.features.suite import run_suite

MUTANT = "pi_continuity_harness.mutants.catalogue:summary_regenerated"
SMALL = "compactionsummaryisdiskbrief or abortduringsynthesis or compaction_under_settings_invalid"

#: What a hostile Brief or model reply could carry: each would set the title and add #pwned.
PAYLOAD = (
    '<script>document.title="PWNED";'
    'document.body.insertAdjacentHTML("beforeend","<div id=pwned></div>")</script>'
)
IMG = (
    "<img src=x onerror=\"document.title='PWNED';"
    "document.body.insertAdjacentHTML('beforeend','<div id=pwned></div>')\">"
)


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The run's record (``SuiteRun.record()``) and its work directory."""
    workdir = tmp_path_factory.mktemp("small-run")
    run = run_suite(target="sim", extension=MUTANT, keyword=SMALL, workdir=workdir)
    record = run.record()
    statuses = sorted(a["status"] for a in record["assertions"])
    assert statuses == ["failed", "passed", "passed"], [
        (a["name"], a["status"]) for a in record["assertions"]
    ]
    return {"record": record, "workdir": workdir}


def copy_run(small_run: dict[str, Any], into: Path) -> dict[str, Any]:
    """The small run's record, its files copied under ``into`` (to change them freely)."""
    source: Path = small_run["workdir"]
    target = into / "work"
    shutil.copytree(source, target, symlinks=True)
    record = json.loads(json.dumps(small_run["record"]).replace(str(source), str(target)))
    return {"record": record, "workdir": target}


@pytest.fixture
def planted_run(small_run: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The small run with a script and an ``<img onerror>`` planted in a Brief's frontmatter
    and body, a notification, the failure (its message and whole detail), a step's text and a
    trace record."""
    run = copy_run(small_run, tmp_path)
    record = run["record"]
    failing = next(a for a in record["assertions"] if a["status"] == "failed")
    scenario_dir = Path(failing["observed"]["workdir"])
    brief = scenario_dir / "project" / ".pi" / "session-continuity" / "planted" / "archive" / "planted.md"
    brief.parent.mkdir(parents=True)
    brief.write_text(
        "---\n"
        f'kind: "pi-session-continuity/v2"\nproduct: {json.dumps(PAYLOAD)}\nnote: {json.dumps(IMG)}\n'
        "---\n"
        f"# Continuity Brief\n\n## Task\n\n{PAYLOAD}\n\n{IMG}\n\n"
        "[a link](javascript:document.title='PWNED')\n\n![an image](http://127.0.0.1:9/x.png)\n",
        encoding="utf-8",
    )
    failing["observed"]["artifacts"].append(str(brief))
    failing["observed"]["notifications"].append({"message": f"planted {PAYLOAD} {IMG}", "type": "warning"})
    failing["detail"] = f"failing step: planted\nobserved: planted {PAYLOAD}"
    failing["failed_step"]["message"] = f"planted {PAYLOAD}"
    failing["steps"][0]["name"] += IMG
    trace = scenario_dir / "trace.jsonl"
    lines = trace.read_text(encoding="utf-8").splitlines()
    lines.insert(3, json.dumps({"seq": 3, "t": 0, "kind": "model", "name": "reply", "text": PAYLOAD + IMG}))
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {**run, "brief": brief}
