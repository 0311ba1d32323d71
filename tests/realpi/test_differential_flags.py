"""Differential: ``pi.register_flag`` and ``pi.get_flag`` of a Python extension, real Pi 1.6
against the simulator.

``registerFlag(name, options)`` (types.d.ts:1280, loader.js:268-283) throws when the default's
``typeof`` is not the option's type; else the flag is the extension's and its default becomes
the runtime's value unless the runtime has one, pending while the factory runs (committed when it
returns, :457-467). ``getFlag(name)`` (types.d.ts:1290, :306-311) answers ``undefined`` for a flag
the extension did not register, else the runtime's value or the pending default.

The extension registers flags in its factory (one with a default of the wrong type) and reads
them there, then its ``/flags`` command reads them again, registers one more and one again with
another default. The test asserts real Pi's record explicitly, then the simulator's.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

from pi_continuity_harness.api import PiError


def extension(pi):
    seen = []

    def register(name, **options):
        try:
            pi.register_flag(name, **options)
        except PiError as error:
            seen.append(["PiError", str(error)])

    register("verbose", type="boolean", default=True, description="talk more")
    register("name", type="string")
    register("bad", type="boolean", default="yes")
    register("count", type="string", default=5)
    seen.append(["loading", pi.get_flag("verbose"), pi.get_flag("name"), pi.get_flag("bad"), pi.get_flag("nope")])

    async def flags(args, ctx):
        seen.append(["command", pi.get_flag("verbose"), pi.get_flag("name"), pi.get_flag("bad"), pi.get_flag("nope")])
        register("late", type="string", default="x")
        register("verbose", type="boolean", default=False)
        register("name", type="string", default="set-late")
        register("late-bad", type="string", default=True)
        seen.append(["after", pi.get_flag("late"), pi.get_flag("verbose"), pi.get_flag("name")])
        ctx.ui.notify("flags: " + json.dumps(seen), "info")

    pi.register_command("flags", flags)
"""


def test_register_flag_checks_the_default_and_get_flag_answers_the_runtimes_value(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    python_extension("flags_probe", _EXTENSION)
    sc = scenario({"agent": [{"text": "hello back"}]})
    real, sim = play(targets, sc, [{"command": "/flags"}], "flags_probe:extension")

    expected = [
        ["PiError", 'Invalid default for flag "bad": expected boolean, got string'],
        ["PiError", 'Invalid default for flag "count": expected string, got number'],
        # While the factory runs: the pending default; a flag that failed to register, or one
        # never registered, is undefined.
        ["loading", True, None, None, None],
        ["command", True, None, None, None],
        # A default after loading is the value at once, unless the runtime has one.
        # After loading the bridge leaves the check to Pi's registerFlag: Pi's own message.
        ["PiError", 'Invalid default for flag "late-bad": expected string, got boolean'],
        ["after", "x", True, "set-late"],
    ]
    assert notes(real)["flags"] == expected, json.dumps(notes(real).get("flags"), indent=1)
    assert notes(sim).get("flags") == notes(real)["flags"]
    assert_equivalent(real, sim)
