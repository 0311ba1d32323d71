"""Reading YAML fast, with PyYAML's own error messages.

PyYAML's pure-Python loader took 45 % of an exploration's time (issue 16): every scenario
file, every Brief frontmatter the oracle reads. :func:`safe_load` parses with libyaml
(``yaml.CSafeLoader``, the same safe constructors and resolver, about 10x faster) and only
when libyaml refuses a text parses it again with the pure-Python ``yaml.SafeLoader``. So a
valid text loads to the same data, and an invalid one raises the error the pure loader
raises, whose message quotes the offending line with a caret (libyaml's names the line
only) — callers and users see what they saw before. Where libyaml is stricter than the pure
loader, the pure loader's result stands, so nothing the harness accepted is refused now.

YAML aliases share a node, so a few lines can stand for billions of values (``&a [x, x, ...]``,
``&b [*a, *a, ...]``, ...) or for a value that contains itself (``&a [*a]``). Loading is cheap,
but everything that walks the data afterwards (validation, ``json.dumps`` of a file a scenario
places) expands it: a 13-line scenario kept ``simulate`` busy until it was killed (issue 16's
eighth pass). :func:`expansion_problem` measures the data as if every alias were copied, in time
linear in the distinct nodes, so a caller can refuse such a document naming the field.

A mapping that names a key twice is refused (:class:`UniqueKeyLoader`): PyYAML's own
constructors keep the last value without a word, so a scenario with two ``operations:`` lists
ran only the second, and a JSON scenario ``{"seed": 1, "seed": 2}`` ran with seed 2. YAML
requires unique keys and JSON's "names SHOULD be unique" (RFC 8259) leaves such a document
without one meaning, so :func:`safe_load` refuses it, naming the key and both lines, in both
loaders (libyaml keeps its speed: the check is in the constructor they share).

YAML also has values JSON has not: dates (``when: 2024-01-01``), ``!!binary`` bytes, ``!!set``,
keys that are not strings, ``.nan`` and ``.inf``. A scenario is JSON data (its schema is a JSON
Schema, and the harness writes settings and files as JSON): such a value went through
validation into a field of any type (``settings``, a file's ``json``) and ended the run in a
``TypeError`` traceback after the run directory was made. :func:`json_data_problem` finds the
first one, so a caller can refuse the document naming the field. A string UTF-8 cannot encode
(a lone surrogate: ``"\\ud800"`` in a JSON or double-quoted YAML string) is no JSON text either:
it ended a run in a ``UnicodeEncodeError`` when the host wrote the prompt, a file or a reply
(leaving an empty trace behind), and ``--html`` in one when the page was written. A surrogate
*pair* is one character in JSON (``json.dumps`` writes an emoji as ``"\\ud83d\\ude00"``), but
PyYAML's parser reads each half alone (libyaml refuses the text, and the pure parser is used):
the loaders join such a pair into its character (:func:`_joined_pairs`), so only a lone half is
refused.
"""

from __future__ import annotations

import collections.abc
import datetime
import math
import re
from typing import Any

import yaml

from pi_continuity_harness.scenario.identity_memo import identity

__all__ = [
    "FAST_LOADER",
    "MAX_EXPANDED_VALUES",
    "PURE_LOADER",
    "UniqueKeyLoader",
    "expansion_problem",
    "json_data_problem",
    "needs_pure_parser",
    "safe_load",
]

#: The most values a document may stand for with its aliases expanded: far above any scenario
#: the harness writes (a minimised failure, an imported session of thousands of entries) and
#: far below what takes more than a second or two to validate.
MAX_EXPANDED_VALUES = 2_000_000

_MERGE_TAG = "tag:yaml.org,2002:merge"


