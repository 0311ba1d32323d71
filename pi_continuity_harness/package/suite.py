"""The conformance suite through the installed package (spec §20 assertions 2-7 and the smoke suite).

The real-Pi target in package mode (``--extension pkg:npm:<name>@<version>``,
``targets/realpi/pi_target.py``) runs ``pi install`` into every scenario's own agent
directory from the gate's registry (``PI_HARNESS_NPM_REGISTRY``) and lets Pi load the extension
from its settings, so each scenario judges the extension as Pi loaded it from the installed
package, never from ``-e path.ts``. Every scenario becomes one check; a skipped scenario is
``not-run`` with its reason (never a pass).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pi_continuity_harness.features.suite import ScenarioResult, run_suite
from pi_continuity_harness.package.gate import SuiteHook, SuiteOutcome
from pi_continuity_harness.package.model import Check, Status

__all__ = ["DEFAULT_SUITE_TAGS", "suite_hook"]

#: The smoke suite and the §20 install assertions.
DEFAULT_SUITE_TAGS = "smoke or install"
_STATUS: dict[str, Status] = {"passed": "pass", "failed": "fail", "error": "fail", "skipped": "not-run"}


@contextlib.contextmanager
def _registry_env(url: str) -> Iterator[None]:
    saved = os.environ.get("PI_HARNESS_NPM_REGISTRY")
    os.environ["PI_HARNESS_NPM_REGISTRY"] = url
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PI_HARNESS_NPM_REGISTRY", None)
        else:
            os.environ["PI_HARNESS_NPM_REGISTRY"] = saved


def suite_hook(
    *,
    tags: str | None,
    keyword: str | None,
    workdir: Path,
    system: str | None = None,
    on_result: Callable[[ScenarioResult, int, int], None] | None = None,
) -> SuiteHook:
    def run(source: str, registry_url: str) -> SuiteOutcome:
        extension = f"pkg:{source}"
        started = time.monotonic()
        with _registry_env(registry_url):
            suite = run_suite(
                target="pi",
                extension=extension,
                tags=tags,
                keyword=keyword,
                workdir=workdir,
                extra_args=["--system", system] if system else None,
                on_result=on_result,
            )
        checks = [
            Check(
                f"suite:{r.assertion}::{r.name}",
                _STATUS.get(r.status, "fail"),
                r.feature_file,
                r.assertion,
                (r.detail.splitlines() or [r.status])[0] if r.status != "passed" else f"{r.duration_s:.1f} s",
                "suite",
            )
            for r in suite.results
        ]
        if not checks:
            checks.append(Check("suite", "fail", "", str(tags), "the selection ran no scenario", "suite"))
        command = (
            f"pi-continuity-harness run --target pi --extension {extension}"
            + (f" --tags {tags!r}" if tags else "")
            + (f" -k {keyword!r}" if keyword else "")
        )
        return SuiteOutcome(command, checks, suite.to_json(), round(time.monotonic() - started, 2))

    return run
