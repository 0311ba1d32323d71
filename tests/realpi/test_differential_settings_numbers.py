"""Differential: numbers of a settings file as an extension reads them, real Pi 1.6 against the
simulator.

JavaScript has one kind of number, so Pi reads ``4000.0`` in ``settings.json`` as ``4000``
(``JSON.parse``, settings-manager.js:269), and ``pi.getSettings()`` hands a Python extension
(through the bridge's JSON) the integer ``4000``; ``1.5`` stays ``1.5``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_PROBE = """\
def extension(pi):
    def start(event, ctx):
        compaction = pi.get_settings()["compaction"]
        ctx.ui.notify(repr([compaction["reserveTokens"], compaction["ratio"], compaction["list"]]), "info")

    pi.on("session_start", start)
"""


def test_an_integral_number_in_a_settings_file_is_an_integer_to_an_extension(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    spec = python_extension("settings_numbers_probe", _PROBE)
    compaction = {
        "enabled": True,
        "reserveTokens": 4000.0,
        "keepRecentTokens": 100,
        "ratio": 1.5,
        "list": [2.0, 3],
    }
    sc = scenario({"agent": [{"text": "one"}]}, settings={"project": {"compaction": compaction}})
    real, sim = play(targets, sc, [{"prompt": "a"}], spec)
    assert real.notifications == [("[4000, 1.5, [2, 3]]", "info")]
    assert_equivalent(real, sim)
