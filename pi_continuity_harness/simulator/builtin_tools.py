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

from collections.abc import Callable
from typing import Any

from pi_continuity_harness.simulator.system_prompt import builtin_tools

__all__ = ["BUILTIN_TOOLS", "BuiltinTools"]

#: The four built-in tools' declarations as Pi 1.6 persists them (``system_prompt.py``).
BUILTIN_TOOLS: tuple[dict[str, Any], ...] = tuple(builtin_tools())


class BuiltinTools:
    """Runs a built-in tool call of the model for one session (see the module docstring)."""

    def __init__(
        self,
        *,
        cwd: str,
        scripted_output: Callable[[str], str | None],
        write_file: Callable[[str, str], None],
        remove_file: Callable[[str], None],
    ) -> None:
        self.cwd = cwd
        self._scripted_output = scripted_output
        self._write_file = write_file
        self._remove_file = remove_file

    def run(self, call: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Simulated built-in tools: scripted output for ``bash``, real files for read/write."""
        name = call["name"]
        args = call.get("arguments") or {}
        scripted = self._scripted_output(call["id"])
        if name == "bash":
            command = str(args.get("command", ""))
            removed = None if scripted is not None else self._bash_rm(command)
            if scripted is not None:
                text = scripted
            elif removed is not None:
                text = removed
            else:
                text = command[5:].strip().strip("'\"") + "\n" if command.startswith("echo ") else ""
            return {"content": [{"type": "text", "text": text or "(no output)"}], "details": {}}, False
        if name in ("write", "edit"):
            path = str(args.get("path", ""))
            full = path if path.startswith("/") else f"{self.cwd}/{path}"
            content = str(args.get("content", args.get("newText", "")))
            try:
                self._write_file(full, content)
            except OSError as error:
                return {"content": [{"type": "text", "text": str(error)}]}, True
            # Pi 1.6: "Successfully wrote to <path as given>", and a native result has no
            # ``details`` key (handoff-host-on-real-pi.md §6).
            return {"content": [{"type": "text", "text": f"Successfully wrote to {path}"}]}, False
        if name == "read":
            path = str(args.get("path", ""))
            full = path if path.startswith("/") else f"{self.cwd}/{path}"
            try:
                with open(full, encoding="utf-8") as handle:
                    text = handle.read()
            except OSError as error:
                return {"content": [{"type": "text", "text": str(error)}], "details": {}}, True
            return {"content": [{"type": "text", "text": text}], "details": {}}, False
        return {"content": [{"type": "text", "text": scripted or ""}], "details": {}}, False

    def _bash_rm(self, command: str) -> str | None:
        """The one command the simulated ``bash`` really runs: ``rm [-f] <paths>``.

        Real Pi runs the model's bash commands; a receiver deleting a file it was told to
        delete is part of the protocols under test, so ``rm`` has its real effect here
        (through the host's file writer, so faults and the trace see it). Every other
        command prints its scripted result. Returns the output, or None if not an ``rm``.
        """
        words = command.split()
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
