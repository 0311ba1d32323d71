"""An isolated, offline workspace for one real Pi 1.6 process.

Layout (``root``)::

    agent/        PI_CODING_AGENT_DIR: settings.json, models.json (provider "fake")
    project/      Pi's cwd; project settings go to project/.pi/settings.json
    sessions/     PI_CODING_AGENT_SESSION_DIR (session files sit directly in it)
    home/         HOME (nothing touches the real home; ~/.pi is never read or written)
    pi-package    a symbolic link to the installed package, Pi's PI_PACKAGE_DIR: the system
                  prompt names <root>/pi-package three times, as the simulator names its own
                  (scenario/layout.py), instead of the install cache's path
    (TMPDIR is <install cache>/tmp, shared, so Node's compile cache and jiti's cache stay warm)
    observer.jsonl  the observer extension's log (PI_HARNESS_OBSERVER_LOG)

Recognising Pi's own (agent) requests on the fake server: Pi's agent loop always sends its
tool definitions (``read``, ``bash``, ``edit``, ``write`` by default, ``dist/core/system-prompt.js``),
while the default summarizer (``completeSummarization``) and an extension's
``modelRegistry.complete()`` send none unless they pass tools themselves. So "has tools" marks an
``agent`` request, and that needs no change to Pi's prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.scenario.layout import pi_package_path
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.scenario.workspace import write_json
from pi_continuity_harness.targets.realpi.install import PiInstallation, cache_tmp_dir
from pi_continuity_harness.targets.realpi.rpc_client import PiRpcProcess

__all__ = [
    "FAKE_API_KEY",
    "OBSERVER_PATH",
    "FakeModel",
    "PiEnvironment",
    "default_agent_settings",
    "provider_json",
]

#: The observer extension shipped with this package (load it first: see observer.ts).
OBSERVER_PATH = Path(__file__).with_name("observer.ts")
#: The fake providers' API key (the fake server checks none).
FAKE_API_KEY = "fake-key"

Trust = Literal["always", "never", "ask"]


@dataclass(frozen=True)
class FakeModel:
    """One model of the fake provider."""

    id: str
    context_window: int = 20000
    max_tokens: int = 1000
    reasoning: bool = False
    name: str | None = None
    input: tuple[str, ...] = ("text",)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "compat": {"supportsReasoningEffort": self.reasoning},
        }


def provider_json(
    base_url: str, models: Iterable[FakeModel], api_key: str | None = FAKE_API_KEY
) -> dict[str, Any]:
    """One ``models.json`` provider served by the fake server (``api_key`` None: no auth)."""
    provider: dict[str, Any] = {"baseUrl": base_url, "api": "openai-completions"}
    if api_key is not None:
        provider["apiKey"] = api_key
    provider["compat"] = {
        "supportsStore": False,
        "supportsDeveloperRole": False,
        "supportsReasoningEffort": False,
        "maxTokensField": "max_tokens",
    }
    provider["models"] = [m.to_json() for m in models]
    return provider


def default_agent_settings(provider: str, model_id: str, trust: Trust | None) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "defaultProvider": provider,
        "defaultModel": model_id,
        "defaultThinkingLevel": "off",
        "quietStartup": True,
        "enableInstallTelemetry": False,
        "retry": {"enabled": True, "maxRetries": 1, "baseDelayMs": 100},
    }
    if trust is not None:
        settings["defaultProjectTrust"] = trust
    return settings


class PiEnvironment:
    """An isolated Pi workspace under ``root`` wired to a fake model server.

    ``models`` are the provider ``fake``'s; the first is the default. ``trust`` becomes
    ``defaultProjectTrust`` (None: not set, so project settings are ignored unless Pi runs
    with ``--approve``). ``project_settings`` goes to ``project/.pi/settings.json``;
    ``extra_env`` is added to Pi's environment.
    """

    provider = "fake"

    def __init__(
        self,
        installation: PiInstallation,
        base_url: str,
        models: Sequence[FakeModel] = (FakeModel("fake-model"),),
        *,
        root: Path,
        trust: Trust | None = "always",
        project_settings: Mapping[str, Any] | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        if not models:
            raise ValueError("at least one model is needed")
        self.installation = installation
        self.default_model = models[0].id
        self.extra_env = dict(extra_env or {})
        self.root = Path(root)
        self.agent_dir = self.root / "agent"
        self.project_dir = self.root / "project"
        self.sessions_dir = self.root / "sessions"
        self.home_dir = self.root / "home"
        #: ``PI_PACKAGE_DIR``: Pi's ``getPackageDir()`` answers it (``dist/config.js:334-345``).
        self.package_link = Path(pi_package_path(str(self.root)))
        self.observer_log = self.root / "observer.jsonl"
        #: The bridge's count of requests Python is still handling (see bridge.ts).
        self.bridge_state = self.root / "bridge-busy"
        for directory in (self.agent_dir, self.project_dir, self.sessions_dir, self.home_dir):
            directory.mkdir(parents=True, exist_ok=True)
        if self.package_link.is_symlink():
            self.package_link.unlink()
        self.package_link.symlink_to(installation.pi_package_dir, target_is_directory=True)
        write_json(
            self.agent_dir / "settings.json", default_agent_settings(self.provider, self.default_model, trust)
        )
        write_json(
            self.agent_dir / "models.json", {"providers": {self.provider: provider_json(base_url, models)}}
        )
        if project_settings is not None:
            write_json(self.project_dir / CONFIG_DIR_NAME / "settings.json", dict(project_settings))

    # observation -------------------------------------------------------------

    def bridge_busy(self) -> int:
        """Requests the Python bridges are still handling (0 without a bridge): the sum over the
        slots' files ``bridge-busy.<slot>`` (each bridged extension has its own Python process and
        count, ``bridge.ts`` ``publishBusy``)."""
        total = 0
        for path in sorted(self.bridge_state.parent.glob(self.bridge_state.name + ".*")):
            if path.name.endswith(".tmp"):
                continue
            try:
                total += int(path.read_text(encoding="utf-8").strip() or 0)
            except (OSError, ValueError):
                continue
        return total

    def observer_events(self) -> list[dict[str, Any]]:
        """The observer's log lines so far (across Pi processes and reloads)."""
        if not self.observer_log.exists():
            return []
        lines = jsonl_lines(self.observer_log.read_text(encoding="utf-8"))
        return [json.loads(line) for line in lines if line.strip()]

    # process -----------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """A clean environment: Node 22 first on PATH, HOME inside the workspace, offline."""
        env = {
            "PATH": self.installation.env_path(os.environ.get("PATH", "/usr/bin:/bin")),
            "HOME": str(self.home_dir),
            "USER": os.environ.get("USER", "pi-harness"),
            "LANG": "C.UTF-8",
            "TMPDIR": str(cache_tmp_dir(self.installation.cache_dir)),
            "NO_COLOR": "1",
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_CODING_AGENT_SESSION_DIR": str(self.sessions_dir),
            "PI_PACKAGE_DIR": str(self.package_link),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "PI_HARNESS_OBSERVER_LOG": str(self.observer_log),
            # The observer's path: the bridge leaves its commands out of getCommands (bridge.ts).
            "PI_HARNESS_OBSERVER": str(OBSERVER_PATH),
            "PI_HARNESS_BRIDGE_STATE": str(self.bridge_state),
        }
        env.update(self.extra_env)
        return env

    def process(self, extensions: Sequence[str | Path] = ()) -> PiRpcProcess:
        """A not yet started :class:`PiRpcProcess` (call ``start()``) running
        ``node pi-cli --mode rpc --model fake/<default> -e observer.ts [-e ext...]``.

        The observer is loaded first (handlers run in load order; see observer.ts).
        """
        args = ["--mode", "rpc", "--model", f"{self.provider}/{self.default_model}", "-e", str(OBSERVER_PATH)]
        for ext in extensions:
            args += ["-e", str(ext)]
        return PiRpcProcess(self.installation.argv(*args), env=self.env(), cwd=self.project_dir)
