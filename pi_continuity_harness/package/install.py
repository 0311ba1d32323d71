"""Install the package as a user does, through Pi's own package manager, and remove it (§20).

Every source gets a fresh workspace (agent dir, project, HOME; :class:`PiEnvironment`: Pi
offline, ``PI_CODING_AGENT_DIR`` inside it), and the steps a user runs:

* ``npm`` — ``pi install npm:<name>@<version>`` (user scope). Pi writes ``{"name":
  "pi-extensions"}`` into ``<agent>/npm`` and runs ``npm install <spec> --prefix <agent>/npm
  --legacy-peer-deps`` (``dist/core/package-manager.js:1646-1675``, ``:1877-1897``): the
  package's ``dependencies`` come from the registry, peers never.
* ``project`` — ``pi install -l npm:...`` with ``--approve`` (project trust,
  ``package-manager-cli.js:903-906``): ``<project>/.pi/settings.json`` and ``.pi/npm``.
* ``local`` — the tarball installed into a directory with npm (Pi runs no npm install for a
  local path, ``package-manager.js:840-846``: a user installs the dependencies), then
  ``pi install <dir>``.
* ``git`` — ``pi install git:github.com/<owner>/<repo>@v<version>`` (the manifest's
  ``repository``), the spec's own §20 command: the package's source tree is committed, tagged and
  cloned bare into the workspace, and git's ``url.<dir>.insteadOf=https://github.com/`` in Pi's
  environment makes Pi's ``git clone`` read it. Pi then runs ``npm install --omit=dev`` in the
  clone (``package-manager.js:1694-1726``), which reaches only the registry on 127.0.0.1 when the
  repository commits a lockfile. Pi accepts no plain local repository: ``git:file:///...`` and
  ``git:/abs`` fall back to a local path (``dist/utils/git.js:129-138``).
* ``one-run`` — ``pi -e npm:<name>@<version>``: nothing in settings; Pi installs into
  ``<agent>/tmp/extensions`` for the run. ``PI_OFFLINE`` is unset for it, because offline Pi
  silently skips a package it has not installed (``package-manager.js:1129-1131``); the registry
  on 127.0.0.1 is still npm's only source.

After each install: the settings list the package (``packages``, ``settings-manager.js:862-867``)
and ``pi list`` names it; a fresh ``pi --mode rpc`` loads it from the installed package —
``get_commands`` lists the command with ``sourceInfo.source`` equal to the installed source (an
``-e`` load would say ``cli``) and ``/<command> status`` answers. Any extension load error makes
RPC Pi exit 1 with ``Failed to load extension`` (``main.js:708-715``, ``:825-830``). Then ``pi
remove`` and the settings no longer list it, no file of the package or of its dependency tree is
left, and HOME is still empty (nothing outside the workspace was written).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.package.model import Check, Status
from pi_continuity_harness.targets.realpi import (
    PiEnvironment,
    PiInstallation,
    PiRpcError,
    PiRpcProcess,
    bytecode_cache_env,
)

__all__ = ["SOURCES", "SourceRun", "Transcript", "gate_source", "python_env"]

#: The install sources the gate runs, in order.
SOURCES = ("npm", "project", "local", "git", "one-run")
_TIMEOUT_S = 600.0
_RPC_TIMEOUT_S = 120.0
#: Nothing listens there: the gate never prompts a model, it only lists and runs commands.
_NO_MODEL = "http://127.0.0.1:9/v1"


@dataclass
class Transcript:
    """One command the gate ran: argv (Pi's own CLI as ``pi``), where, exit status, output, time."""

    step: str
    command: str
    cwd: str
    exit: int | None
    output: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SourceRun:
    """What one install source did: its checks, transcripts and the paths it produced."""

    source: str
    spec: str
    checks: list[Check] = field(default_factory=list)
    transcripts: list[Transcript] = field(default_factory=list)
    #: Paths a reader of the record wants: settings file, installed package directory.
    artifacts: dict[str, str] = field(default_factory=dict)
    #: The command's ``/<command> status`` reply, as Pi showed it.
    status_text: str = ""

    def check(self, name: str, ok: bool | None, file: str, field_: str, detail: str, phase: str) -> None:
        status: Status = "not-run" if ok is None else ("pass" if ok else "fail")
        self.checks.append(Check(f"{name}:{self.source}", status, file, field_, detail, phase))


class _Workspace:
    def __init__(
        self,
        installation: PiInstallation,
        root: Path,
        registry_url: str,
        npm_cache: Path,
        bridge_env: dict[str, str],
    ) -> None:
        env = {
            "npm_config_registry": registry_url,
            "npm_config_cache": str(npm_cache),
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            **bridge_env,
        }
        self.pi = PiEnvironment(installation, _NO_MODEL, root=root, trust=None, extra_env=env)
        self.installation = installation
        self.root = root

    def env(self, *, online: bool = False) -> dict[str, str]:
        env = self.pi.env()
        if online:
            env.pop("PI_OFFLINE", None)
        return env

    def run(
        self, run: SourceRun, step: str, argv: list[str], *, cwd: Path | None = None, pi: bool = True
    ) -> Transcript:
        full = self.installation.argv(*argv) if pi else argv
        where = cwd or self.pi.project_dir
        started = time.monotonic()
        try:
            done = subprocess.run(
                full,
                cwd=where,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=_TIMEOUT_S,
                check=False,
            )
            code: int | None = done.returncode
            output = (done.stdout + done.stderr).strip()
        except subprocess.TimeoutExpired:
            code, output = None, f"timed out after {_TIMEOUT_S:.0f} s"
        transcript = Transcript(
            step,
            " ".join(["pi", *argv] if pi else argv),
            str(where),
            code,
            output,
            round(time.monotonic() - started, 2),
        )
        run.transcripts.append(transcript)
        return transcript

    def settings_packages(self, settings: Path) -> list[str]:
        try:
            data = json.loads(settings.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        entries = data.get("packages", []) if isinstance(data, dict) else []
        return [e if isinstance(e, str) else str(e.get("source")) for e in entries]

    def home_files(self) -> list[str]:
        home = self.pi.home_dir
        return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


def _load(
    ws: _Workspace,
    run: SourceRun,
    command: str,
    expect_source: str,
    extra: list[str],
    *,
    online: bool = False,
) -> None:
    """A fresh RPC Pi: the command is there, from the installed source, and answers ``status``."""
    argv = ["--mode", "rpc", "--no-session", *extra]
    proc = PiRpcProcess(ws.installation.argv(*argv), env=ws.env(online=online), cwd=ws.pi.project_dir)
    started = time.monotonic()
    lines: list[str] = []
    ok = False
    detail = ""
    try:
        proc.start(timeout=_RPC_TIMEOUT_S)
        commands = proc.get_commands(timeout=_RPC_TIMEOUT_S)
        found = next((c for c in commands if c.get("name") == command), None)
        names = sorted(str(c.get("name")) for c in commands)
        lines.append(f"get_commands: {names}")
        if found is None:
            detail = f"/{command} is not among Pi's commands {names}"
        else:
            info = found.get("sourceInfo") or {}
            lines.append(f"/{command} sourceInfo: {json.dumps(info, sort_keys=True)}")
            if info.get("path"):
                run.artifacts["loaded entry"] = str(info["path"])
            if info.get("source") != expect_source:
                detail = f"/{command} was loaded from {info.get('source')!r}, not {expect_source!r}"
            else:
                seq = proc.event_seq
                proc.send({"type": "prompt", "message": f"/{command} status"}, timeout=_RPC_TIMEOUT_S)
                proc.wait_idle(_RPC_TIMEOUT_S, quiet=0.5)
                replies = [
                    str(e.data.get("message"))
                    for e in proc.events_since(seq)
                    if e.type == "extension_ui_request" and e.data.get("message")
                ]
                run.status_text = "\n".join(replies)
                lines.append(f"/{command} status: {run.status_text}")
                ok = bool(replies)
                detail = f"/{command} from {expect_source}" if ok else f"/{command} status showed nothing"
    except (PiRpcError, OSError) as error:
        detail = f"Pi did not start with the package: {error}".strip()
    finally:
        proc.close()
        stderr = proc.stderr_text.strip()
        if stderr:
            lines.append(f"stderr: {stderr[-2000:]}")
            if not ok and "Failed to load extension" in stderr:
                detail = next(line for line in stderr.splitlines() if "Failed to load extension" in line)
    run.transcripts.append(
        Transcript(
            "load",
            " ".join(["pi", *argv]),
            str(ws.pi.project_dir),
            proc.returncode,
            "\n".join(lines),
            round(time.monotonic() - started, 2),
        )
    )
    run.check("load", ok, expect_source, f"/{command}", detail, "load")


def _installed(run: SourceRun, t: Transcript, spec: str) -> bool:
    ok = t.exit == 0 and f"Installed {spec}" in t.output
    run.check(
        "install",
        ok,
        t.command,
        "exit status",
        f"exit {t.exit}" + ("" if ok else f": {t.output[-300:]}"),
        "install",
    )
    return ok


def _github_name(repository: object, name: str) -> tuple[str, str]:
    """``owner``, ``repo`` of the manifest's GitHub repository (else ``local``, the package name)."""
    url = repository.get("url") if isinstance(repository, dict) else repository
    found = re.search(r"github\.com[/:]([^/]+)/([^/#]+?)(?:\.git)?(?:#.*)?$", str(url or ""))
    if found:
        return found.group(1), found.group(2)
    return "local", re.sub(r"[^A-Za-z0-9._-]", "-", name.lstrip("@"))


def _git_repository(
    ws: _Workspace, run: SourceRun, tree: Path | None, owner_dir: Path, repo: str, version: str
) -> Transcript | None:
    """The package's source tree as a bare repository ``<owner_dir>/<repo>.git`` tagged
    ``v<version>`` (what a maintainer pushes), or None when there is no tree."""
    if tree is None:
        return None
    work = ws.root / "repo-src"
    shutil.copytree(tree, work, ignore=shutil.ignore_patterns("node_modules", ".git"))
    owner_dir.mkdir(parents=True, exist_ok=True)
    git = [
        "git",
        "-c",
        "user.name=release-gate",
        "-c",
        "user.email=release-gate@127.0.0.1",
        "-c",
        "init.defaultBranch=main",
    ]
    script = [
        [*git, "init", "-q"],
        [*git, "add", "-A"],
        [*git, "commit", "-q", "-m", f"v{version}"],
        [*git, "tag", f"v{version}"],
        [*git, "clone", "-q", "--bare", str(work), str(owner_dir / f"{repo}.git")],
    ]
    last: Transcript | None = None
    for argv in script:
        last = ws.run(run, "repository", argv, cwd=work, pi=False)
        if last.exit != 0:
            return None
    (owner_dir / repo).symlink_to(f"{repo}.git")
    return last


def _node_modules_left(prefix: Path) -> list[str]:
    modules = prefix / "node_modules"
    if not modules.is_dir():
        return []
    return sorted(p.name for p in modules.iterdir() if p.name != ".package-lock.json")


def gate_source(
    source: str,
    installation: PiInstallation,
    root: Path,
    *,
    name: str,
    version: str,
    tarball: Path,
    registry_url: str,
    npm_cache: Path,
    bridge_env: dict[str, str],
    command: str,
    tree: Path | None = None,
    repository: object = None,
    log: Callable[[str], None] = lambda _line: None,
) -> SourceRun:
    """Install from ``source`` (one of :data:`SOURCES`), check settings and load, remove, check.
    ``tree`` is the package's source tree (a git source is a repository of it)."""
    git_env: dict[str, str] = {}
    if source == "git":
        owner, repo = _github_name(repository, name)
        served = root / "git-server"
        git_env = {
            # git's URL rewrite: Pi clones https://github.com/<owner>/<repo> (utils/git.js:136-139)
            # and git reads this local repository instead; nothing listens, nothing leaves.
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"url.file://{served}/.insteadOf",
            "GIT_CONFIG_VALUE_0": "https://github.com/",
            "GIT_TERMINAL_PROMPT": "0",
        }
    ws = _Workspace(installation, root, registry_url, npm_cache, {**bridge_env, **git_env})
    spec = f"npm:{name}@{version}"
    run = SourceRun(source, spec)
    agent, project = ws.pi.agent_dir, ws.pi.project_dir
    if source == "one-run":
        run.spec = f"-e {spec}"
        log(f"{source}: pi -e {spec}")
        _load(ws, run, command, "cli", ["-e", spec], online=True)
        cache = agent / "tmp" / "extensions"
        run.artifacts["one-run cache"] = str(cache)
        run.check(
            "settings",
            ws.settings_packages(agent / "settings.json") == [],
            str(agent / "settings.json"),
            "packages",
            "a one-run load adds nothing to the settings",
            "install",
        )
    else:
        if source == "npm":
            settings, argv, remove = agent / "settings.json", ["install", spec], ["remove", f"npm:{name}"]
            installed_dir = agent / "npm" / "node_modules" / name
            prefix: Path | None = agent / "npm"
            listed, expect = spec, spec
        elif source == "project":
            settings = project / ".pi" / "settings.json"
            argv, remove = ["install", "-l", spec, "--approve"], ["remove", "-l", f"npm:{name}", "--approve"]
            installed_dir = project / ".pi" / "npm" / "node_modules" / name
            prefix = project / ".pi" / "npm"
            listed, expect = spec, spec
        elif source == "git":
            git_spec = f"git:github.com/{owner}/{repo}@v{version}"
            repo_t = _git_repository(ws, run, tree, served / owner, repo, version)
            settings, argv, remove = (
                agent / "settings.json",
                ["install", git_spec],
                ["remove", git_spec.rsplit("@", 1)[0]],
            )
            installed_dir = agent / "git" / "github.com" / owner / repo
            prefix = installed_dir
            listed, expect, spec = git_spec, git_spec, git_spec
            run.spec = git_spec
            if repo_t is None:
                prefix = None
        else:  # local: the user unpacks and installs the dependencies; Pi installs none for a path
            checkout = root / "checkout"
            checkout.mkdir()
            (checkout / "package.json").write_text(
                '{"name": "local-checkout", "private": true}\n', encoding="utf-8"
            )
            deps = ws.run(
                run,
                "dependencies",
                ["npm", "install", "--legacy-peer-deps", "--ignore-scripts", str(tarball)],
                cwd=checkout,
                pi=False,
            )
            installed_dir = checkout / "node_modules" / name
            run.check(
                "dependencies",
                deps.exit == 0 and installed_dir.is_dir(),
                deps.command,
                "exit status",
                f"exit {deps.exit}",
                "install",
            )
            settings, prefix = agent / "settings.json", None
            argv, remove = ["install", str(installed_dir)], ["remove", str(installed_dir)]
            # Pi stores a local path relative to the settings file (package-manager.js:1301-1310),
            # and that stored form is the loaded extension's ``sourceInfo.source``.
            listed = os.path.relpath(installed_dir, agent)
            expect = listed
            spec = str(installed_dir)
        log(f"{source}: pi {' '.join(argv)}")
        t = ws.run(run, "install", argv)
        run.artifacts["settings"] = str(settings)
        run.artifacts["installed package"] = str(installed_dir)
        if _installed(run, t, spec):
            packages = ws.settings_packages(settings)
            listing = ws.run(run, "list", ["list", "--approve"] if source == "project" else ["list"])
            run.check(
                "settings",
                listed in packages and (spec in listing.output or listed in listing.output),
                str(settings),
                "packages",
                f"packages: {packages}",
                "install",
            )
            if prefix is not None:
                # A git clone's dependencies: ``npm install --omit=dev`` in the clone
                # (package-manager.js:1694-1726); npm sources: ``--prefix`` (:1646-1675).
                run.check(
                    "dependencies",
                    installed_dir.is_dir() and not (prefix / "node_modules" / "@earendil-works").exists(),
                    str(prefix / "node_modules"),
                    "node_modules",
                    f"installed: {_node_modules_left(prefix)} (host peers are never installed)",
                    "install",
                )
            _load(ws, run, command, expect, ["--approve"] if source == "project" else [])
            log(f"{source}: pi {' '.join(remove)}")
            gone = ws.run(run, "remove", remove)
            after = ws.settings_packages(settings)
            if source == "git":
                left = [str(installed_dir)] if installed_dir.exists() else []
            else:
                left = _node_modules_left(prefix) if prefix is not None else []
            run.check(
                "remove",
                gone.exit == 0 and listed not in after and not left,
                gone.command,
                "packages",
                f"exit {gone.exit}; packages after: {after}; left behind: {left}",
                "remove",
            )
        else:
            for step in ("settings", "load", "remove"):
                run.check(step, None, str(settings), "", "the install failed", step)
    home = ws.home_files()
    run.check(
        "home-untouched",
        not home,
        str(ws.pi.home_dir),
        "HOME",
        f"files: {home}" if home else "empty",
        "remove",
    )
    return run


def python_env(installation: PiInstallation) -> dict[str, str]:
    """What the bridge of a package needs to find Python and the harness (as the ``-e`` wrappers),
    its compiled modules kept in the harness's cache (:func:`bytecode_cache_env`: none beside
    the package's files)."""
    return {
        "PI_HARNESS_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        **bytecode_cache_env(installation.cache_dir),
    }
