"""The report in a real browser: Debian's Chromium, headless, run from the command line.

``--screenshot`` takes the picture (checked not blank with Pillow); ``--dump-dom`` gives the
DOM after the page loaded and a virtual-time budget passed, so a script or an ``onerror`` that
could run has run. No server, no port, no debugging pipe; each Chromium gets a fresh profile
and its own process group, which is killed afterwards whatever happened.

Skipped, with the reason, where Chromium is missing (``apt-get install chromium``);
``PI_HARNESS_REQUIRE_BROWSER=1`` (CI) makes a missing Chromium a failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pi_continuity_harness.report import render_run, write_html
from pi_continuity_harness.report.run_page import render_run as render_run_with_csp

from .conftest import IMG, PAYLOAD
from .html_dom import Dom, parse

pytestmark = pytest.mark.browser

#: The flags this machine's Chromium needs headless as root, with no network to reach
#: (/work/.library/env/machines/python.md: without the background-networking flags Chromium
#: keeps trying Google's hosts).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


@pytest.fixture(scope="module")
def chromium() -> str:
    found = (
        os.environ.get("PI_HARNESS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if found is None:
        reason = "Chromium is not installed (apt-get install chromium)"
        if os.environ.get("PI_HARNESS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PI_HARNESS_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return found


def run_chromium(chromium: str, profile: Path, *args: str) -> str:
    """One headless Chromium with a fresh profile; its whole process group is killed after."""
    process = subprocess.Popen(
        [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group: the zygote and helpers die with it
    )
    try:
        out, _ = process.communicate(timeout=180)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        shutil.rmtree(profile, ignore_errors=True)
    return out


def dump_dom(chromium: str, tmp_path: Path, page: Path) -> Dom:
    profile = tmp_path / f"profile-dom-{page.stem}"
    return parse(run_chromium(chromium, profile, "--virtual-time-budget=3000", "--dump-dom", page.as_uri()))


@pytest.fixture(scope="module")
def small_page(small_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_html(tmp_path_factory.mktemp("page") / "run.html", render_run(small_run["record"]))


def test_the_screenshot_of_a_run_report_is_not_blank(chromium: str, small_page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "run.png"
    run_chromium(chromium, tmp_path / "profile-shot", "--window-size=1280,2400", f"--screenshot={shot}",
                 small_page.as_uri())  # fmt: skip
    assert shot.is_file(), "Chromium wrote no screenshot"
    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1280, 2400)
        colours = rgb.getcolors(maxcolors=1 << 20) or []
        assert len(colours) > 200, f"only {len(colours)} colours: a blank page?"
        low, high = rgb.convert("L").getextrema()
        assert high - low > 150, "no contrast: a blank page?"
        # The context curve is drawn in #0969da: its pixels are there.
        curve = sum(n for n, (r, g, b) in colours if r < 40 and 80 <= g <= 130 and b > 190)
        assert curve > 100, "no pixels of the context curve"


def test_the_dom_has_the_chart_the_threshold_the_compaction_markers_and_a_failing_step(
    chromium: str, small_page: Path, tmp_path: Path
) -> None:
    dom = dump_dom(chromium, tmp_path, small_page)
    found = dom.ids()
    charts = sorted(i for i in found if re.fullmatch(r"s\d+-chart", i))
    assert len(charts) == 3
    assert [t for t, a in dom.elements if a.get("id") in charts] == ["svg"] * 3
    assert any(re.fullmatch(r"s\d+-threshold", i) for i in found), "no threshold line"
    assert any(re.fullmatch(r"s\d+-window", i) for i in found), "no window line"
    markers = [i for i in found if re.fullmatch(r"s\d+-compaction-\d+-(threshold|overflow|manual)-\w+", i)]
    assert any(m.endswith("-committed") for m in markers) and any(m.endswith("-cancelled") for m in markers)
    assert any(re.fullmatch(r"s\d+-abort-\d+", i) for i in found)
    assert any(re.fullmatch(r"s\d+-model-change-\d+", i) for i in found)
    assert [a for a in dom.tags("li") if a.get("data-state") == "failed"], "no failing step"
    assert any(i.endswith("-failing") for i in found)
    assert dom.title.startswith("Pi Continuity Harness")


def test_a_planted_script_never_runs(chromium: str, planted_run: dict[str, Any], tmp_path: Path) -> None:
    """Without the page's Content-Security-Policy, so the escaping alone is what is tested;
    then the page as written, with it."""
    pages = [
        write_html(tmp_path / "planted-no-csp.html", render_run_with_csp(planted_run["record"], csp=None)),
        write_html(tmp_path / "planted.html", render_run(planted_run["record"])),
    ]
    for page in pages:
        dom = dump_dom(chromium, tmp_path, page)
        assert dom.title.startswith("Pi Continuity Harness") and "PWNED" not in dom.title
        assert "pwned" not in dom.ids()
        assert not dom.tags("script") and not dom.tags("img")
        assert '<script>document.title="PWNED"' in dom.text  # shown as text


def test_the_check_sees_a_script_that_does_run(chromium: str, tmp_path: Path) -> None:
    """Control: the same payloads unescaped in a page do run under these flags."""
    for name, payload in (("script", PAYLOAD), ("img", IMG)):
        page = tmp_path / f"control-{name}.html"
        page.write_text(f"<!DOCTYPE html><title>control</title><body>{payload}</body>", encoding="utf-8")
        dom = dump_dom(chromium, tmp_path, page)
        assert dom.title == "PWNED" and "pwned" in dom.ids(), name
