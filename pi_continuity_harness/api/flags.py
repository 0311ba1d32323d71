"""``pi.register_flag`` / ``pi.get_flag``: the part both targets share (Pi 1.6,
``dist/core/extensions/loader.js:268-283``, ``:306-311``).

``registerFlag(name, options)`` throws when ``options.default`` is given and its JavaScript
``typeof`` is not ``options.type`` (``Invalid default for flag "<name>": expected <type>, got
<typeof>``, :270-272). The check runs here, in the extension's process: on the simulator
always, on the bridge while the factory runs (its registrations reach Pi only after it
returns, where Pi's Error would fail the whole load), so a Python extension gets
:class:`~pi_continuity_harness.api.PiError` at its call, as a TypeScript extension gets the
Error in its factory; after loading the bridge lets Pi's ``registerFlag`` throw.
"""

from __future__ import annotations

from typing import Any, Literal

from pi_continuity_harness.api.events import JsonObject
from pi_continuity_harness.api.extension_api import PiError

__all__ = ["FlagType", "flag_options", "js_typeof"]

#: The option types ``registerFlag`` accepts (types.d.ts:1280-1288).
FlagType = Literal["boolean", "string"]


def js_typeof(value: Any) -> str:
    """JavaScript's ``typeof`` of ``value`` as the bridge's JSON hands it to Pi."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, float)):
        return "number"
    return "object"


def flag_options(
    name: str, flag_type: str, default: Any, description: str | None, *, check: bool = True
) -> JsonObject:
    """Pi's ``options`` object for ``registerFlag`` (a ``None`` is ``undefined``: no key), after
    Pi's check of the default (loader.js:270-272) unless ``check`` is false (the bridge after
    loading, where Pi's own ``registerFlag`` throws and the bridge raises its Error)."""
    if check and default is not None and js_typeof(default) != flag_type:
        raise PiError(f'Invalid default for flag "{name}": expected {flag_type}, got {js_typeof(default)}')
    options: JsonObject = {"type": flag_type}
    if description is not None:
        options["description"] = description
    if default is not None:
        options["default"] = default
    return options
