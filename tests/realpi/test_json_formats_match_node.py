"""``simulator.json_formats`` answers as pi-schema's own ``formats`` do, run in Node 22.

pi-ai validates a tool's arguments with pi-schema's format checks (``dist/utils/validation.js``);
the simulator's port is asked the same strings as ``formats[name](value)`` from the installed
``@earendil-works/pi-schema/dist/formats/index.js``: a corpus of near misses for each format and
strings generated from their alphabets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from realpi.node_json import node_json

from pi_continuity_harness.simulator.json_formats import FORMATS, format_check
from pi_continuity_harness.targets.realpi import PiInstallation

pytestmark = pytest.mark.realpi

_NODE = (
    "const [index] = process.argv.slice(1);"
    "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
    "import(require('url').pathToFileURL(index).href).then(({ formats }) =>"
    " process.stdout.write(JSON.stringify(cases.map(([name, value]) => formats[name](value)))));"
)

_CORPUS = {
    "date": [
        "2024-02-29",
        "2023-02-29",
        "1900-02-29",
        "2000-02-29",
        "2024-13-01",
        "2024-01-01\n",
        "2024-1-01",
        "0000-01-31",
        "2024-04-31",
    ],
    "date-time": [
        "2024-01-01T10:00:00Z",
        "2024-01-01t10:00:00z",
        "2024-01-01T10:00:00",
        "2024-01-01T10:00:00+25:00",
        "2024-01-01T23:59:60Z",
        "2024-01-01T10:00:00.123+02:00",
        "2024-01-01TT10:00:00Z",
    ],
    "time": [
        "23:59:60Z",
        "23:59:60+01:00",
        "00:59:60+01:00",
        "10:00:00",
        "24:00:00Z",
        "10:00:00.5-05:30",
        "10:00:00Z\n",
    ],
    "duration": ["P1D", "PT1H", "P1Y2M3DT4H5M6S", "P1W", "P", "PT", "P1DT", "p1d"],
    "email": [
        "a@b.co",
        "A.B@EXAMPLE.COM",
        "a..b@c.d",
        '"q uoted"@x.y',
        "a@[127.0.0.1]",
        "a@[IPv6:::1]",
        "a@-b.c",
        "a@b",
    ],
    "ipv4": ["127.0.0.1", "256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4\n", "٣.1.1.1"],
    "ipv6": ["::1", "::", "2001:db8::8a2e:370:7334", "::ffff:192.168.0.1", "1::2::3", "FE80::1", "12345::"],
    "json-pointer": ["", "/", "/a~0b", "/a~1b", "/a~2", "a/b", "/é"],
    "json-pointer-uri-fragment": ["#", "#/a", "#/a%20b", "#/a b", "/a", "#/%zz"],
    "relative-json-pointer": ["0", "1#", "0/a", "01", "-1", "2/a~1b"],
    "uri": [
        "https://x.y/p?q#f",
        "mailto:a@b.c",
        "urn:isbn:123",
        "//x.y",
        "x",
        "http://[::1]:80/",
        "http://a b",
        "HTTP://X",
    ],
    "uri-reference": ["//x.y", "/p", "p?q", "#f", "http://x", "a b", "%zz", ""],
    "uri-template": ["http://x/{id}", "{+path}/x", "{a,b}", "{", "x{a:12}", "{a*}"],
    "uuid": [
        "123e4567-e89b-12d3-a456-426614174000",
        "123E4567-E89B-12D3-A456-426614174000",
        "123e4567e89b12d3a456426614174000",
        "123e4567-e89b-12d3-a456-42661417400g",
    ],
}
_ALPHABET = "0123456789aAfFzZTt:-+./#%~@[]{},*?=é \n"


def _node(installation: PiInstallation, cases: list[tuple[str, str]]) -> list[bool]:
    index = Path(installation.pi_package_dir).parent / "pi-schema" / "dist" / "formats" / "index.js"
    assert index.exists(), index
    return list(node_json(installation, _NODE, cases, str(index)))


def test_each_ported_format_answers_its_corpus_as_pi_schema_does(pi_installation: PiInstallation) -> None:
    assert set(_CORPUS) == set(FORMATS)
    cases = [(name, value) for name, values in _CORPUS.items() for value in values]
    expected = _node(pi_installation, cases)
    ours = [format_check(name, value) for name, value in cases]
    assert [(c, e, o) for c, e, o in zip(cases, expected, ours, strict=True) if e != o] == []
    assert any(expected) and not all(expected)


@settings(max_examples=40, deadline=None, phases=[Phase.generate])
@given(st.lists(st.text(alphabet=_ALPHABET, max_size=24), min_size=10, max_size=10))
def test_generated_strings_get_pi_schemas_answer_for_every_format(
    pi_installation: PiInstallation, values: list[str]
) -> None:
    cases = [(name, value) for name in sorted(FORMATS) for value in values]
    expected = _node(pi_installation, cases)
    assert [(c, e) for c, e in zip(cases, expected, strict=True) if format_check(*c) != e] == []
