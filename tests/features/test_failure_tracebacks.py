"""A failed scenario's traceback: Python's own format when nothing prints it, pytest's long
format in the reports that carry it (``_Collector.pytest_configure``).

pytest's long format parses each frame's whole source file to find the failing statement, about
0.1 s per failed scenario (a third of an in-process run of a mutant's scenarios). A run without
a JUnit, Cucumber or Allure report prints no traceback (``-p no:terminal``), so its results
must not depend on the format: the same details, whichever is used.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pi_continuity_harness.features.suite import run_suite

#: Two scenarios the null implementation fails.
KEYWORD = "status and not during and report"


def test_a_failures_details_do_not_depend_on_the_traceback_format(tmp_path: Path) -> None:
    plain = run_suite(target="sim", extension="null", keyword=KEYWORD, workdir=tmp_path / "plain")
    junit = tmp_path / "junit.xml"
    reported = run_suite(
        target="sim", extension="null", keyword=KEYWORD, workdir=tmp_path / "reported", junit=junit
    )
    failed = [(r.name, r.status, r.detail, r.failed_step) for r in plain.results if r.status == "failed"]
    assert failed, "the null implementation fails these scenarios"
    assert failed == [
        (r.name, r.status, r.detail, r.failed_step) for r in reported.results if r.status == "failed"
    ]


def test_a_junit_report_keeps_pytests_long_tracebacks(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    run_suite(target="sim", extension="null", keyword=KEYWORD, workdir=tmp_path / "runs", junit=junit)
    texts = [f.text or "" for f in ET.parse(junit).getroot().iter("failure")]
    assert texts
    for text in texts:
        # The long format quotes the failing statement and marks the error lines with "E ";
        # Python's own format starts with "Traceback (most recent call last):".
        assert "\nE   " in text and "Traceback (most recent call last)" not in text
