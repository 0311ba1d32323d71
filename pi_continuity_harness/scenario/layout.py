"""Where a machine lives, and how long the paths Pi names are: the same on both targets.

Pi puts paths into what it sends the model and counts them in every estimate:

* the project directory, once, in the system prompt's ``cwd`` section
  (``dist/core/system-prompt.js:109``), and in tool results, summaries and extension messages;
* its package directory, three times, in the ``docs`` section (``system-prompt.js:88-94``:
  ``<pkg>/README.md``, ``<pkg>/docs``, ``<pkg>/examples``); ``getPackageDir()`` is
  ``$PI_PACKAGE_DIR`` when set (``dist/config.js:334-345``).

Pi's chars/4 estimates (``dist/core/compaction/compaction.js:201-234``), pi-ai's ``max_tokens``
clamp (``pi-ai/dist/api/simple-options.js:13-23``) and the fake server's default usage all count
those characters, so a path one character longer on one target moves thresholds, summaries and
``max_tokens``. Both targets therefore show Pi paths of exactly these lengths:

* the **machine root** (``$WORK``: ``agent/``, ``project/``, ``sessions/`` ...) is
  :data:`WORK_PATH_LENGTH` characters long;
* the **Pi package directory** Pi names is ``<machine root>/pi-package``,
  :data:`PI_PACKAGE_PATH_LENGTH` characters long.

The simulator shows its host a virtual root of that length whatever directory the run lives in
(``simulator/virtual_root.py``). The real-Pi target cannot: Pi takes its cwd from
``process.cwd()`` (``dist/main.js:97``), which the kernel resolves, so it lays the machine out in a
*padding directory* inside its run directory (:func:`machine_root`), whose name makes the real
path exactly :data:`WORK_PATH_LENGTH` long, and points ``PI_PACKAGE_DIR`` at a symbolic link
``<machine root>/pi-package`` to the installed package.
"""

from __future__ import annotations

from pathlib import Path

from pi_continuity_harness.scenario.workspace import WorkdirError

__all__ = [
    "PI_PACKAGE_LINK",
    "PI_PACKAGE_PATH_LENGTH",
    "WORK_PATH_LENGTH",
    "machine_root",
    "padding_name",
    "pi_package_path",
]

#: L: the length of the machine root's path (``$WORK``) on both targets. Long enough for the
#: work directories the harness makes (a 35-character temporary directory plus an 80-character
#: scenario slug) with room for the padding directory's name.
WORK_PATH_LENGTH = 128
#: The name of the Pi package directory (a symbolic link on the real target) in the machine root.
PI_PACKAGE_LINK = "pi-package"
#: L2: the length of the Pi package directory's path Pi names on both targets.
PI_PACKAGE_PATH_LENGTH = WORK_PATH_LENGTH + 1 + len(PI_PACKAGE_LINK)

_PADDING_WORD = "machine"


def padding_name(length: int) -> str:
    """A directory name of exactly ``length`` characters: ``machine`` followed by dashes."""
    if length < 1:
        raise ValueError(f"a padding directory name needs at least 1 character, not {length}")
    return (_PADDING_WORD + "-" * max(0, length - len(_PADDING_WORD)))[:length]


def machine_root(run_dir: Path) -> Path:
    """``<run_dir>/<padding>``: the machine root on the real target, exactly
    :data:`WORK_PATH_LENGTH` characters long. ``run_dir`` is absolute with symbolic links resolved
    (what ``process.cwd()`` will report); a run directory too long to pad is refused."""
    text = str(run_dir)
    room = WORK_PATH_LENGTH - len(text) - 1
    if not run_dir.is_absolute() or room < 1:
        raise WorkdirError(
            f"{text}: the run directory's path is {len(text)} characters long; the real-Pi target "
            f"lays Pi's machine out at a path of exactly {WORK_PATH_LENGTH} characters (so every "
            "path Pi counts weighs the same as in the simulator), which needs a run directory of "
            f"at most {WORK_PATH_LENGTH - 2} characters: choose a shorter work directory"
        )
    return run_dir / padding_name(room)


def pi_package_path(root: str) -> str:
    """The Pi package directory Pi names, for machine root ``root``."""
    return f"{root.rstrip('/')}/{PI_PACKAGE_LINK}"
