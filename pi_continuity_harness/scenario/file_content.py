"""A file's content as a scenario gives it: ``text``, ``json`` or ``base64`` (exact bytes), one of them.

Shared by the files a scenario plants before the run (``files:``, :class:`~.document.FileSpec`)
and the ``edit_file`` operation (:class:`~.operations.EditFileSpec`), so both check and decode
the same way: a second content field is refused naming the field (which of them would the file
hold?), and ``base64`` decodes strictly (``validate=True``: a character outside the alphabet or
a bad padding is refused, not skipped, so the bytes written are the bytes meant).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["BASE64_DESCRIPTION", "check_base64", "content_refused", "decode_base64", "refuse_second_content"]

#: The schema's description of a ``base64`` field, the same wherever a file is written.
BASE64_DESCRIPTION = (
    "the file's exact bytes, standard base64 (A-Z a-z 0-9 + /, padded with =, no whitespace), "
    "instead of text or json: a file that need not be UTF-8"
)


def content_refused(data: Mapping[str, Any], earlier: Iterable[str]) -> bool:
    """Whether a content field validated before this one was refused (missing from ``data``,
    pydantic's ``ValidationInfo.data``): its error names the mistake already, so a later field
    adds no second line about the same content (``text`` and ``json`` with a link, say)."""
    return any(key not in data for key in earlier)


def refuse_second_content(field: str, data: Mapping[str, Any], earlier: Mapping[str, str]) -> None:
    """Refuse ``field`` (``ValueError``) when a content field validated before it was given too.

    ``earlier`` maps each such field's scenario name to its attribute (``{"json": "json_value"}``);
    ``data`` is pydantic's ``ValidationInfo.data``, the fields validated so far. A field that is
    absent or ``null`` gives nothing. A field missing from ``data`` failed its own validation
    (``text`` and ``json`` together, say): that error names the mistake already, so nothing is
    refused here, and three content fields get one error line, not two."""
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
