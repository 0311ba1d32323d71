"""A package registry on 127.0.0.1 for the gate: Verdaccio, pinned, installed from the npm registry.

Pi has no registry setting of its own: ``pi install npm:...`` spawns ``npm install <spec>
--prefix <agentDir>/npm --legacy-peer-deps`` with its own environment
(``dist/core/package-manager.js:1589-1599``, ``:1646-1675``, ``:2316-2323``), so npm's
``npm_config_registry`` decides where the package comes from. The gate publishes the packed
tarball (and the dependencies it names with ``--with-package``) to a Verdaccio it starts on
``127.0.0.1:<free port>`` with no uplink, so Pi's npm install of the package and its
dependencies runs exactly as for a published package and reaches nothing else.

Verdaccio is installed once into ``<cache>/verdaccio`` (``npm install --save-exact
verdaccio@6.10.4``: 321 packages, 65 MB, about 26 s cold) and stopped (SIGTERM to its process
group, then SIGKILL) in ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pi_continuity_harness.package.model import PackageError
from pi_continuity_harness.targets.realpi import PiInstallation

__all__ = ["VERDACCIO_VERSION", "Registry", "ensure_verdaccio", "publish", "running_registry"]

#: The pinned Verdaccio (``engines.node >=22``: it runs on the harness's Node 22).
VERDACCIO_VERSION = "6.10.4"
_START_TIMEOUT_S = 120.0
_NPM_TIMEOUT_S = 900.0


def _verdaccio_dir(installation: PiInstallation) -> Path:
    return installation.cache_dir / "verdaccio"


def _verdaccio_bin(installation: PiInstallation) -> Path:
    return _verdaccio_dir(installation) / "node_modules" / "verdaccio" / "bin" / "verdaccio"


def _installed_version(installation: PiInstallation) -> str | None:
    manifest = _verdaccio_dir(installation) / "node_modules" / "verdaccio" / "package.json"
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))
    except (OSError, ValueError):
        return None


def ensure_verdaccio(installation: PiInstallation, env: dict[str, str]) -> Path:
    """The Verdaccio bin script, installing the pinned version first when it is not there."""
    if _installed_version(installation) == VERDACCIO_VERSION:
        return _verdaccio_bin(installation)
    directory = _verdaccio_dir(installation)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "package.json").write_text('{"name": "pch-verdaccio", "private": true}\n', encoding="utf-8")
    argv = ["npm", "install", "--save-exact", "--no-audit", "--no-fund", f"verdaccio@{VERDACCIO_VERSION}"]
    try:
        done = subprocess.run(
            argv, cwd=directory, env=env, capture_output=True, text=True, check=False, timeout=_NPM_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PackageError(f"installing verdaccio@{VERDACCIO_VERSION}: {error}") from None
    if done.returncode != 0 or _installed_version(installation) != VERDACCIO_VERSION:
        raise PackageError(f"installing verdaccio@{VERDACCIO_VERSION} failed:\n{done.stderr.strip()[-800:]}")
    return _verdaccio_bin(installation)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_CONFIG = """\
storage: {storage}
auth:
  htpasswd:
    file: {htpasswd}
    max_users: 10
packages:
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
server:
  keepAliveTimeout: 60
middlewares:
  audit:
    enabled: false
web:
  enable: false
log: {{ type: file, path: {log}, level: warn }}
"""


@dataclass
class Registry:
    """A running Verdaccio: its URL, the npmrc holding a publish token, its process."""

    url: str
    npmrc: Path
    directory: Path
    process: subprocess.Popen[bytes]
    start_s: float

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def _request(url: str, *, method: str = "GET", body: bytes | None = None) -> bytes:
    request = urllib.request.Request(
        url, data=body, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        data: bytes = response.read()
        return data


@contextlib.contextmanager
def running_registry(
    installation: PiInstallation, directory: Path, env: dict[str, str]
) -> Iterator[Registry]:
    """Verdaccio on 127.0.0.1 with its storage in ``directory``, stopped when the block ends."""
    binary = ensure_verdaccio(installation, env)
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.yaml"
    config.write_text(
        _CONFIG.format(
            storage=directory / "storage", htpasswd=directory / "htpasswd", log=directory / "verdaccio.log"
        ),
        encoding="utf-8",
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    started = time.monotonic()
    log = (directory / "stdout.log").open("wb")
    process = subprocess.Popen(
        [str(installation.node_path), str(binary), "--config", str(config), "--listen", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    log.close()
    registry = Registry(url, directory / "npmrc", directory, process, 0.0)
    try:
        while True:
            if process.poll() is not None:
                raise PackageError(
                    f"verdaccio exited ({process.returncode}):\n"
                    + (directory / "stdout.log").read_text(encoding="utf-8", errors="replace")[-800:]
                )
            try:
                _request(url + "-/ping")
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() - started > _START_TIMEOUT_S:
                    raise PackageError(
                        f"verdaccio did not answer on {url} within {_START_TIMEOUT_S:.0f} s"
                    ) from None
                time.sleep(0.1)
        registry.start_s = round(time.monotonic() - started, 2)
        user = json.dumps({"name": "gate", "password": "gate-password-1"}).encode()
        token = json.loads(_request(url + "-/user/org.couchdb.user:gate", method="PUT", body=user))["token"]
        registry.npmrc.write_text(
            f"registry={url}\n//127.0.0.1:{port}/:_authToken={token}\n", encoding="utf-8"
        )
        yield registry
    finally:
        registry.stop()


def publish(registry: Registry, tarball: Path, env: dict[str, str]) -> str:
    """``npm publish <tarball>`` to the registry (no lifecycle script runs); npm's output."""
    argv = ["npm", "publish", str(tarball), "--userconfig", str(registry.npmrc), "--ignore-scripts"]
    argv += ["--registry", registry.url]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=_NPM_TIMEOUT_S)
    if done.returncode != 0:
        raise PackageError(f"npm publish {tarball.name} failed:\n{done.stderr.strip()[-800:]}")
    return done.stdout + done.stderr
