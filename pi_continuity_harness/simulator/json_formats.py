"""The ``format`` checks pi-ai validates a tool's arguments with (pi-schema's ``formats``).

pi-ai compiles every tool schema with ``formats`` (``dist/utils/validation.js:12``:
``compile(schema, { formats, coerce: true, ... })``), so a string under ``"format": "date"``
that is no date is refused with ``expected format date`` (``explain.js`` walkString). The checks
are TypeBox 1.3.27's (MIT), as ``@earendil-works/pi-schema`` ``dist/formats/typebox/*.js`` ship
them; the regular expressions below are those files' literals, generated from them, each ``$``
(the end of the string in JavaScript) written ``\\Z`` (Python's ``$`` also matches before a final
newline). None is compiled with the ``u`` flag, so ``\\d`` is ASCII and ``i`` folds ASCII only:
``re.ASCII`` (and ``re.IGNORECASE`` for ``i``).

Ported: ``date``, ``date-time``, ``time``, ``duration``, ``email``, ``ipv4``, ``ipv6``,
``json-pointer``, ``json-pointer-uri-fragment``, ``relative-json-pointer``, ``uri``,
``uri-reference``, ``uri-template``, ``uuid``. Not ported (left unchecked, where Pi checks them):
``hostname`` and ``idn-hostname`` (an IDNA implementation), ``idn-email`` (Unicode property
classes), ``iri``, ``iri-reference`` and ``url`` (WHATWG ``URL.canParse``) and ``regex``
(``new RegExp`` of the value). ``tests/realpi/test_json_formats_match_node.py`` runs pi-schema's
own checks in Node on the same strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["FORMATS", "format_check"]

_CASE = re.ASCII
_I = re.ASCII | re.IGNORECASE


class _Lazy:
    """A regular expression compiled at its first use: the two URI expressions are 2 and 3 KB,
    and compiling all thirteen when the module loads cost every simulator process 60 ms."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: re.RegexFlag) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def match(self, value: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled.match(value)


# The literals of dist/formats/typebox/*.js (generated; do not edit by hand).
#: ``date.js``: ``/^(\d\d\d\d)-(\d\d)-(\d\d)$/``.
_DATE = _Lazy(
    "^(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)\\Z",
    _CASE,
)
#: ``time.js``: ``/^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:([Zz]).../``.
_TIME = _Lazy(
    "^(\\d\\d):(\\d\\d):(\\d\\d)(?:\\.\\d+)?(?:([Zz])|([+-])(\\d\\d):(\\d\\d))?\\Z",
    _CASE,
)
#: ``duration.js``: ``/^P((\d+Y(\d+M(\d+D)?)?|\d+M(\d+D)?|\d+D).../``.
_DURATION = _Lazy(
    "^P((\\d+Y(\\d+M(\\d+D)?)?|\\d+M(\\d+D)?|\\d+D)(T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S))?|T(\\d+H(\\"
    "d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S)|\\d+W)\\Z",
    _CASE,
)
#: ``email.js``: ``/^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-.../i``.
_EMAIL = _Lazy(
    "^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\"(?:[^\"\\\\]|\\\\[\\x20-\\x7"
    'e])*")@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|'
    "\\[(?:IPv6:[a-f0-9:]+|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\\.(?:25[0-5]|2[0-4][0"
    "-9]|1[0-9]{2}|[1-9]?[0-9])){3})\\])\\Z",
    _I,
)
#: ``ipv4.js``: ``/^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.../``.
_IPV4 = _Lazy(
    "^(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\Z",
    _CASE,
)
#: ``ipv6.js``: ``/^(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-.../i``.
_IPV6 = _Lazy(
    "^(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:"
    "){4}|(?:(?:[0-9a-f]{1,4}:)?[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,"
    "2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-"
    "f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:"
    "25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[0-9a-f]{"
    "1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)\\Z",
    _I,
)
#: ``json_pointer.js``: ``/^(?:\/(?:[^~/]|~0|~1)*)*$/``.
_JSON_POINTER = _Lazy(
    "^(?:\\/(?:[^~/]|~0|~1)*)*\\Z",
    _CASE,
)
#: ``json_pointer_uri_fragment.js``: ``/^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-.../i``.
_JSON_POINTER_URI_FRAGMENT = _Lazy(
    "^#(?:\\/(?:[a-z0-9_\\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*\\Z",
    _I,
)
#: ``relative_json_pointer.js``: ``/^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|.../``.
_RELATIVE_JSON_POINTER = _Lazy(
    "^(?:0|[1-9][0-9]*)(?:#|(?:\\/(?:[^~/]|~0|~1)*)*)\\Z",
    _CASE,
)
#: ``uri.js``: ``/^[a-z][a-z0-9+\-.]*:(?:\/\/(?:(?:[-a-z0-.../i``.
_URI = _Lazy(
    "^[a-z][a-z0-9+\\-.]*:(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:["
    "\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}("
    "?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:"
    "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f]{1"
    ",4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]"
    "?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,1}[\\da-f]{1,4})?::(?"
    ":[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3"
    "}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,2}[\\da-f]{1,4})?::(?:[\\da-f]{"
    "1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-"
    "5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\da-f]{1,4})?::[\\da-f]{1,4}:(?:[\\da"
    "-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\"
    "d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:2"
    "5[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,"
    "4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}:){0,6}[\\da-f]{1,4})?::)|v[0-9a-f]"
    "+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0"
    "-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0-9."
    "_~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:"
    "[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?"
    ":\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\\?(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-"
    "9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?\\Z",
    _I,
)
#: ``uri_reference.js``: ``/^(?:[a-z][a-z0-9+\-.]*:(?:\/\/(?:(?:[-a-.../i``.
_URI_REFERENCE = _Lazy(
    "^(?:[a-z][a-z0-9+\\-.]*:(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:("
    "?:[\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){"
    "3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|"
    "(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f"
    "]{1,4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1"
    "-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,1}[\\da-f]{1,4})?:"
    ":(?:[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\."
    "){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,2}[\\da-f]{1,4})?::(?:[\\da-"
    "f]{1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25"
    "[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\da-f]{1,4})?::[\\da-f]{1,4}:(?:["
    "\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1"
    "\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:("
    "?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]"
    "{1,4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}:){0,6}[\\da-f]{1,4})?::)|v[0-9a"
    "-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|"
    "2[0-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0"
    "-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/"
    "(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})"
    "+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:"
    "]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:[\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-"
    "5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){"
    "5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-"
    "4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|"
    "(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\d"
    "a-f]{1,4}:){0,1}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25["
    "0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}"
    ":){0,2}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-"
    "4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\"
    "da-f]{1,4})?::[\\da-f]{1,4}:(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]"
    "?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?"
    ":[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d"
    "|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}"
    ":){0,6}[\\da-f]{1,4})?::)|v[0-9a-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1"
    "\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-"
    "f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&"
    "'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9"
    "._~!$&'()*+,;=@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?)(?:\\?("
    "?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]"
    "{2})*)?\\Z",
    _I,
)
#: ``uri_template.js``: ``/^(?:(?:[^\x00-\x20"<>%\\^`{|}\x7f]|%[0-9.../i``.
_URI_TEMPLATE = _Lazy(
    '^(?:(?:[^\\x00-\\x20"<>%\\\\^`{|}\\x7f]|%[0-9a-f]{2})|\\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2'
    "})+(?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+("
    "?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?)*\\})*\\Z",
    _I,
)
#: ``uuid.js``: ``/^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f].../i``.
_UUID = _Lazy(
    "^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}\\Z",
    _I,
)

