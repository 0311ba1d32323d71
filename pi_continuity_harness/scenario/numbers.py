"""Numbers of a scenario: a YAML or JSON ``true``/``false`` is no number.

Python's ``bool`` is an ``int``, so pydantic's lax mode reads ``seed: true`` as seed 1,
``context_window: true`` as a window of one token and ``occurrence: false`` as 0: a run that
silently does something other than what was written. Every whole number and every number of
seconds a scenario holds is one of these types, which refuse a boolean naming the field
(``s.yaml: models[0].context_window: true is a boolean, not a number``) and otherwise validate
as ``int``/``float`` do (the JSON Schema is unchanged).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

__all__ = ["Float", "Int", "OptionalInt", "not_a_boolean"]


def not_a_boolean(value: Any) -> Any:
    """``value`` unchanged, unless it is ``true``/``false`` (refused: it is no number)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean, not a number")
    return value


#: A whole number of a scenario (``int``, but never a boolean).
Int = Annotated[int, BeforeValidator(not_a_boolean)]
#: A number of a scenario (``float``, but never a boolean).
Float = Annotated[float, BeforeValidator(not_a_boolean)]
#: An optional whole number (``int | None``, never a boolean). Written as one annotated union, not
#: ``Int | None``: pydantic then keeps a field's ``ge``/``le`` as JSON Schema ``minimum``/``maximum``.
OptionalInt = Annotated[int | None, BeforeValidator(not_a_boolean)]