def _unique_key_mapping(loader: yaml.SafeLoader, node: yaml.Node, deep: bool) -> dict[Any, Any]:
    """``SafeConstructor.construct_mapping``, refusing a key the mapping itself names twice.

    Only the keys written in the mapping count: a key a merge (``<<: *base``) brings in may be
    overridden, as YAML's merge keys mean. The error names the duplicate's line and column (its
    mark) and the first one's line; it has no context line, so the first line of its text (what
    the oracle quotes) is the reason. One pass builds the mapping and checks it (PyYAML's own
    loop, with its error for an unhashable key), so loading costs what it did."""
    if not isinstance(node, yaml.MappingNode):  # PyYAML's error for it
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"expected a mapping node, but found {getattr(node, 'id', 'another node')}",
            node.start_mark,
        )
    merged = any(key_node.tag == _MERGE_TAG for key_node, _ in node.value)
    own = {id(key_node) for key_node, _ in node.value if key_node.tag != _MERGE_TAG} if merged else set()
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    seen: Any = set() if merged else mapping  # the keys the mapping itself named so far
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, collections.abc.Hashable):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
            )
        if not merged or id(key_node) in own:
            if key in seen:
                earlier = next(
                    k
                    for k, _ in node.value
                    if (not merged or id(k) in own) and loader.construct_object(k) == key
                )
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"found duplicate key {key!r} (first on line {earlier.start_mark.line + 1})",
                    key_node.start_mark,
                )
            if merged:
                seen.add(key)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined_pairs(text: str) -> str:
    """``text`` with each surrogate pair joined into the character it escapes, as JSON means a
    pair; a lone surrogate stays (:func:`json_data_problem` names it)."""
    if text.isascii():
        return text
    return _PAIR.sub(lambda pair: pair.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return _joined_pairs(yaml.constructor.SafeConstructor.construct_yaml_str(loader, node))


_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"

#: The longest integer read or written (Python's ``sys.int_info.default_max_str_digits``, 4,300
#: decimal digits, as bits: a number of more bits has more digits than Python converts).
_MAX_INT_BITS = 14_284
_TOO_LONG = "more than the 4,300 digits Python reads and writes as a number"


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """PyYAML's integer, or a YAML error at the number where PyYAML's ``int()`` raises a
    ``ValueError``, which no caller catches as a YAML error (a traceback, exit 1): a decimal
    integer of more than 4,300 digits (``Exceeds the limit (4300 digits) for integer string
    conversion``), or one its resolver reads as an integer that has no digit after the base
    prefix (``0x_``, ``0b_``: the underscores are dropped, ``int('', 16)`` raises)."""
    try:
        return int(yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    except ValueError:
        value = str(node.value)
        problem = (
            f"an integer of {len(value):,} characters: {_TOO_LONG}"
            if any(ch.isdigit() for ch in value.replace("0x", "").replace("0b", ""))
            else f"{value!r} reads as an integer but has no digit after its prefix"
        )
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, refusing duplicate keys (:func:`_unique_key_mapping`)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        return _unique_key_mapping(self, node, deep)


class _FastUniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's safe loader (``CSafeLoader``: its parser, PyYAML's Python constructors),
    refusing duplicate keys the same way: the check is in the constructor both loaders share,
    so the fast path keeps libyaml's speed."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        return _unique_key_mapping(self, node, deep)


for _loader in (UniqueKeyLoader, _FastUniqueKeyLoader):
    _loader.add_constructor(_STR_TAG, _construct_str)
    _loader.add_constructor(_INT_TAG, _construct_int)

#: The pure-Python loader :func:`safe_load` falls back to (duplicate keys refused).
PURE_LOADER: type[yaml.SafeLoader] = UniqueKeyLoader

#: The libyaml loader when PyYAML was built with it (the wheels are), else the pure one; both
#: refuse duplicate keys.
FAST_LOADER: type[yaml.SafeLoader] = _FastUniqueKeyLoader


_EXOTIC = re.compile(r"[!\t\ufeff]|[|>][-+0-9]*#")


def needs_pure_parser(text: str) -> bool:
    """Whether ``text`` has something libyaml reads differently from PyYAML's pure parser.

    Besides :data:`_EXOTIC`: a ``?`` where a flow collection may be. Inside ``[...]`` or
    ``{...}`` the pure parser ends a plain scalar at a ``?`` (PyYAML's ``scan_plain``) and
    refuses ``[a?b]`` or ``{\\?}``, which libyaml reads as ``['a?b']`` and ``{'\\?': None}``
    (found by the property test below, ``tests/simulator/test_yaml_text.py``)."""
    return _EXOTIC.search(text) is not None or ("?" in text and ("[" in text or "{" in text))


#: One line of a flat mapping :func:`_flat_mapping` reads itself: a key of ASCII letters and
#: digits starting with a letter, then a double-quoted string of printable ASCII without ``"``
#: or ``\\`` (each character stands for itself there), a decimal integer or a positional
#: decimal fraction without leading zeros or ``_`` (what YAML 1.1's ``int`` and ``float``
#: resolvers read as such), ``null``, ``true`` or ``false``.
_FLAT_LINE = re.compile(
    r'([A-Za-z][A-Za-z0-9]*): (?:"([ !#-\[\]-~]*)"|(-?(?:0|[1-9][0-9]{0,17}))'
    r"|(-?(?:0|[1-9][0-9]{0,17})\.[0-9]{1,17})|(null|true|false))"
)
#: Keys of :data:`_FLAT_LINE`'s form that YAML 1.1 reads as a bool or null (compared lowercase).
_NOT_STRING_KEYS = frozenset({"yes", "no", "true", "false", "on", "off", "null"})
_FLAT_CONSTANTS: dict[str, Any] = {"null": None, "true": True, "false": False}


def _flat_mapping(text: str) -> dict[str, Any] | None:
    """The mapping of ``text`` when every line of it is a ``key: scalar`` line of
    :data:`_FLAT_LINE`'s form, each key once (what both loaders read such a text as); None for
    any other text, which the loaders read.

    A Brief's frontmatter is such a text (``reference/psc/frontmatter.py``: ``serialize_brief``
    writes one ``key: scalar`` line per field, its strings JSON-quoted). The oracle reads every
    Brief of a scenario, each new text once (``features/oracle.py``), and libyaml with PyYAML's
    constructors took about 0.2 ms for each: most of the YAML a suite run's first pass reads
    (issue 16), where this takes a tenth of it."""
    data: dict[str, Any] = {}
    for line in text.split("\n"):
        match = _FLAT_LINE.fullmatch(line)
        if match is None:
            return None
        key, string, integer, fraction, constant = match.groups()
        if key in data or key.lower() in _NOT_STRING_KEYS:
            return None
        if string is not None:
            data[key] = string
        elif integer is not None:
            data[key] = int(integer)
        elif fraction is not None:
            # SafeConstructor.construct_yaml_float: the sign apart, then float() of the rest.
            data[key] = -float(fraction[1:]) if fraction[0] == "-" else float(fraction)
        else:
            data[key] = _FLAT_CONSTANTS[constant]
    return data


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml, refusing duplicate keys (see the module
    docstring); a flat mapping of plain scalars is read without them (:func:`_flat_mapping`)."""
    flat = _flat_mapping(text)
    if flat is not None:
        return flat
    if not needs_pure_parser(text):
        try:
            return yaml.load(text, Loader=FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=PURE_LOADER)


class _RefusedError(Exception):
    def __init__(self, path: tuple[Any, ...], reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def expansion_problem(data: Any, limit: int = MAX_EXPANDED_VALUES) -> tuple[tuple[Any, ...], str] | None:
    """``(where, reason)`` when ``data`` (as :func:`safe_load` gives it) contains itself through
    an alias or stands for more than ``limit`` values with its aliases expanded (``where``: the
    keys and indexes of the value that does); None otherwise. Each distinct list or mapping is
    measured once (its size is remembered by identity), so a document of a few lines that
    stands for billions is refused at once."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any, path: tuple[Any, ...]) -> int:
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            return 1
        key = identity(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in open_nodes:
            raise _RefusedError(path, "the value contains itself (a YAML alias of an enclosing node)")
        open_nodes.add(key)
        total = 1
        for name, child in items:
            total += size(child, (*path, name))
            if total > limit:
                raise _RefusedError(
                    (*path, name),
                    f"stands for more than {limit:,} values once its YAML aliases are expanded",
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    try:
        size(data, ())
    except _RefusedError as refused:
        return refused.path, refused.reason
    except RecursionError:
        return (), "nested too deeply"
    return None


def _not_json(value: Any) -> str | None:
    """Why the scalar ``value`` is not JSON data, or None when it is (a string, a finite
    number, a bool, null; lists and mappings are walked by :func:`json_data_problem`)."""
    if isinstance(value, str):
        return _not_utf8(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        # A YAML hexadecimal, octal or binary integer is read past Python's limit on decimal
        # digits (4,300), and writing it as JSON (a settings file, the trace) then raised
        # ``ValueError: Exceeds the limit`` in the middle of the run.
        if value.bit_length() > _MAX_INT_BITS:
            return f"an integer of {value.bit_length():,} bits: {_TOO_LONG}"
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        name = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        # Python's json writes it, but JSON has no such number: Pi's JSON.parse refuses the
        # file the simulator (Python's json reads it) would accept, so the targets would part.
        return f"{name} is not JSON data (a JSON file holding it is refused by Pi's JSON.parse)"
    if isinstance(value, datetime.date):  # datetime.datetime too
        return f"a YAML timestamp ({value.isoformat()}) is not JSON data: quote it to keep it as text"
    if isinstance(value, bytes):
        return "binary data (!!binary) is not JSON data: write it as a string"
    if isinstance(value, set | frozenset):
        return "a set (!!set) is not JSON data: write it as a list"
    return f"a value of type {type(value).__name__} is not JSON data"


def _not_utf8(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate, where), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"the text has a lone surrogate (U+{ord(text[error.start]):04X}) at character"
            f" {error.start + 1}, which UTF-8 cannot encode"
        )
    return None


def _is_json_data(data: Any) -> bool:
    """Whether :func:`json_data_problem` finds nothing in ``data``: the same values (each
    distinct list, tuple or mapping once, every key, every scalar) and the same tests, without
    the path of each."""
    seen: set[int] = set()
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list | tuple):
            key = identity(node)
            if key in seen:
                continue
            seen.add(key)
            if isinstance(node, dict):
                for name in node:
                    if not isinstance(name, str) or _not_utf8(name) is not None:
                        return False
                stack.extend(child for _, child in node.items())
            else:
                stack.extend(node)
        elif type(node) is str:
            if not node.isascii() and _not_utf8(node) is not None:
                return False
        elif _not_json(node) is not None:
            return False
    return True


def json_data_problem(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """``(where, reason)`` for the first value in ``data`` that is not JSON data (see the module
    docstring: a string UTF-8 cannot encode is not; ``where``: the keys and indexes of the value,
    or of the mapping whose key is not a usable string), or None when all of it is. Lists (and
    tuples, which Python callers build) and mappings with string keys are walked without
    recursion, each distinct one once (an alias repeats a node; a value that contains itself
    ends the walk, not the stack).

    The data is walked first without the keys and indexes (:func:`_is_json_data`), and walked
    again with them only when something in it is not JSON data: a generated blitz scenario
    holds thousands of values, and making the path of each was most of this check, 1.3 % of a
    blitz exploration (issue 16)."""
    return None if _is_json_data(data) else _first_problem(data)


def _first_problem(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """:func:`json_data_problem`'s walk, with the path of every value."""
    seen: set[int] = set()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict | list | tuple):
            if identity(node) in seen:
                continue
            seen.add(identity(node))
            if isinstance(node, dict):
                for key in node:
                    if not isinstance(key, str):
                        return path, (
                            f"the key {key!r} is not a string (YAML reads it as {type(key).__name__}):"
                            " JSON keys are strings, quote it"
                        )
                    reason = _not_utf8(key)
                    if reason is not None:
                        return path, f"the key {key!r}: {reason}"
                items: Any = node.items()
            else:
                items = enumerate(node)
            stack.extend((child, (*path, name)) for name, child in reversed(list(items)))
            continue
        reason = _not_json(node)
        if reason is not None:
            return path, reason
    return None
