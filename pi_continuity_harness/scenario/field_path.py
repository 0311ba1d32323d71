"""How the harness names a field of a scenario in an error: ``model.agent[0].tool_calls[1]``.

One formatter for every message that points into a scenario (the loader's validation errors,
the confinement checks, the real-Pi target's refusals), so a user reads one notation."""

from __future__ import annotations

__all__ = ["field_path"]


def field_path(loc: tuple[int | str, ...]) -> str:
    """Keys joined with ``.``, list indexes in brackets."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out
