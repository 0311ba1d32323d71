"""Pi 1.6's four built-in tools as the simulated host runs them: ``bash``, ``read``, ``write``, ``edit``.

Pi persists their declarations (:data:`BUILTIN_TOOLS`, from ``pi-1.6-system-prompt.json``, see
``system_prompt.py``) and runs them for the model. The simulator runs them for real where a
protocol under test depends on their effect, and otherwise prints what the scenario scripted:

* ``read``/``write``/``edit`` read and write real files under the project (a write goes
  through the host's file writer, so the trace and faults see it); the result texts are Pi
  1.6's (``Successfully wrote to <path as given>``, no ``details``: handoff-host-on-real-pi.md §6);
* ``bash`` prints the scripted ``result`` of the call; the one command it really runs is
  ``rm [-f] <paths>`` (a receiver deleting the file it was told to delete is part of the
  protocols under test), through the host's file remover; ``echo`` prints its argument.
"""

from __future__ import annotations

import errno
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.simulator.builtin_extension_tools import run_tool_search
from pi_continuity_harness.simulator.edit_tool import EditError, run_edit
from pi_continuity_harness.simulator.read_image import (
    IMAGE_SNIFF_BYTES,
    ImageNotModelledError,
    detect_image_mime,
    read_image,
)
from pi_continuity_harness.simulator.read_tool import ReadError, read_text
from pi_continuity_harness.simulator.system_prompt import builtin_tools
from pi_continuity_harness.simulator.tool_paths import resolve_read_path, resolve_to_cwd

__all__ = ["BUILTIN_TOOLS", "BuiltinTools", "ToolError", "ToolRun"]

#: The four built-in tools' declarations as Pi 1.6 persists them (``system_prompt.py``).
BUILTIN_TOOLS: tuple[dict[str, Any], ...] = tuple(builtin_tools())


class ToolError(SimulatorError, RuntimeError):
    """A built-in tool failed: Pi's tool throws, and the loop reports the message as an error result."""


@dataclass
class ToolRun:
    """A built-in tool's run: the result object Pi's tool returns (``content``, and ``details``,
    ``structuredContent``, ``isError`` only where Pi's tool sets them), and the partial results
    it reported while running (``tool_execution_update``)."""

    result: dict[str, Any]
    is_error: bool
    updates: list[dict[str, Any]] = field(default_factory=list)


