"""Fixtures of the release-gate tests: Pi (for its parser and its package manager) and npm."""

from __future__ import annotations

import os
import shutil

import pytest

from pi_continuity_harness.targets.realpi import PiInstallation, PiInstallError, find_installation, install_pi


@pytest.fixture(scope="session")
def pi_installation() -> PiInstallation:
    required = os.environ.get("PI_HARNESS_REQUIRE_REALPI") == "1"
    if shutil.which("npm") is None:
        reason = "realpi: npm is not on PATH (the gate packs and installs with npm)"
        if required:
            pytest.fail(reason)
        pytest.skip(reason)
    if find_installation() is None:
        try:
            return install_pi()
        except PiInstallError as exc:
            if required:
                raise
            pytest.skip(f"realpi: cannot install Node 22 / Pi 1.6.0: {exc}")
    found = find_installation()
    assert found is not None
    return found
