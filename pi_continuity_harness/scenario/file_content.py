"""A file's content as a scenario gives it: ``text``, ``json`` or ``base64`` (exact bytes), one of them.

Shared by the files a scenario plants before the run (``files:``, :class:`~.document.FileSpec`)
and the ``edit_file`` operation (:class:`~.operations.EditFileSpec`), so both check and decode
the same way: a second content field is refused naming the field (which of them would the file
hold?), and ``base64`` decodes strictly (``validate=True``: a character outside the alphabet or
a bad padding is refused, not skipped, so the bytes written are the bytes meant).

``json: null`` is content, a file holding the JSON ``null``, not "no json": ``json`` takes any
JSON value, and ``null`` is one an extension reading its config must meet (``JSON.parse`` gives
it without error; the references refuse a config that is not an object). A spec tells it from
``json`` not given by ``model_fields_set`` (its ``json_given``), and validates it through
:data:`GIVEN_NULL` so every check sees it as given.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

__all__ = [
    "BASE64_DESCRIPTION",
    "GIVEN_NULL",
    "JSON_DESCRIPTION",
    "JsonGiven",
    "check_base64",
    "content_refused",
    "decode_base64",
    "mark_given_null",
    "refuse_second_content",
    "settle_given_null",
]

#: The schema's description of a ``base64`` field, the same wherever a file is written.
BASE64_DESCRIPTION = (
    "the file's exact bytes, standard base64 (A-Z a-z 0-9 + /, padded with =, no whitespace), "
    "instead of text or json: a file that need not be UTF-8"
)


#: The schema's description of a ``json`` field, the same wherever a file is written.
JSON_DESCRIPTION = (
    "the file's content as JSON, any JSON value (null too: the file holds null), written indented"
)


class _GivenNull:
    """A ``json: null`` that was given, while a spec's fields are validated (:data:`GIVEN_NULL`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "GIVEN_NULL"


#: Stands for a given ``json: null`` while a spec's fields are validated, so the fields checked
#: after ``json`` (``base64``, ``directory``) see it as given: ``None`` there means "not given",
#: pydantic's ``ValidationInfo.data`` holding defaults too. :func:`settle_given_null` puts the
#: ``None`` back once every field is valid, so no spec ever holds it.
GIVEN_NULL: Any = _GivenNull()


def mark_given_null(value: Any) -> Any:
    """A ``json`` field's input with a given ``null`` marked (a ``mode="before"`` validator:
    pydantic runs it only for a field that was given, never for the default)."""
    return GIVEN_NULL if value is None else value


def settle_given_null(spec: BaseModel) -> None:
    """Put the JSON ``null`` back where :data:`GIVEN_NULL` stood (a model ``after`` validator's
    first step: the spec is frozen, so its ``__dict__`` is written directly, once, before anyone
    can read it). ``"json_value" in spec.model_fields_set`` then tells a given ``null`` from
    none given."""
    if spec.__dict__.get("json_value") is GIVEN_NULL:
        spec.__dict__["json_value"] = None


class JsonGiven(BaseModel):
    """A file's content spec whose ``json`` may be given as ``null`` (``FileSpec`` of ``files:``,
    ``EditFileSpec`` of ``edit_file``): :attr:`json_given` tells it from ``json`` left out, and
    two specs are equal only when they agree on it."""

    @property
    def json_given(self) -> bool:
        """``json`` was given, ``null`` too (then ``json_value`` is ``None``, as when not)."""
        return "json_value" in self.model_fields_set

    def __eq__(self, other: object) -> bool:
        """Equal fields and ``json`` given alike: ``json: null`` (a file holding ``null``) is not
        ``json`` left out, though both hold ``None`` (pydantic compares no ``model_fields_set``)."""
        return (
            super().__eq__(other) is True
            and isinstance(other, JsonGiven)
            and self.json_given == other.json_given
        )

    def __hash__(self) -> int:
        """The fields' hash, as pydantic's for a frozen model, and ``json`` given (see ``__eq__``)."""
        return hash((*(self.__dict__[name] for name in type(self).model_fields), self.json_given))


def content_refused(data: Mapping[str, Any], earlier: Iterable[str]) -> bool:
    """Whether a content field validated before this one was refused (missing from ``data``,
    pydantic's ``ValidationInfo.data``): its error names the mistake already, so a later field
    adds no second line about the same content (``text`` and ``json`` with a link, say)."""
    return any(key not in data for key in earlier)


def refuse_second_content(field: str, data: Mapping[str, Any], earlier: Mapping[str, str]) -> None:
    """Refuse ``field`` (``ValueError``) when a content field validated before it was given too.

    ``earlier`` maps each such field's scenario name to its attribute (``{"json": "json_value"}``);
    ``data`` is pydantic's ``ValidationInfo.data``, the fields validated so far. A field that is
    absent or ``null`` gives nothing (a given ``json: null`` is :data:`GIVEN_NULL` there, so it
    gives content). A field missing from ``data`` failed its own validation (``text`` and
    ``json`` together, say): that error names the mistake already, so nothing is refused here,
    and three content fields get one error line, not two."""
    if content_refused(data, earlier.values()):
        return
    given = [name for name, key in earlier.items() if data.get(key) is not None]
    if given:
        raise ValueError(f"{field} and {given[0]} both give the file's content: give one")


def check_base64(value: str) -> str:
    """``value`` when it is strict standard base64, else ``ValueError`` saying why."""
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(
            f"not valid base64 ({error}); standard alphabet A-Z a-z 0-9 + /, padded with =, no whitespace"
        ) from None
    return value


def decode_base64(value: str | None) -> bytes | None:
    """The exact bytes a checked ``base64`` field gives (None: the field was not given)."""
    return None if value is None else base64.b64decode(value, validate=True)
