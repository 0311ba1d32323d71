"""The static rules of Pi Session Continuity: checks that read the reference's source.

A static rule of the catalogue (``pi_continuity_harness/rules/psc.yaml``, ``kind: static``) can
only be checked by reading an implementation's source; each names its test here (``check:``).
Every check has a companion that shows it fails on an offending snippet, so none is a check
that cannot fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pi_continuity_harness.reference.psc as psc

PACKAGE_DIR = Path(psc.__file__).parent


def _sources() -> dict[str, str]:
    sources = {path.name: path.read_text(encoding="utf-8") for path in sorted(PACKAGE_DIR.rglob("*.py"))}
    assert len(sources) >= 10, sources.keys()
    return sources


# --------------------------------------------------------------------- P39: CONFIG_DIR_NAME, never ".pi"
_DOT_PI = re.compile(r"""["']\.pi(?:["'/\\])""")


def _dot_pi_literals(source: str) -> list[str]:
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOT_PI.search(repr(node.value))
    ]


def test_rule_P39_no_hard_coded_config_directory() -> None:
    """Spec §6: the implementation must use CONFIG_DIR_NAME; it must not hardcode ``.pi``."""
    hits = {name: found for name, source in _sources().items() if (found := _dot_pi_literals(source))}
    assert hits == {}


def test_the_config_directory_check_would_catch_a_literal() -> None:
    assert _dot_pi_literals('root = os.path.join(cwd, ".pi")')
    assert _dot_pi_literals("path = '.pi/session-continuity.json'")
    assert not _dot_pi_literals('text = "self.pi.get_settings()"')


# --------------------------------------------------------------------- P12: no external mutation
_FORBIDDEN_MODULES = {"subprocess", "socket", "urllib", "http", "requests", "ftplib", "smtplib", "webbrowser"}
_FORBIDDEN_CALLS = {"system", "popen", "spawnl", "spawnv", "execv", "execl", "execvp", "fork", "exec"}


def _external_effects(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in _FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _FORBIDDEN_MODULES:
            found.append(str(node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _FORBIDDEN_CALLS
        ):
            found.append(f"{ast.unparse(node.func)}()")
    return found


def test_rule_P12_no_external_mutation() -> None:
    """Spec §4: no git push, npm publish, repository creation or upload: the package imports no
    process, network or browser module and calls no exec/spawn/system (nor Pi's ``pi.exec``)."""
    hits = {name: found for name, source in _sources().items() if (found := _external_effects(source))}
    assert hits == {}


def test_the_external_mutation_check_would_catch_a_spawn() -> None:
    assert _external_effects("import subprocess\nsubprocess.run(['git', 'push'])")
    assert _external_effects("from urllib.request import urlopen")
    assert _external_effects("os.system('npm publish')")
    assert _external_effects("pi.exec('git', ['push'])")
    assert not _external_effects("import os\nos.replace(a, b)")


# --------------------------------------------------------------------- P86: no delivery acknowledgement
_DELIVERY_WORDS = re.compile(r"\b(deliver(?:ed|y)|acknowledg\w*|received by the model)\b", re.I)


def _docstring_ids(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _acknowledgements(source: str) -> list[str]:
    """Uses of ``send_user_message``'s result, and text (not a docstring or comment) that claims
    delivery."""
    tree = ast.parse(source)
    docstrings = _docstring_ids(tree)
    bare_calls = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    }
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "send_user_message"
            and id(node) not in bare_calls
        ):
            found.append(f"the result of {ast.unparse(node)} is used")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _DELIVERY_WORDS.search(node.value)
        ):
            found.append(f"text claims delivery: {node.value[:80]!r}")
    return found


def test_rule_P86_send_user_message_is_never_a_delivery_acknowledgement() -> None:
    """Spec §10, §18: ``sendUserMessage()`` returns nothing to wait for: its result is never used
    and no text of the package says the continuation was delivered or acknowledged."""
    hits = {name: found for name, source in _sources().items() if (found := _acknowledgements(source))}
    assert hits == {}


def test_the_acknowledgement_check_would_catch_an_await_or_a_claim() -> None:
    assert _acknowledgements("ok = pi.send_user_message(text)")
    assert _acknowledgements("await pi.send_user_message(text)")
    assert _acknowledgements("notify('continuation delivered to the model')")
    assert not _acknowledgements("pi.send_user_message(text, deliver_as='followUp')")


# --------------------------------------------------------------------- P109: no lock file
def _lock_files(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            found += [
                n for n in names if n and n.split(".")[0] in {"fcntl", "msvcrt", "filelock", "portalocker"}
            ]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.search(r"\.lock\b", node.value)
        ):
            found.append(node.value)
    return found


def test_rule_P109_no_on_disk_lock_for_single_flight() -> None:
    """Spec §13: single flight is process-local; no lock file (no ``*.lock`` name, no locking module)."""
    hits = {name: found for name, source in _sources().items() if (found := _lock_files(source))}
    assert hits == {}


def test_the_lock_file_check_would_catch_a_lock() -> None:
    assert _lock_files("import fcntl")
    assert _lock_files("path = os.path.join(d, 'handoff.lock')")
    assert not _lock_files("self._lock = asyncio.Lock()")


# --------------------------------------------------------------------- P87b: short messages
#: The spec's "short": at most three 80-column lines of fixed text. Status and settings output
#: (the multi-line panels) are excepted by the rule.
_SHORT = 240
_EXCEPTED = {
    "invalid_native_settings",
    "settings_read_only",
    "checkpoint_read_only",
    "native_settings_unreadable",
}


def _long_templates(source: str) -> dict[str, int]:
    """Per message function: the length of its fixed text (string literals and f-string parts,
    docstring left out), when above the bound."""
    found = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_") or node.name in _EXCEPTED:
            continue
        body = node.body[1:] if ast.get_docstring(node) else node.body
        length = sum(
            len(part.value)
            for statement in body
            for part in ast.walk(statement)
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
        if length > _SHORT:
            found[node.name] = length
    return found


def test_rule_P87b_user_visible_messages_are_short() -> None:
    """Spec §11: every notification template of ``messages.py`` (the status and settings panels
    excepted) has at most 240 characters of fixed text (paths and reasons are added to it)."""
    assert _long_templates(_sources()["messages.py"]) == {}


def test_the_message_length_check_would_catch_a_long_message() -> None:
    long_text = "x" * (_SHORT + 1)
    assert list(_long_templates(f"def saved(path):\n    return f'{long_text} {{path}}'\n")) == ["saved"]
    assert not _long_templates(
        "def saved(path):\n    '''" + long_text + "'''\n    return f'saved to {path}.'\n"
    )
