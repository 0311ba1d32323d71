"""Install a pinned Node 22 and Pi 1.6.0 from the npm registry into a cache directory.

Layout of the cache directory (default ``$PI_CONTINUITY_HARNESS_CACHE`` or
``~/.cache/pi-continuity-harness``)::

    node22/            npm project holding the ``node`` (or ``node-<os>-<arch>``) package
    pi/                npm project holding @earendil-works/pi-coding-agent
    npm-cache/         npm's cache (never the user's ~/.npm)
    install.json       marker: versions, paths and timings
    .lock              flock held while installing

The machine's ``npm`` installs Node 22; the Pi install then runs the same ``npm`` with Node 22
first on ``PATH``. An existing installation is reused after a cheap check (``node --version``
and ``pi --version`` with ``PI_CODING_AGENT_DIR`` in a throw-away directory, so ``~/.pi`` is
never touched).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from pi_continuity_harness.errors import TargetError

__all__ = [
    "NODE_PACKAGE",
    "NODE_VERSION",
    "PI_PACKAGE",
    "PI_VERSION",
    "PiInstallError",
    "PiInstallation",
    "cache_tmp_dir",
    "default_cache_dir",
    "find_installation",
    "install_pi",
]

NODE_VERSION = "22.23.3"
NODE_PACKAGE = f"node@{NODE_VERSION}"
PI_VERSION = "1.6.0"
PI_PACKAGE_NAME = "@earendil-works/pi-coding-agent"
PI_PACKAGE = f"{PI_PACKAGE_NAME}@{PI_VERSION}"
_MARKER = "install.json"
_NPM_TIMEOUT_S = 600.0
_VERSION_TIMEOUT_S = 60.0


class PiInstallError(TargetError, RuntimeError):
    """Node or Pi could not be installed or verified (npm missing, registry failure, ...)."""


@dataclass(frozen=True)
class PiInstallation:
    """A usable Node 22 + Pi 1.6 installation."""

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


def default_cache_dir() -> Path:
    env = os.environ.get("PI_CONTINUITY_HARNESS_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "pi-continuity-harness"


def cache_tmp_dir(cache_dir: Path) -> Path:
    """``<cache>/tmp``: TMPDIR for npm and Pi, so Node's compile cache and jiti's transpile
    cache stay warm across runs (a fresh TMPDIR costs ~0.2 s per Pi start) and out of /tmp."""
    path = cache_dir / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


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
    with tempfile.TemporaryDirectory(prefix="pi-version-", dir=tmp_root) as tmp:
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


def _existing(cache_dir: Path, started: float) -> PiInstallation | None:
    marker = cache_dir / _MARKER
    if not marker.exists():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("node_version") != NODE_VERSION or data.get("pi_version") != PI_VERSION:
        return None
    node = _find_node(cache_dir / "node22")
    found = _pi_cli(cache_dir / "pi")
    if node is None or found is None:
        return None
    cli, pkg_dir = found
    try:
        node_version, pi_version = _verify(node, cli, cache_dir)
    except PiInstallError:
        return None
    if node_version != NODE_VERSION or pi_version != PI_VERSION:
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


#: Installations verified by this process, by cache directory (verifying runs Node and Pi).
_VERIFIED: dict[Path, PiInstallation] = {}


def find_installation(cache_dir: Path | None = None) -> PiInstallation | None:
    """The verified installation in ``cache_dir``, or None. Never installs anything.

    Verified once per process and cache directory (``node --version`` and ``pi --version`` take
    seconds): the setup check before a run and the real-Pi target then agree for the cost of one."""
    root = (cache_dir or default_cache_dir()).expanduser()
    known = _VERIFIED.get(root)
    if known is not None and known.node_path.exists() and known.pi_cli_path.exists():
        return known
    found = _existing(root, time.monotonic())
    if found is not None:
        _VERIFIED[root] = found
    return found


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


def install_pi(
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> PiInstallation:
    """Install (or reuse) Node 22.23.3 and Pi 1.6.0 in ``cache_dir``."""
    say: Callable[[str], None] = log or (lambda _msg: None)
    root = (cache_dir or default_cache_dir()).expanduser().resolve()
    started = time.monotonic()
    with _locked(root):
        if not force:
            existing = _existing(root, started)
            if existing is not None:
                say(f"reusing Pi {existing.pi_version} / Node {existing.node_version} in {root}")
                return existing
        npm = shutil.which("npm")
        if npm is None:
            raise PiInstallError(
                "npm is not on PATH: Node 22 and Pi are installed from the npm registry with the "
                "machine's npm (install Node.js/npm first)"
            )
        (root / _MARKER).unlink(missing_ok=True)
        t0 = time.monotonic()
        node = _install_node(root, npm, say)
        node_seconds = time.monotonic() - t0
        t1 = time.monotonic()
        pi_dir = root / "pi"
        _fresh_project(pi_dir)
        path = str(node.parent) + os.pathsep + os.environ.get("PATH", "")
        _run_npm(npm, [PI_PACKAGE], pi_dir, _npm_env(root, path), say)
        pi_seconds = time.monotonic() - t1
        found = _pi_cli(pi_dir)
        if found is None:
            raise PiInstallError(f"{PI_PACKAGE} installed but its CLI was not found under {pi_dir}")
        cli, pkg_dir = found
        node_version, pi_version = _verify(node, cli, root)
        if node_version != NODE_VERSION:
            raise PiInstallError(f"expected Node {NODE_VERSION}, got {node_version}")
        if pi_version != PI_VERSION:
            raise PiInstallError(f"expected Pi {PI_VERSION}, got {pi_version!r}")
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
        (root / _MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        say(f"installed Node {node_version} ({node_seconds:.1f} s) and Pi {pi_version} ({pi_seconds:.1f} s)")
        return installation
