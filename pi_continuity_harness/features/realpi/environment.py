"""An isolated, offline workspace for one real Pi 1.6 process.

Layout (``root``)::

    agent/        PI_CODING_AGENT_DIR: settings.json, models.json (provider "fake")
    project/      Pi's cwd; project settings go to project/.pi/settings.json
    sessions/     PI_CODING_AGENT_SESSION_DIR (session files sit directly in it)
    home/         HOME (nothing touches the real home; ~/.pi is never read or written)
    (TMPDIR is <install cache>/tmp, shared, so Node's compile cache and jiti's cache stay warm)
    observer.jsonl  the observer extension's log (PI_HARNESS_OBSERVER_LOG)

Recognising Pi's own (agent) requests on the fake server: Pi's agent loop always sends its
tool definitions (``read``, ``bash``, ``edit``, ``write`` by default, ``dist/core/system-prompt.js``),
while the default summarizer (``completeSummarization``) and an extension's
``modelRegistry.complete()`` send none unless they pass tools themselves. So "has tools" marks an
``agent`` request, and that needs no change to Pi's prompt. For runs without tools (``--no-tools``)
set ``agent_system_marker``: it is appended to the agent system prompt with
``--append-system-prompt`` (rendered as an ``<addendum>`` section) and the fake server is told
the same marker. The marker is off by default because it changes the system prompt that
extensions see.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from .install import PiInstallation, cache_tmp_dir
from .rpc_client import PiRpcProcess

__all__ = [
    "OBSERVER_PATH",
    "FakeModel",
    "PiEnvironment",
    "default_agent_settings",
]

#: The observer extension shipped with this package (load it first: see observer.ts).
OBSERVER_PATH = Path(__file__).with_name("observer.ts")

Trust = Literal["always", "never", "ask"]


@dataclass(frozen=True)
class FakeModel:
    """One model of the fake provider."""

    id: str
    context_window: int = 20000
    max_tokens: int = 1000
    reasoning: bool = False
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "reasoning": self.reasoning,
            "input": ["text"],
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "compat": {"supportsReasoningEffort": self.reasoning},
        }


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


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


class PiEnvironment:
    """An isolated Pi workspace wired to a fake model server.

    ``models``: :class:`FakeModel` values or ``(id, context_window, max_tokens, reasoning)``
    tuples; the first is the default unless ``default_model`` names another. ``trust`` becomes
    ``defaultProjectTrust`` (None: not set, so project settings are ignored unless Pi runs
    with ``--approve``). ``project_settings`` goes to ``project/.pi/settings.json``;
    ``agent_settings`` is deep-merged into the agent settings.
    """

    def __init__(
        self,
        installation: PiInstallation,
        base_url: str,
        models: Sequence[FakeModel | tuple[str, int, int, bool]] = (FakeModel("fake-model"),),
        *,
        root: Path | None = None,
        default_model: str | None = None,
        trust: Trust | None = "always",
        project_settings: Mapping[str, Any] | None = None,
        agent_settings: Mapping[str, Any] | None = None,
        provider: str = "fake",
        api_key: str = "fake-key",
        agent_system_marker: str | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.installation = installation
        self.base_url = base_url
        self.models = [m if isinstance(m, FakeModel) else FakeModel(*m) for m in models]
        if not self.models:
            raise ValueError("at least one model is needed")
        self.provider = provider
        self.api_key = api_key
        self.default_model = default_model or self.models[0].id
        if self.default_model not in {m.id for m in self.models}:
            raise ValueError(f"default model {self.default_model!r} is not among the models")
        self.trust = trust
        self.agent_system_marker = agent_system_marker
        self.extra_env = dict(extra_env or {})
        self._owns_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="pi-env-")) if root is None else Path(root)
        self.agent_dir = self.root / "agent"
        self.project_dir = self.root / "project"
        self.sessions_dir = self.root / "sessions"
        self.home_dir = self.root / "home"
        self.observer_log = self.root / "observer.jsonl"
        #: The bridge's count of requests Python is still handling (see bridge.ts).
        self.bridge_state = self.root / "bridge-busy"
        for directory in (self.agent_dir, self.project_dir, self.sessions_dir, self.home_dir):
            directory.mkdir(parents=True, exist_ok=True)
        settings = default_agent_settings(provider, self.default_model, trust)
        self.write_agent_settings(_deep_merge(settings, agent_settings or {}))
        self.write_models()
        if project_settings is not None:
            self.write_project_settings(project_settings)

    # files -------------------------------------------------------------------

    @property
    def agent_settings_path(self) -> Path:
        return self.agent_dir / "settings.json"

    @property
    def project_settings_path(self) -> Path:
        return self.project_dir / ".pi" / "settings.json"

    def write_agent_settings(self, settings: Mapping[str, Any]) -> None:
        _write_json(self.agent_settings_path, dict(settings))

    def write_project_settings(self, settings: Mapping[str, Any]) -> None:
        _write_json(self.project_settings_path, dict(settings))

    def models_json(self) -> dict[str, Any]:
        return {
            "providers": {
                self.provider: {
                    "baseUrl": self.base_url,
                    "api": "openai-completions",
                    "apiKey": self.api_key,
                    "compat": {
                        "supportsStore": False,
                        "supportsDeveloperRole": False,
                        "supportsReasoningEffort": False,
                        "maxTokensField": "max_tokens",
                    },
                    "models": [m.to_json() for m in self.models],
                }
            }
        }

    def write_models(self, base_url: str | None = None) -> None:
        """(Re)write models.json, e.g. after the fake server moved to another port."""
        if base_url is not None:
            self.base_url = base_url
        _write_json(self.agent_dir / "models.json", self.models_json())

    def session_files(self) -> list[Path]:
        return sorted(self.sessions_dir.glob("*.jsonl"))

    def bridge_busy(self) -> int:
        """Requests the Python bridge is still handling (0 without a bridge)."""
        try:
            return int(self.bridge_state.read_text(encoding="utf-8").strip() or 0)
        except (OSError, ValueError):
            return 0

    def observer_events(self) -> list[dict[str, Any]]:
        """The observer's log lines so far (across Pi processes and reloads)."""
        if not self.observer_log.exists():
            return []
        lines = self.observer_log.read_text(encoding="utf-8").splitlines()
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
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "PI_HARNESS_OBSERVER_LOG": str(self.observer_log),
            "PI_HARNESS_BRIDGE_STATE": str(self.bridge_state),
        }
        env.update(self.extra_env)
        return env

    def argv(
        self,
        extensions: Sequence[str | Path] = (),
        *,
        model: str | None = None,
        approve: bool | None = None,
        session: str | Path | None = None,
        observer: bool = True,
        extra_args: Sequence[str] = (),
    ) -> list[str]:
        """``node pi-cli --mode rpc --model fake/<id> -e observer.ts [-e ext...] [...]``.

        The observer is loaded first (handlers run in load order; see observer.ts).
        """
        model_id = model or self.default_model
        args = ["--mode", "rpc", "--model", f"{self.provider}/{model_id}"]
        if observer:
            args += ["-e", str(OBSERVER_PATH)]
        for ext in extensions:
            args += ["-e", str(ext)]
        if approve is True:
            args.append("--approve")
        elif approve is False:
            args.append("--no-approve")
        if session is not None:
            args += ["--session", str(session)]
        if self.agent_system_marker:
            args += ["--append-system-prompt", self.agent_system_marker]
        args += list(extra_args)
        return self.installation.argv(*args)

    def process(
        self,
        extensions: Sequence[str | Path] = (),
        *,
        model: str | None = None,
        approve: bool | None = None,
        session: str | Path | None = None,
        observer: bool = True,
        extra_args: Sequence[str] = (),
        default_timeout: float = 30.0,
    ) -> PiRpcProcess:
        """A not yet started :class:`PiRpcProcess` for this workspace (call ``start()``)."""
        return PiRpcProcess(
            self.argv(
                extensions,
                model=model,
                approve=approve,
                session=session,
                observer=observer,
                extra_args=extra_args,
            ),
            env=self.env(),
            cwd=self.project_dir,
            default_timeout=default_timeout,
        )

    def start_pi(
        self,
        extensions: Sequence[str | Path] = (),
        *,
        model: str | None = None,
        approve: bool | None = None,
        session: str | Path | None = None,
        observer: bool = True,
        extra_args: Sequence[str] = (),
        default_timeout: float = 30.0,
        start_timeout: float | None = None,
    ) -> PiRpcProcess:
        """Start Pi and wait for its first ``get_state`` reply."""
        proc = self.process(
            extensions,
            model=model,
            approve=approve,
            session=session,
            observer=observer,
            extra_args=extra_args,
            default_timeout=default_timeout,
        )
        return proc.start(timeout=start_timeout)

    # cleanup -----------------------------------------------------------------

    def cleanup(self) -> None:
        """Remove the workspace if this object created it."""
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PiEnvironment:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()