class BuiltinTools:
    """Runs a built-in tool call of the model for one session (see the module docstring)."""

    def __init__(
        self,
        *,
        cwd: str,
        scripted_output: Callable[[str], str | None],
        write_file: Callable[[str, str], None],
        remove_file: Callable[[str], None],
        read_file: Callable[[str], bytes] | None = None,
        scripted_exit_code: Callable[[str], int] | None = None,
        confine: Callable[[str, str], None] | None = None,
        model: Callable[[], Model | None] | None = None,
    ) -> None:
        self.cwd = cwd
        #: The native ``read`` tool's file read: Pi's own (the host records it as ``tool_read``),
        #: never the extension's.
        self._read_file = read_file or _read_plain
        self._scripted_output = scripted_output
        self._scripted_exit_code = scripted_exit_code or (lambda _call_id: 0)
        self._write_file = write_file
        self._remove_file = remove_file
        #: The host's confinement (``SimHost._confine_tool``): a path outside the run is refused
        #: before the tool looks at it, so no result depends on files outside the run.
        self._confine = confine or (lambda _op, _path: None)
        #: The session's model (``ctx.model``): ``read`` names one that takes no images.
        self._model = model or (lambda: None)

    def run(self, call: dict[str, Any]) -> ToolRun:
        """Simulated built-in tools: scripted output for ``bash``, real files for read/write.

        A failure is a thrown error in Pi (``createErrorToolResult``: the message as text and
        ``details: {}``, ``AC agent-loop.js:640-645``); the caller turns :class:`ToolError` into
        that result.
        """
        name = call["name"]
        args = call.get("arguments") or {}
        try:
            return self._run(name, call, args)
        except ValueError as error:  # a path Node's fileURLToPath refuses (:mod:`.tool_paths`)
            raise ToolError(str(error)) from error

    def _run(self, name: str, call: dict[str, Any], args: dict[str, Any]) -> ToolRun:
        if name == "bash":
            return self._bash(call["id"], str(args.get("command", "")))
        if name == "write":
            path = str(args.get("path", ""))
            full = resolve_to_cwd(path, self.cwd)
            try:
                self._write_file(full, str(args.get("content", "")))
            except OSError as error:
                raise ToolError(_node_error(error, "open", full)) from error
            # Pi 1.6 (write.js:49-52): "Successfully wrote to <path as given>", details undefined.
            return ToolRun({"content": [{"type": "text", "text": f"Successfully wrote to {path}"}]}, False)
        if name == "edit":
            return self._edit(args)
        if name == "read":
            return self._read(args)
        if name == "tool_search":
            # The built-in extension's tool, once activated (an extension's own ``tool_search``
            # runs as that extension's tool).
            try:
                text, details = run_tool_search(args)
            except ValueError as error:
                raise ToolError(str(error)) from error
            return ToolRun({"content": [{"type": "text", "text": text}], "details": details}, False)
        scripted = self._scripted_output(call["id"])
        return ToolRun({"content": [{"type": "text", "text": scripted or ""}]}, False)

    def _read(self, args: dict[str, Any]) -> ToolRun:
        """read.js:195-270: the path resolved as Pi resolves a read path (its macOS spellings
        tried when the file is missing), ``access`` checked, then an image
        (:func:`.read_image.read_image`) or the lines asked for (:func:`.read_tool.read_text`)."""
        path = str(args.get("path", ""))
        full = resolve_to_cwd(path, self.cwd)
        try:
            self._confine("tool_read", full)
            spelled = resolve_read_path(path, self.cwd, os.path.exists)
            if spelled != full:  # a macOS spelling of the name, beside it
                self._confine("tool_read", spelled)
                full = spelled
            if not os.path.exists(full):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", full)
            raw = self._read_file(full)
        except FileNotFoundError as error:
            # Node's fs.access error (read.js: ``ops.access``), with the absolute path.
            raise ToolError(f"ENOENT: no such file or directory, access '{full}'") from error
        except IsADirectoryError as error:
            # access passes for a directory; the image sniff's read fails (mime.js:22-31).
            raise ToolError("EISDIR: illegal operation on a directory, read") from error
        except OSError as error:
            raise ToolError(str(error)) from error
        mime = detect_image_mime(raw[:IMAGE_SNIFF_BYTES])
        if mime is not None:
            model = self._model()
            try:
                image = read_image(
                    raw, mime, None if model is None else model.id, model is None or "image" in model.input
                )
            except ImageNotModelledError as error:
                raise ToolError(f"not modelled by the simulator: {error}") from error
            return ToolRun(image, False)
        try:
            result = read_text(path, raw, _number(args.get("offset")), _number(args.get("limit")))
        except ReadError as error:
            raise ToolError(str(error)) from error
        return ToolRun(result, False)

    def _edit(self, args: dict[str, Any]) -> ToolRun:
        """edit.js:83-137 (:func:`.edit_tool.run_edit`): ``edits`` matched in the file read as
        Pi reads it, written back through the host's file writer."""
        path = str(args.get("path", ""))
        edits = args.get("edits")
        if not isinstance(edits, list) or not edits:
            # validateEditInput (edit.js:67-72), for arguments the schema check let through.
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        full = resolve_to_cwd(path, self.cwd)

        def access() -> str | None:
            try:
                # The file edit writes: refused as its write would be, before Pi's access check.
                self._confine("tool_write", full)
                os.stat(full)
            except OSError as error:
                return errno.errorcode.get(error.errno or 0, "ENOENT")
            return None if os.access(full, os.R_OK | os.W_OK) else "EACCES"

        def read_bytes() -> bytes:
            try:
                return self._read_file(full)
            except IsADirectoryError as error:
                raise ToolError("EISDIR: illegal operation on a directory, read") from error

        def write_text(text: str) -> None:
            try:
                self._write_file(full, text)
            except OSError as error:
                raise ToolError(_node_error(error, "open", full)) from error

        try:
            result = run_edit(path, edits, access=access, read_bytes=read_bytes, write_text=write_text)
        except EditError as error:
            raise ToolError(str(error)) from error
        return ToolRun(result, False)

    def _bash(self, call_id: str, command: str) -> ToolRun:
        """bash.js:196-335: the output (scripted, or the one command really run), ``"(no
        output)"`` when empty, ``Command exited with code N`` appended for a failure; the first
        update is empty, the output comes in one more (the simulator's output is one chunk)."""
        scripted = self._scripted_output(call_id)
        removed = None if scripted is not None else self._bash_rm(command)
        if scripted is not None:
            output = scripted
        elif removed is not None:
            output = removed
        else:
            output = command[5:].strip().strip("'\"") + "\n" if command.startswith("echo ") else ""
        exit_code = self._scripted_exit_code(call_id)
        if removed and exit_code == 0:
            exit_code = 1
        updates: list[dict[str, Any]] = [{"content": []}]
        if output:
            updates.append({"content": [{"type": "text", "text": output}], "details": {}})
        text = output or "(no output)"
        structured = {"output": output, "truncated": False, "exit_code": exit_code, "wall_time_seconds": 0}
        if exit_code != 0:
            text = (
                f"{output}\n\nCommand exited with code {exit_code}"
                if output
                else f"(no output)\n\nCommand exited with code {exit_code}"
            )
            result = {
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured,
                "isError": True,
            }
            return ToolRun(result, True, updates)
        return ToolRun(
            {"content": [{"type": "text", "text": text}], "structuredContent": structured}, False, updates
        )

    def _bash_rm(self, command: str) -> str | None:
        """The one command the simulated ``bash`` really runs: ``rm [-f] <paths>``.

        Real Pi runs the model's bash commands; a receiver deleting a file it was told to
        delete is part of the protocols under test, so ``rm`` has its real effect here
        (through the host's file writer, so faults and the trace see it). Every other
        command prints its scripted result. Returns the output, or None if not an ``rm``.

        The words are the shell's (``shlex``, POSIX quoting), as bash reads them: ``rm -f '/my
        runs/x.md'`` removes one file with a space in its path. Splitting at whitespace made it
        two paths, ``'/my`` and ``runs/x.md'``, and removed neither. A command the shell cannot
        read (an open quote) is not an ``rm`` here; bash fails it.
        """
        try:
            words = shlex.split(command)
        except ValueError:
            return None
        if not words or words[0] != "rm":
            return None
        force = "-f" in words[1:]
        paths = [w for w in words[1:] if not w.startswith("-")]
        if not paths or any(c in command for c in ";&|`$<>*?"):
            return None
        errors = []
        for path in paths:
            full = path if path.startswith("/") else f"{self.cwd}/{path}"
            try:
                self._remove_file(full)
            except FileNotFoundError:
                if not force:
                    errors.append(f"rm: cannot remove '{path}': No such file or directory")
            except OSError as error:
                errors.append(f"rm: cannot remove '{path}': {error.strerror or error}")
        return "\n".join(errors) + ("\n" if errors else "")


def _read_plain(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _number(value: Any) -> float | None:
    """A validated ``offset``/``limit``: a number, or None when not given."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


#: libuv's ``uv_strerror`` where it words an error differently from the C library's.
_LIBUV_DESCRIPTIONS = {"EISDIR": "illegal operation on a directory"}


def _node_error(error: OSError, syscall: str, path: str) -> str:
    """A Node ``fs`` error's message: ``CODE: description, syscall 'path'`` (libuv's
    descriptions: ``EISDIR: illegal operation on a directory, open '<path>'``)."""
    code = errno.errorcode.get(error.errno or 0)
    if code is None:
        return str(error)
    description = _LIBUV_DESCRIPTIONS.get(code) or (error.strerror or "").lower()
    return f"{code}: {description}, {syscall} '{path}'"
