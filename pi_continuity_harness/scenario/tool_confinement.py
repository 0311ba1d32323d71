"""Confinement of the model's built-in tools: what a scripted tool call may name.

Nothing a scenario says may touch a file outside its run, and on real Pi the model's ``read``,
``write``, ``edit`` and ``bash`` run for real (Pi 1.6 ``core/tools/path-utils.js`` resolves a
path against the project directory, ``~`` against the home directory). Three checks:

* :func:`tool_call_outside_problem`, at load for both targets (``document.parse_scenario``): a
  literal path outside the project (absolute, ``~``, ``..`` above it), or an ``rm`` command (the
  one the simulator runs) naming one or computing one (``$``, backquotes);
* :func:`real_pi_command_problem`, before real Pi runs a ``bash`` command (the real-Pi target
  at start for the scenario's own calls, its model server for every call it serves): only
  programs that act on the paths they are given (:data:`REAL_PI_PROGRAMS`); the simulator runs
  none but ``rm`` and ``echo``, so it needs no such list;
* :func:`served_call_problem`, for a call the model server is about to send (a path the model
  took from the run with ``{{match:...}}`` is known only then): its paths inside the run.

The simulated host also refuses a tool's file outside the run when the tool runs
(``SimHost._confine_tool``). Found in stop 28 by an audit: a scenario's ``write`` to ``/tmp``,
``edit`` of its own file, ``rm -f`` beside the run and ``read`` of ``/etc/passwd`` all happened.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from pi_continuity_harness.scenario.confine import is_inside
from pi_continuity_harness.scenario.model_script import ScriptedToolCall

__all__ = [
    "REAL_PI_PROGRAMS",
    "command_path_problem",
    "real_pi_command_problem",
    "served_call_problem",
    "tool_call_outside_problem",
    "tool_calls_outside",
    "tool_calls_real_pi_refuses",
]


def tool_calls_outside(
    value: Any, where: tuple[int | str, ...] = ()
) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """``(where, why)`` for every scripted tool call in ``value`` (a scenario, or any part of
    one: models, lists, tuples) that :func:`tool_call_outside_problem` refuses, ``where``
    being the field names and indexes that lead to it."""
    for at, call in _calls(value, where):
        problem = tool_call_outside_problem(call.name, call.arguments)
        if problem is not None:
            yield at, problem


#: Device files a scripted ``bash`` command may name: sources and sinks, no file of the host.
_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr"}
)
#: Where a word may begin in a shell command: after a space, an operator, a quote or ``=``.
_WORD_START = r"(?:^|[\s<>|;&=()'\"{},:])"
_ABSOLUTE_WORD = re.compile(_WORD_START + r"(/[^\s<>|;&()'\"]*)")
_PARENT_WORD = re.compile(r"(?:^|[\s<>|;&=()'\"{},:/])\.\.(?=$|[\s<>|;&()'\"{},/])")
_HOME_WORD = re.compile(_WORD_START + r"~")


def tool_call_outside_problem(name: str, arguments: dict[str, Any]) -> str | None:
    """Why a scripted built-in tool call would touch a file outside the run; None when it stays.

    Nothing a scenario says may touch a file outside its run, and on real Pi the model's
    ``read``/``write``/``edit`` and ``bash`` run for real (Pi 1.6 ``core/tools/path-utils.js``
    resolves a path against the project directory, ``~`` against the home directory). A
    literal path is checked here, at load, for both targets: an absolute path (the run's
    directory is not known when the scenario is written), ``~``, or ``..`` above the project;
    a ``bash`` command also may not compute a path (``$``, backquotes). A path the model takes
    from the run (``{{match:...}}``) is known only then: the simulated host refuses one outside
    the run (``SimHost._confine_tool``)."""
    if name in ("read", "write", "edit"):
        path = arguments.get("path")
        if not isinstance(path, str) or "{{match:" in path:
            return None
        if path.startswith(("/", "~")) or _escapes_project(path):
            return (
                f"the {name} tool's path {path!r} is outside the project: a scripted tool call may name "
                "only a path relative to the project, below it"
            )
        return None
    if name == "bash":
        command = arguments.get("command")
        if isinstance(command, str) and command.split()[:1] == ["rm"]:
            # The one command the simulated host runs (``builtin_tools._bash_rm``); every other
            # is only printed there, and checked before real Pi runs it
            # (:func:`real_pi_command_problem`).
            return command_path_problem(command)
    return None


#: A ``{{match:REGEX}}`` of a scripted call (``model_script``), resolved or not.
_MATCH_TEMPLATE = re.compile(r"\{\{match:.*?\}\}", re.DOTALL)


def command_path_problem(command: str, *, absolute_paths: bool = False) -> str | None:
    """Why the ``bash`` command ``command`` names a path outside the project: an absolute path
    (devices aside; allowed with ``absolute_paths``, for a caller that checks them against the
    run itself), ``..``, ``~``, or one it computes (``$``, backquotes); None when it names none
    (``{{match:...}}`` is known only when the call is made)."""
    text = _MATCH_TEMPLATE.sub("", command)
    absolute = [] if absolute_paths else _absolute_paths(text)
    if absolute:
        reason = f"names {absolute[0]!r}"
    elif _PARENT_WORD.search(text) or _PARENT_WORD.search(_as_shell_reads(text)):
        reason = "goes up with '..'"
    elif _HOME_WORD.search(text):
        reason = "names the home directory ('~')"
    elif "$" in text or "`" in text:
        reason = "computes a path ('$' or '`')"
    else:
        return None
    return (
        f"the bash command {command!r} {reason}: a scripted command may name only paths relative to the "
        "project, below it"
    )


def _absolute_paths(command: str) -> list[str]:
    """The absolute paths ``command`` names, devices aside, read from the words as bash makes
    them (:func:`_as_shell_reads`).

    ``rm -f '/tmp/my runs/x.md'`` names ``/tmp/my runs/x.md``: read at every space, it named
    ``/tmp/my`` (outside the run), and the real-Pi target refused a receiver's ``rm`` of its
    dossier in a run under a directory with a space. ``/tmp/r/.\\./x`` names ``/tmp/r/../x``.
    """
    found = (_restore_whitespace(p) for p in _ABSOLUTE_WORD.findall(_as_shell_reads(command)))
    return [p for p in found if p not in _DEVICES]


#: Stand-ins for whitespace the shell keeps inside a word (quoted or escaped): not whitespace
#: to the path regexes, put back in the paths they find.
_KEPT_WHITESPACE = {" ": "\x00", "\t": "\x01", "\n": "\x02"}
_RESTORE = str.maketrans({kept: char for char, kept in _KEPT_WHITESPACE.items()})
#: What a backslash escapes inside double quotes (bash(1), QUOTING); before any other
#: character it stays.
_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'


def _restore_whitespace(text: str) -> str:
    return text.translate(_RESTORE)


def _as_shell_reads(command: str) -> str:
    """``command`` after bash's quote removal (bash(1), QUOTING), with the whitespace a word
    keeps replaced by stand-ins (:data:`_KEPT_WHITESPACE`) and the operators left as they are:
    single quotes keep everything up to the next one; a backslash outside quotes keeps the next
    character (and joins lines); in double quotes it escapes only ``$`` ````` ``"`` ``\\`` and a
    newline."""
    out: list[str] = []
    quote = ""
    escaped = False
    for char in command:
        if escaped:
            escaped = False
            if quote == '"' and char not in _DOUBLE_QUOTE_ESCAPES:
                out.append("\\")
            if char != "\n":
                out.append(_KEPT_WHITESPACE.get(char, char))
        elif quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(_KEPT_WHITESPACE.get(char, char))
        elif char == "\\":
            escaped = True
        elif char == quote:
            quote = ""
        elif not quote and char in "'\"":
            quote = char
        else:
            out.append(_KEPT_WHITESPACE.get(char, char) if quote else char)
    if escaped:
        out.append("\\")
    return "".join(out)


def _escapes_project(path: str) -> bool:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if not parts:
                return True
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return False


#: The programs a scripted ``bash`` command may run on real Pi: each acts only on the paths it
#: is given (checked above) or on none. Shells, interpreters and programs that run others
#: (``sh``, ``python``, ``env``, ``xargs``, ``find -exec``, ``sed``'s ``e``, ``awk``'s
#: ``system``, ``git`` hooks) are not in it: a scenario is shared data, and one of those would
#: run whatever it says on the machine that replays it.
REAL_PI_PROGRAMS = frozenset(
    {
        "basename",
        "cat",
        "cd",
        "cp",
        "cut",
        "date",
        "diff",
        "dirname",
        "echo",
        "false",
        "grep",
        "head",
        "ls",
        "mkdir",
        "mv",
        "printf",
        "pwd",
        "rm",
        "rmdir",
        "seq",
        "sleep",
        "sort",
        "tail",
        "tee",
        "touch",
        "tr",
        "true",
        "uniq",
        "wc",
    }
)
_SEGMENT = re.compile(r"\|\||&&|[|;&\n()]")


def real_pi_command_problem(command: str, *, absolute_paths: bool = False) -> str | None:
    """Why real Pi must not run the scripted ``bash`` command ``command`` (None: it may): a path
    outside the project (:func:`command_path_problem`, ``absolute_paths`` as there), or a
    program that is not in :data:`REAL_PI_PROGRAMS`, in any part of a pipeline or list."""
    outside = command_path_problem(command, absolute_paths=absolute_paths)
    if outside is not None:
        return outside
    command = re.sub(r"\{\{match:.*?\}\}", "x", command)
    for segment in _SEGMENT.split(command):
        try:
            words = shlex.split(segment)
        except ValueError:
            return f"the bash command {command!r} cannot be read as shell words"
        if words and words[0] not in REAL_PI_PROGRAMS:
            return (
                f"the bash command {command!r} runs {words[0]!r}: on real Pi a scripted command may run only "
                f"{', '.join(sorted(REAL_PI_PROGRAMS))}"
            )
    return None


def tool_calls_real_pi_refuses(
    value: Any, where: tuple[int | str, ...] = ()
) -> Iterator[tuple[tuple[int | str, ...], str]]:
    """``(where, why)`` for every scripted ``bash`` call in ``value`` (a scenario, or any part
    of one) that :func:`real_pi_command_problem` refuses."""
    for at, call in _calls(value, where):
        if call.name == "bash" and isinstance(call.arguments.get("command"), str):
            problem = real_pi_command_problem(call.arguments["command"])
            if problem is not None:
                yield at, problem


def served_call_problem(name: str, arguments: dict[str, Any], project_dir: str, run_dir: str) -> str | None:
    """Why the real-Pi target's model server must not send this tool call (its ``{{match:...}}``
    already replaced by what the run said): a ``bash`` command :func:`real_pi_command_problem`
    refuses, or a ``read``/``write``/``edit`` path, or an ``rm`` operand, that resolves outside
    the run (symbolic links followed)."""
    paths: list[str] = []
    if name in ("read", "write", "edit"):
        path = arguments.get("path")
        if isinstance(path, str):
            paths.append(path)
    elif name == "bash":
        command = arguments.get("command")
        if not isinstance(command, str):
            return None
        # A ``{{match:...}}`` the run did not resolve stays the scenario's own text, which the
        # load-time check (:func:`command_path_problem`) already read without it; the pattern's
        # ``/`` after a ``)`` read as an absolute path here, and real Pi refused a blitz
        # receiver's ``rm`` the simulator ran (differential exploration of the handoff cases,
        # seed 0, 7 December 2026).
        command = _MATCH_TEMPLATE.sub("", command)
        problem = real_pi_command_problem(command, absolute_paths=True)
        if problem is not None:
            return problem
        paths.extend(_absolute_paths(command))
    for path in paths:
        if not is_inside(os.path.join(project_dir, os.path.expanduser(path)), run_dir):
            return f"the {name} tool call names {path!r}, outside the run"
    return None


def _calls(
    value: Any, where: tuple[int | str, ...]
) -> Iterator[tuple[tuple[int | str, ...], ScriptedToolCall]]:
    """Every scripted tool call in ``value`` with the field names and indexes that lead to it,
    in the order a depth-first walk of the fields meets them (:func:`_collect`)."""
    found: list[tuple[tuple[int | str, ...], ScriptedToolCall]] = []
    _collect(value, where, found)
    return iter(found)


#: What may hold a scripted tool call: a model, or a container of them.
_CONTAINERS = (BaseModel, list, tuple, dict)

#: Each model class's field names, in their order: a class's fields are made with the class, and
#: ``model_fields`` is a descriptor (pydantic's deprecated instance property) that cost about
#: five times a plain attribute on every model the walk met (issue 16).
_FIELD_NAMES: dict[type[BaseModel], tuple[str, ...]] = {}


def _collect(
    value: Any, where: tuple[int | str, ...], found: list[tuple[tuple[int | str, ...], ScriptedToolCall]]
) -> None:
    """Only containers are walked into (a string, a number or ``None`` holds no call), and the
    calls are gathered into one list (a scenario is frozen while it is walked): a generator for
    every field of every model of a scenario was 2 % of a blitz exploration, which loads a
    generated scenario per seed, and the generators nested one per level, each call going up
    through every one above it, still 3 % (issue 16)."""
    if isinstance(value, ScriptedToolCall):
        found.append((where, value))
    elif isinstance(value, BaseModel):
        model = type(value)
        names = _FIELD_NAMES.get(model)
        if names is None:
            names = _FIELD_NAMES[model] = tuple(model.model_fields)
        for name in names:
            item = getattr(value, name)
            if isinstance(item, _CONTAINERS):
                _collect(item, (*where, name), found)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, _CONTAINERS):
                _collect(item, (*where, index), found)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, _CONTAINERS):
                _collect(item, (*where, key), found)
