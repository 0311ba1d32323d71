"""Reading YAML fast, with PyYAML's own error messages.

PyYAML's pure-Python loader took 45 % of an exploration's time (issue 16): every scenario
file, every Brief frontmatter the oracle reads. :func:`safe_load` parses with libyaml
(``yaml.CSafeLoader``, the same safe constructors and resolver, about 10x faster) and only
when libyaml refuses a text parses it again with the pure-Python ``yaml.SafeLoader``. So a
valid text loads to the same data, and an invalid one raises the error the pure loader
raises, whose message quotes the offending line with a caret (libyaml's names the line
only) — callers and users see what they saw before. Where libyaml is stricter than the pure
loader, the pure loader's result stands, so nothing the harness accepted is refused now.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["FAST_LOADER", "needs_pure_parser", "safe_load"]

#: The libyaml loader when PyYAML was built with it (the wheels are), else the pure one.
FAST_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_EXOTIC = re.compile(r"[!\t\ufeff]|[|>][-+0-9]*#")


def needs_pure_parser(text: str) -> bool:
    """Whether ``text`` has something libyaml reads differently from PyYAML's pure parser.

    Besides :data:`_EXOTIC`: a ``?`` where a flow collection may be. Inside ``[...]`` or
    ``{...}`` the pure parser ends a plain scalar at a ``?`` (PyYAML's ``scan_plain``) and
    refuses ``[a?b]`` or ``{\\?}``, which libyaml reads as ``['a?b']`` and ``{'\\?': None}``
    (found by the property test below, ``tests/simulator/test_yaml_text.py``)."""
    return _EXOTIC.search(text) is not None or ("?" in text and ("[" in text or "{" in text))


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml (see the module docstring)."""
    if not needs_pure_parser(text):
        try:
            return yaml.load(text, Loader=FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=yaml.SafeLoader)