#: Days of each month (``date.js``), January at 1.
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date(value: str) -> bool:
    """``IsDate`` (date.js): the form, a month 1-12 and a day within it (29 February in a leap year)."""
    match = _DATE.match(value)
    if not match:
        return False
    year, month, day = (int(group) for group in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(value: str) -> bool:
    """``IsTime`` (time.js, ``strictTimeZone``): a zone required; hours, minutes and seconds in
    range, a leap second only at 23:59:60 UTC."""
    match = _TIME.match(value)
    if not match:
        return False
    hour, minute, second, zulu, sign, zone_hour, zone_minute = match.groups()
    if not zulu and not sign:
        return False
    hr, mn, sec = int(hour), int(minute), int(second)
    if hr > 23 or mn > 59 or sec > 60:
        return False
    if sign and (int(zone_hour) > 23 or int(zone_minute) > 59):
        return False
    if sec < 60:
        return True
    direction = -1 if sign == "-" else 1
    total = hr * 60 + mn - direction * (int(zone_hour or 0) * 60 + int(zone_minute or 0))
    return total % 1440 == 1439


def _is_date_time(value: str) -> bool:
    """``IsDateTime`` (date_time.js): ``value.split(/T/i)`` in exactly two, a date and a time."""
    parts = re.split("[Tt]", value)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


def _matches(pattern: _Lazy) -> Callable[[str], bool]:
    return lambda value: pattern.match(value) is not None


#: Each ported format's check, by name.
FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "date-time": _is_date_time,
    "duration": _matches(_DURATION),
    "email": _matches(_EMAIL),
    "ipv4": _matches(_IPV4),
    "ipv6": _matches(_IPV6),
    "json-pointer": _matches(_JSON_POINTER),
    "json-pointer-uri-fragment": _matches(_JSON_POINTER_URI_FRAGMENT),
    "relative-json-pointer": _matches(_RELATIVE_JSON_POINTER),
    "time": _is_time,
    "uri": _matches(_URI),
    "uri-reference": _matches(_URI_REFERENCE),
    "uri-template": _matches(_URI_TEMPLATE),
    "uuid": _matches(_UUID),
}


def format_check(name: str, value: str) -> bool | None:
    """Whether ``value`` passes pi-schema's check of format ``name``; None for a format not
    ported (or one pi-schema does not know: then it is an annotation, unchecked there too)."""
    check = FORMATS.get(name)
    return None if check is None else check(value)
