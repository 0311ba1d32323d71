"""The extension wrappers real Pi loads for a scenario's slots, at paths and with texts that do
not change from run to run, so that jiti's transpile cache serves them.

Pi loads every extension through jiti (``core/extensions/loader.js``), which transpiles it with
its bundled Babel and keeps the result in ``$TMPDIR/jiti`` (``<cache>/tmp/jiti`` here: see
:func:`~.install.cache_tmp_dir`) under a name made of the file's *path*, checked against a hash
of its *text* (``getCache`` in ``jiti/dist/jiti.cjs`` of jiti 2.7.0, which Pi 1.6.0 ships). The
wrappers used to be written into each run's machine directory with the run's options in their
text: no start ever hit the cache, so every Pi start loaded Babel and transpiled them (about 70 ms
of Babel in a Pi start's 0.5 CPU-s, measured with ``node --cpu-prof`` on 3 December 2026), and
``<cache>/tmp/jiti`` gained a file per run (5,050 files after a few runs of the test command).

Now a wrapper's text depends only on the slot's name and on where this harness's ``bridge.ts``
and ``competitors.ts`` are, and it lives in ``<cache>/tmp/harness-wrappers/<hash of that
directory>/``. A bridge slot reads its options (the implementation's spec, the slot, the fault
plan) at load time from ``<machine>/harness-extensions/<slot>.json``, the directory named by
``PI_HARNESS_SLOTS`` in Pi's environment; a competitor slot has no options. Writing a wrapper
is atomic (a temporary file renamed over it) and every writer writes the same bytes, so runs
in parallel and harnesses of other checkouts sharing the cache are safe.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pi_continuity_harness.scenario.atomic_write import write_atomically
from pi_continuity_harness.scenario.workspace import write_json
from pi_continuity_harness.targets.realpi.install import cache_tmp_dir

BRIDGE_PATH = Path(__file__).with_name("bridge.ts")
COMPETITORS_PATH = Path(__file__).with_name("competitors.ts")
#: Pi's environment variable naming the run's directory of slot options.
SLOTS_ENV = "PI_HARNESS_SLOTS"


def wrappers_dir(cache_dir: Path) -> Path:
    """``<cache>/tmp/harness-wrappers/<16 hex of this harness's directory>``."""
    digest = hashlib.sha256(str(BRIDGE_PATH.parent.resolve()).encode("utf-8")).hexdigest()[:16]
    return cache_tmp_dir(cache_dir) / "harness-wrappers" / digest


def bridge_wrapper(cache_dir: Path, slots_dir: Path, slot: str, options: dict[str, str]) -> Path:
    """The wrapper of a bridge slot (the implementation or a ``module:`` extension); its
    options go to ``slots_dir/<slot>.json``, read by the wrapper when Pi loads it."""
    write_json(slots_dir / f"{slot}.json", options)
    text = (
        'import { readFileSync } from "node:fs";\n'
        'import { join } from "node:path";\n'
        f"import {{ createBridge }} from {json.dumps(str(BRIDGE_PATH))};\n"
        f"// This slot's options in this run: ${SLOTS_ENV}/{slot}.json (targets/realpi/wrappers.py).\n"
        f"const slots = process.env.{SLOTS_ENV};\n"
        "if (!slots) {\n"
        f'\tthrow new Error("{SLOTS_ENV} is not set: the harness\'s real-Pi target loads this wrapper");\n'
        "}\n"
        f'export default createBridge(JSON.parse(readFileSync(join(slots, {json.dumps(slot + ".json")}), "utf8")));\n'
    )
    return _stable_file(wrappers_dir(cache_dir) / f"{slot}.ts", text)


def competitor_wrapper(cache_dir: Path, slot: str, behaviour: str) -> Path:
    """The wrapper of a competitor slot: ``competitors.ts``'s ``competitor(behaviour)``."""
    text = (
        f"import {{ competitor }} from {json.dumps(str(COMPETITORS_PATH))};\n"
        f"export default competitor({json.dumps(behaviour)});\n"
    )
    return _stable_file(wrappers_dir(cache_dir) / f"{slot}.ts", text)


def _stable_file(path: Path, text: str) -> Path:
    """``path`` holding exactly ``text``: left alone when it does (its modification time too,
    which jiti does not read but a reader of the cache may), else written atomically."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return path
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    write_atomically(path, text)
    return path
