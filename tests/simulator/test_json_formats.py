"""pi-schema's ``format`` checks as the simulator ports them (``simulator/json_formats.py``).

The answers are Node 22's, pi-schema's own ``formats[name](value)`` (recorded on 6 December 2026;
``tests/realpi/test_json_formats_match_node.py`` asks Node again, on more strings).
"""

from __future__ import annotations

import pytest

from pi_continuity_harness.simulator.json_formats import FORMATS, format_check

NODE_ANSWERS: list[tuple[str, str, bool]] = [
    ("date", "2024-02-29", True),
    ("date", "2023-02-29", False),
    ("date", "1900-02-29", False),
    ("date", "2000-02-29", True),
    ("date-time", "2024-01-01T10:00:00Z", True),
    ("date-time", "2024-01-01t10:00:00z", True),
    ("date-time", "2024-01-01T10:00:00", False),
    ("date-time", "2024-01-01T10:00:00+25:00", False),
    ("time", "23:59:60Z", True),
    ("time", "23:59:60+01:00", False),
    ("time", "00:59:60+01:00", True),
    ("time", "10:00:00", False),
    ("duration", "P1D", True),
    ("duration", "PT1H", True),
    ("duration", "P1Y2M3DT4H5M6S", True),
    ("duration", "P1W", True),
    ("email", "a@b.co", True),
    ("email", "A.B@EXAMPLE.COM", True),
    ("email", "a..b@c.d", False),
    ("email", '"q uoted"@x.y', True),
    ("ipv4", "127.0.0.1", True),
    ("ipv4", "256.0.0.1", False),
    ("ipv4", "01.2.3.4", False),
    ("ipv4", "1.2.3", False),
    ("ipv6", "::1", True),
    ("ipv6", "::", True),
    ("ipv6", "2001:db8::8a2e:370:7334", True),
    ("ipv6", "::ffff:192.168.0.1", True),
    ("json-pointer", "", True),
    ("json-pointer", "/", True),
    ("json-pointer", "/a~0b", True),
    ("json-pointer", "/a~1b", True),
    ("json-pointer-uri-fragment", "#", True),
    ("json-pointer-uri-fragment", "#/a", True),
    ("json-pointer-uri-fragment", "#/a%20b", True),
    ("json-pointer-uri-fragment", "#/a b", False),
    ("relative-json-pointer", "0", True),
    ("relative-json-pointer", "1#", True),
    ("relative-json-pointer", "0/a", True),
    ("relative-json-pointer", "01", False),
    ("uri", "https://x.y/p?q#f", True),
    ("uri", "mailto:a@b.c", True),
    ("uri", "urn:isbn:123", True),
    ("uri", "//x.y", False),
    ("uri-reference", "//x.y", True),
    ("uri-reference", "/p", True),
    ("uri-reference", "p?q", True),
    ("uri-reference", "#f", True),
    ("uri-template", "http://x/{id}", True),
    ("uri-template", "{+path}/x", True),
    ("uri-template", "{a,b}", True),
    ("uri-template", "{", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid", "123E4567-E89B-12D3-A456-426614174000", True),
    ("uuid", "123e4567e89b12d3a456426614174000", False),
    ("uuid", "123e4567-e89b-12d3-a456-42661417400g", False),
]


@pytest.mark.parametrize(("name", "value", "node"), NODE_ANSWERS)
def test_a_format_answers_as_pi_schema_does(name: str, value: str, node: bool) -> None:
    assert format_check(name, value) is node


def test_a_format_not_ported_is_not_checked() -> None:
    assert {name for name, _, _ in NODE_ANSWERS} == set(FORMATS)
    for name in ("hostname", "idn-hostname", "idn-email", "iri", "iri-reference", "url", "regex", "unknown"):
        assert format_check(name, "x y") is None
