"""Install a pinned Node 22 and a Pi release from the npm registry into a cache directory.

Layout of the cache directory (default ``$PI_CONTINUITY_HARNESS_CACHE`` or
``~/.cache/pi-continuity-harness``)::

    node22/                           npm project holding the ``node`` (or ``node-<os>-<arch>``)
                                      package, shared by every Pi release
    pi-<version>/                     one npm project per Pi release, each beside the others
    pi-<version>/harness-install.json marker of that release: versions, paths and timings
    pi-<version>/harness-verified.json what ``node --version`` and ``pi --version`` last
                                      answered, with the stat of the files they ran from
                                      (``_verified``: other processes reuse it while unchanged)
    pi/ + install.json                the single-release layout of harness 0.1 (Pi 1.6.0); still
                                      recognised for 1.6.0, never written
    npm-cache/                        npm's cache (never the user's ~/.npm)
    tmp/                              TMPDIR of npm and Pi (Node's compile cache, jiti's)
    tmp/pycache/                      the bridges' compiled Python modules, by source path
                                      (``PYTHONPYCACHEPREFIX``); the test suite's processes
                                      keep theirs here too; those of source directories that
                                      are gone are removed once a day (``cache_prune.py``)
    tmp/harness-wrappers/<hash>/      the extension wrappers Pi loads for a scenario's slots,
                                      per harness checkout, unchanged from run to run so that
                                      jiti's cache (``tmp/jiti``) serves them (``wrappers.py``)
    features/<sha256>.pickle          the stock suite's parsed Gherkin documents, one per feature
                                      file's bytes (``cache_dir.kept``, ``features/preflight.py``)
    rules/<sha256>.pickle             the two rule catalogues' parsed YAML (``cache_dir.kept``);
                                      neither is pruned: a few hundred KB per version of the suite
    .lock                             flock held while installing

:data:`PI_VERSION` is the default release; :data:`SUPPORTED_PI_VERSIONS` are the releases the
real-Pi target can drive (what each lacks: :mod:`.versions`). Every one of them needs Node
``>=22.19.0`` (``package.json:106`` in 1.0.3, ``:95`` in 1.3.0, 1.5.x and 1.6.0, ``:96`` in
1.4.0), so one Node serves them all.

The machine's ``npm`` installs Node 22; the Pi install then runs the same ``npm`` with Node 22
first on ``PATH``. An existing installation is reused after a cheap check (``node --version``
and ``pi --version`` with ``PI_CODING_AGENT_DIR`` in a throw-away directory, so ``~/.pi`` is
never touched), run again only when the files it ran from changed (``harness-verified.json``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from pi_continuity_harness.cache_dir import default_cache_dir
from pi_continuity_harness.errors import TargetError
from pi_continuity_harness.scenario.atomic_write import write_atomically
from pi_continuity_harness.scenario.owned_dirs import owned_temporary_directory

__all__ = [
    "NODE_PACKAGE",
    "NODE_VERSION",
    "PI_PACKAGE",
    "PI_VERSION",
    "SUPPORTED_PI_VERSIONS",
    "PiInstallError",
    "PiInstallation",
    "UnsupportedPiVersionError",
    "bytecode_cache_env",
    "cache_tmp_dir",
    "check_pi_version",
    "default_cache_dir",
    "find_installation",
    "install_pi",
    "pi_dir_for",
]

NODE_VERSION = "22.23.3"
NODE_PACKAGE = f"node@{NODE_VERSION}"
PI_VERSION = "1.6.0"
PI_PACKAGE_NAME = "@earendil-works/pi-coding-agent"
PI_PACKAGE = f"{PI_PACKAGE_NAME}@{PI_VERSION}"
#: The releases the real-Pi target drives, oldest first: the 1.x releases on the npm registry
#: (``npm view @earendil-works/pi-coding-agent versions``; 1.0.4, 1.1.0, 1.2.0 and 1.5.1 are
#: named in Pi's CHANGELOG but were never published). The 0.x line is not supported: it lacks
#: what the target reads (``agent_settled``, the prompt ``disposition``, project trust, the
#: compaction ``reason``).
SUPPORTED_PI_VERSIONS: tuple[str, ...] = ("1.0.3", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0")
#: npm ``overrides`` a release needs to install at all. 1.0.3's ``package.json:50`` depends on
#: ``@earendil-works/chord@^1.0.3``, which the registry never had (its newest chord is 0.87.1,
#: so npm fails with ETARGET); no file of its ``dist/`` imports chord, and 1.1.0 "Removed the
#: dependency on @earendil-works/chord" (``CHANGELOG.md:496`` in 1.6.0). It also asks for its own
#: packages with caret ranges (``package.json:51-55``), which would float to the newest 1.x, so
#: they are pinned to 1.0.3 (1.3.0 and later pin them exactly themselves).
_NPM_OVERRIDES: dict[str, dict[str, str]] = {
    "1.0.3": {
        "@earendil-works/chord": "0.87.1",
        "@earendil-works/pi-agent-core": "1.0.3",
        "@earendil-works/pi-ai": "1.0.3",
        "@earendil-works/pi-codemode": "1.0.3",
        "@earendil-works/pi-mcp": "1.0.3",
        "@earendil-works/pi-tui": "1.0.3",
    },
}
_MARKER = "install.json"  # the single-release marker of harness 0.1 (Pi 1.6.0 in pi/)
_VERSION_MARKER = "harness-install.json"
_NPM_TIMEOUT_S = 600.0
_VERSION_TIMEOUT_S = 60.0


class PiInstallError(TargetError, RuntimeError):
    """Node or Pi could not be installed or verified (npm missing, registry failure, ...)."""


class UnsupportedPiVersionError(PiInstallError, ValueError):
    """A Pi version the real-Pi target cannot drive (or that the registry does not have)."""


def check_pi_version(version: str | None) -> str:
    """``version`` (None: :data:`PI_VERSION`; a leading ``v`` is dropped) when the target drives
    it, else one clear error naming it and the supported versions."""
    chosen = PI_VERSION if version is None else str(version).strip().removeprefix("v")
    if chosen not in SUPPORTED_PI_VERSIONS:
        raise UnsupportedPiVersionError(
            f"Pi {chosen!r} is not supported: the real-Pi target drives {PI_PACKAGE_NAME} "
            f"{', '.join(SUPPORTED_PI_VERSIONS)} (the 1.x releases on the npm registry)"
        )
    return chosen


def pi_dir_for(cache_dir: Path, version: str) -> Path:
    """``<cache>/pi-<version>``: the npm project of one Pi release."""
    return cache_dir / f"pi-{version}"


@dataclass(frozen=True)
class PiInstallation:
    """A usable Node 22 + Pi installation (one release)."""

    cache_dir: Path
    node_path: Path
    #: The Pi CLI script (the package's ``bin``), run as ``node_path pi_cli_path ...``.
    pi_cli_path: Path
    pi_package_dir: Path
    node_version: str
    pi_version: str
    #: True when an existing installation was reused.
    cached: bool
    #: Wall time of this call (install or verification).
    seconds: float

    @property
    def node_bin_dir(self) -> Path:
        return self.node_path.parent

    def argv(self, *args: str) -> list[str]:
        """``[node, cli.js, *args]``: the Pi command line with the pinned Node."""
        return [str(self.node_path), str(self.pi_cli_path), *args]

    def env_path(self, base_path: str | None = None) -> str:
        """A ``PATH`` with Node 22 first (Pi's own child processes may call ``node``)."""
        rest = base_path if base_path is not None else os.environ.get("PATH", "")
        return str(self.node_bin_dir) + (os.pathsep + rest if rest else "")


def cache_tmp_dir(cache_dir: Path) -> Path:
    """``<cache>/tmp``: TMPDIR for npm and Pi, so Node's compile cache and jiti's transpile
    cache stay warm across runs (a fresh TMPDIR costs ~0.2 s per Pi start) and out of /tmp."""
    path = cache_dir / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def bytecode_cache_env(cache_dir: Path) -> dict[str, str]:
    """Where a bridge's Python keeps compiled modules: ``<cache>/tmp/pycache``
    (``PYTHONPYCACHEPREFIX``), shared by every bridge of every run.

    A bridge process starts with every scenario's Pi and imports the harness and the extension
    under test. It used to run with ``PYTHONDONTWRITEBYTECODE=1``, so that no ``__pycache__``
    appears in an extension's or a package's directory; then every bridge compiled every
    module it imported (0.1 of its 0.33 CPU-s of imports, measured on 2 December 2026), on the
    critical path of Pi's start. The prefix keeps the same promise (CPython writes no bytecode
    beside a source file when it is set) and keeps the bytecode warm, as ``TMPDIR`` keeps
    Node's compile cache warm (:func:`cache_tmp_dir`). CPython writes each file atomically and
    checks it against its source's modification time and size, so concurrent bridges and an
    edited source are safe."""
    return {"PYTHONPYCACHEPREFIX": str(cache_tmp_dir(cache_dir) / "pycache")}


def _node_platform_package() -> str:
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system(), platform.system().lower())
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"node-{system}-{arch}"


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _npm_env(cache_dir: Path, path: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["npm_config_cache"] = str(cache_dir / "npm-cache")
    env["npm_config_update_notifier"] = "false"
    env["npm_config_fund"] = "false"
    env["npm_config_audit"] = "false"
    env["TMPDIR"] = str(cache_tmp_dir(cache_dir))
    if path is not None:
        env["PATH"] = path
    return env


def _run_npm(npm: str, args: list[str], cwd: Path, env: dict[str, str], log: Callable[[str], None]) -> None:
    cmd = [npm, "install", "--no-audit", "--no-fund", *args]
    log(f"$ (cd {cwd} && {' '.join(cmd)})")
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=_NPM_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise PiInstallError(f"npm install {' '.join(args)} timed out after {_NPM_TIMEOUT_S:.0f} s") from exc
    except OSError as exc:
        raise PiInstallError(f"cannot run npm ({npm}): {exc}") from exc
    if proc.returncode != 0:
        raise PiInstallError(
            f"npm install {' '.join(args)} failed (exit {proc.returncode}); is the npm registry "
            f"reachable?\n--- npm output (tail) ---\n{_tail(proc.stdout + proc.stderr)}"
        )


def _fresh_project(directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    (directory / "package.json").write_text('{"private": true}\n', encoding="utf-8")


def _node_candidates(node_dir: Path) -> list[Path]:
    modules = node_dir / "node_modules"
    return [modules / ".bin" / "node", modules / _node_platform_package() / "bin" / "node"]


def _find_node(node_dir: Path) -> Path | None:
    for candidate in _node_candidates(node_dir):
        if candidate.exists():
            return candidate.resolve()
    return None


def _pi_cli(pi_dir: Path) -> tuple[Path, Path] | None:
    pkg_dir = pi_dir / "node_modules" / Path(*PI_PACKAGE_NAME.split("/"))
    manifest = pkg_dir / "package.json"
    if not manifest.exists():
        return None
    data = json.loads(manifest.read_text(encoding="utf-8"))
    bin_field = data.get("bin")
    rel = bin_field.get("pi") if isinstance(bin_field, dict) else bin_field
    cli = pkg_dir / (rel if isinstance(rel, str) else "dist/cli.js")
    if not cli.exists():
        cli = pkg_dir / "dist" / "cli.js"
    return (cli, pkg_dir) if cli.exists() else None


def _version(argv: list[str], env: dict[str, str]) -> str:
    try:
        proc = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=_VERSION_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PiInstallError(f"{argv[0]} failed: {exc}") from exc
    if proc.returncode != 0:
        raise PiInstallError(
            f"{' '.join(argv)} exited {proc.returncode}:\n{_tail(proc.stdout + proc.stderr)}"
        )
    return proc.stdout.strip().splitlines()[-1].strip() if proc.stdout.strip() else ""


def _verify(node: Path, cli: Path, cache_dir: Path) -> tuple[str, str]:
    """Run ``node --version`` and ``pi --version`` in an isolated agent dir."""
    node_version = _version([str(node), "--version"], dict(os.environ)).lstrip("v")
    tmp_root = cache_tmp_dir(cache_dir)
    with owned_temporary_directory("pi-version-", tmp_root) as tmp:
        env = dict(os.environ)
        env.update(
            PATH=str(node.parent) + os.pathsep + env.get("PATH", ""),
            TMPDIR=str(tmp_root),
            HOME=tmp,
            PI_CODING_AGENT_DIR=str(Path(tmp) / "agent"),
            PI_CODING_AGENT_SESSION_DIR=str(Path(tmp) / "sessions"),
            PI_OFFLINE="1",
            PI_SKIP_VERSION_CHECK="1",
            PI_TELEMETRY="0",
        )
        pi_version = _version([str(node), str(cli), "--version"], env)
    return node_version, pi_version


@contextlib.contextmanager
def _locked(cache_dir: Path) -> Iterator[None]:
    cache_dir.mkdir(parents=True, exist_ok=True)
    with (cache_dir / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _existing(cache_dir: Path, started: float, version: str) -> PiInstallation | None:
    """The verified installation of ``version``: ``pi-<version>/``, or for :data:`PI_VERSION`
    also the single-release layout of harness 0.1 (``pi/`` + ``install.json``)."""
    pi_dir = pi_dir_for(cache_dir, version)
    candidates = [(pi_dir, pi_dir / _VERSION_MARKER)]
    if version == PI_VERSION:
        candidates.append((cache_dir / "pi", cache_dir / _MARKER))
    for directory, marker in candidates:
        found = _existing_at(cache_dir, directory, marker, started, version)
        if found is not None:
            return found
    return None


#: ``(node --version, pi --version)`` of the pairs this process verified, by their paths
#: (verifying runs Node and Pi, which takes seconds).
_VERIFIED: dict[tuple[Path, Path], tuple[str, str]] = {}
#: The record of the last verification of a release's pair, in its ``pi-<version>/`` directory.
_VERIFIED_RECORD = "harness-verified.json"


def _fingerprint(node: Path, cli: Path, package_dir: Path) -> list[list[int]] | None:
    """What the record of a verification is checked against: device, inode, size and
    modification time of the Node binary, Pi's CLI, Pi's ``package.json``, the directory of the
    CLI and the ``node_modules`` holding Pi and its dependencies (a file added, removed or
    renamed in one of those directories changes its modification time). None when one of them
    is gone."""
    paths = [node, cli, package_dir / "package.json", cli.parent, package_dir.parent.parent]
    try:
        stats = [p.stat() for p in paths]
    except OSError:
        return None
    return [[s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns] for s in stats]


def _recorded(record: Path, node: Path, cli: Path, package_dir: Path) -> tuple[str, str] | None:
    """The versions a verification of exactly these files recorded, or None."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fingerprint = _fingerprint(node, cli, package_dir)
    if (
        not isinstance(data, dict)
        or fingerprint is None
        or data.get("node") != str(node)
        or data.get("cli") != str(cli)
        or data.get("fingerprint") != fingerprint
    ):
        return None
    node_version, pi_version = data.get("node_version"), data.get("pi_version")
    if not isinstance(node_version, str) or not isinstance(pi_version, str):
        return None
    return node_version, pi_version


def _verified(node: Path, cli: Path, package_dir: Path, cache_dir: Path, record: Path) -> tuple[str, str]:
    """:func:`_verify`, once for each Node and Pi pair as long as its files are unchanged.

    Once per process, and across processes through ``record`` (the release directory's
    ``harness-verified.json``): the versions Node and Pi answered, with the
    :func:`_fingerprint` of the files they ran from. A process that finds the same fingerprint
    takes the recorded answer instead of running Node and Pi again; a changed, added or
    removed file, a record of other paths or an unreadable one runs the check again (and the
    record is rewritten, atomically). Why: the check is ``pi --version``, which loads Pi's
    whole bundle (0.31 CPU-s of a 0.69 CPU-s ``find_installation()`` process, measured on 5
    December 2026), and the README's test command starts a harness process per CLI call,
    ``run -n``/``compare -n`` worker and nested run, each of which verified the same unchanged
    files again."""
    key = (node, cli)
    known = _VERIFIED.get(key)
    if known is not None and node.exists() and cli.exists():
        return known
    versions = _recorded(record, node, cli, package_dir)
    if versions is None:
        before = _fingerprint(node, cli, package_dir)
        versions = _verify(node, cli, cache_dir)
        if before is not None and before == _fingerprint(node, cli, package_dir):
            with contextlib.suppress(OSError):
                write_atomically(
                    record,
                    json.dumps(
                        {
                            "node": str(node),
                            "cli": str(cli),
                            "fingerprint": before,
                            "node_version": versions[0],
                            "pi_version": versions[1],
                        },
                        indent=1,
                    )
                    + "\n",
                )
    _VERIFIED[key] = versions
    return versions


def _existing_at(
    cache_dir: Path, pi_dir: Path, marker: Path, started: float, version: str
) -> PiInstallation | None:
    if not marker.exists():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("node_version") != NODE_VERSION or data.get("pi_version") != version:
        return None
    node = _find_node(cache_dir / "node22")
    found = _pi_cli(pi_dir)
    if node is None or found is None:
        return None
    cli, pkg_dir = found
    try:
        node_version, pi_version = _verified(node, cli, pkg_dir, cache_dir, pi_dir / _VERIFIED_RECORD)
    except PiInstallError:
        return None
    if node_version != NODE_VERSION or pi_version != version:
        return None
    return PiInstallation(
        cache_dir=cache_dir,
        node_path=node,
        pi_cli_path=cli,
        pi_package_dir=pkg_dir,
        node_version=node_version,
        pi_version=pi_version,
        cached=True,
        seconds=time.monotonic() - started,
    )


def find_installation(cache_dir: Path | None = None, version: str | None = None) -> PiInstallation | None:
    """The verified installation of Pi ``version`` (default :data:`PI_VERSION`) in ``cache_dir``,
    or None. Never installs anything; an unsupported version is :class:`UnsupportedPiVersionError`.

    The markers are read on every call; running Node and Pi to verify them happens once per
    process and installed pair (:func:`_verified`), so the setup check before a run and the
    real-Pi target agree for the cost of one."""
    chosen = check_pi_version(version)
    return _existing((cache_dir or default_cache_dir()).expanduser(), time.monotonic(), chosen)


def _install_node(cache_dir: Path, npm: str, log: Callable[[str], None]) -> Path:
    node_dir = cache_dir / "node22"
    env = _npm_env(cache_dir)
    first_error: PiInstallError | None = None
    try:
        _fresh_project(node_dir)
        _run_npm(npm, [NODE_PACKAGE], node_dir, env, log)
        node = _find_node(node_dir)
        if node is not None:
            return node
        first_error = PiInstallError(f"{NODE_PACKAGE} installed but no node binary was found")
    except PiInstallError as exc:
        first_error = exc
    log(f"{NODE_PACKAGE} failed ({str(first_error).splitlines()[0]}); trying the script-free variant")
    variant = f"{_node_platform_package()}@{NODE_VERSION}"
    try:
        _fresh_project(node_dir)
        _run_npm(npm, ["--ignore-scripts", variant], node_dir, env, log)
    except PiInstallError as exc:
        raise PiInstallError(
            f"cannot install Node {NODE_VERSION}:\n{first_error}\n--- variant ---\n{exc}"
        ) from exc
    node = _find_node(node_dir)
    if node is None:
        raise PiInstallError(f"{variant} installed but {node_dir}/node_modules has no node binary")
    return node


def _node_ok(cache_dir: Path) -> Path | None:
    """The cached Node 22 when it answers ``--version`` with :data:`NODE_VERSION` (another Pi
    release installed it before: only Pi is installed then)."""
    node = _find_node(cache_dir / "node22")
    if node is None:
        return None
    try:
        version = _version([str(node), "--version"], dict(os.environ)).lstrip("v")
    except PiInstallError:
        return None
    return node if version == NODE_VERSION else None


def _pi_project(directory: Path, version: str) -> None:
    """A fresh npm project for one Pi release, with the ``overrides`` that release needs."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    manifest: dict[str, object] = {"private": True}
    if version in _NPM_OVERRIDES:
        manifest["overrides"] = dict(_NPM_OVERRIDES[version])
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def install_pi(
    cache_dir: Path | None = None,
    *,
    version: str | None = None,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> PiInstallation:
    """Install (or reuse) Node 22.23.3 and Pi ``version`` (default :data:`PI_VERSION`) in
    ``cache_dir``, beside the other cached releases."""
    say: Callable[[str], None] = log or (lambda _msg: None)
    chosen = check_pi_version(version)
    package = f"{PI_PACKAGE_NAME}@{chosen}"
    root = (cache_dir or default_cache_dir()).expanduser().resolve()
    started = time.monotonic()
    with _locked(root):
        if not force:
            existing = _existing(root, started, chosen)
            if existing is not None:
                say(f"reusing Pi {existing.pi_version} / Node {existing.node_version} in {root}")
                return existing
        npm = shutil.which("npm")
        if npm is None:
            raise PiInstallError(
                "npm is not on PATH: Node 22 and Pi are installed from the npm registry with the "
                "machine's npm (install Node.js/npm first)"
            )
        pi_dir = pi_dir_for(root, chosen)
        (pi_dir / _VERSION_MARKER).unlink(missing_ok=True)
        t0 = time.monotonic()
        node = None if force else _node_ok(root)
        if node is None:
            node = _install_node(root, npm, say)
        node_seconds = time.monotonic() - t0
        t1 = time.monotonic()
        _pi_project(pi_dir, chosen)
        path = str(node.parent) + os.pathsep + os.environ.get("PATH", "")
        _run_npm(npm, [package], pi_dir, _npm_env(root, path), say)
        pi_seconds = time.monotonic() - t1
        found = _pi_cli(pi_dir)
        if found is None:
            raise PiInstallError(f"{package} installed but its CLI was not found under {pi_dir}")
        cli, pkg_dir = found
        node_version, pi_version = _verify(node, cli, root)
        if node_version != NODE_VERSION:
            raise PiInstallError(f"expected Node {NODE_VERSION}, got {node_version}")
        if pi_version != chosen:
            raise PiInstallError(f"expected Pi {chosen}, got {pi_version!r}")
        seconds = time.monotonic() - started
        installation = PiInstallation(
            cache_dir=root,
            node_path=node,
            pi_cli_path=cli,
            pi_package_dir=pkg_dir,
            node_version=node_version,
            pi_version=pi_version,
            cached=False,
            seconds=seconds,
        )
        marker = {
            **{k: str(v) if isinstance(v, Path) else v for k, v in asdict(installation).items()},
            "node_install_seconds": round(node_seconds, 3),
            "pi_install_seconds": round(pi_seconds, 3),
            "total_seconds": round(seconds, 3),
            "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        del marker["cached"]
        (pi_dir / _VERSION_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        say(f"installed Node {node_version} ({node_seconds:.1f} s) and Pi {pi_version} ({pi_seconds:.1f} s)")
        return installation
