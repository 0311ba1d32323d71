"""pi-blitz-handoff 2.0.0, reference implementation (the second system under the harness, "blitz
handoff" in the harness's names; "handoff" alone is Pi Session Continuity's Continuity Handoff).

:func:`extension` is the factory (``pi_continuity_harness.reference.blitz:extension``, registered
as ``blitz`` and, for compatibility, ``handoff``); it declares
``extension.pi_continuity_system = "pi-blitz-handoff"`` so the conformance suite runs only the
``pi_blitz_handoff`` features against it. The host is reached only through
:mod:`pi_continuity_harness.api`. Modules: :mod:`.settings`
(schema, normalisation, edits), :mod:`.paths`, :mod:`.templates` (assets, resolver,
project selections), :mod:`.recovery` (capture windows), :mod:`.chain`, :mod:`.state`
(the request and Finish correlation), :mod:`.status` (widget), :mod:`.messages` (texts),
:mod:`.receiver` (delivered-turn tracking across the switch), :mod:`.commands` (``/sh``),
:mod:`.wiring` (the events, tools and command wired to :class:`BlitzHandoff`, and the factory).
The wiring module is not named ``extension``: a submodule of that name was hidden by the
factory the package exports under the same name.
"""

from __future__ import annotations

from pi_continuity_harness.reference.blitz.wiring import BlitzHandoff, extension

__all__ = ["BlitzHandoff", "extension"]
