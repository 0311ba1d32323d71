"""A minimal in-memory host for rule tests of the handoff extension (no simulator).

It records what the extension asks of Pi (messages, widgets, notifications) and lets a
test call tools, handlers and commands directly, one rule at a time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import ContextUsage, SessionStartEvent
from pi_continuity_harness.reference.blitz import BlitzHandoff


@dataclass
class FakeUI:
    notes: list[tuple[str, str]] = field(default_factory=list)
    widgets: list[list[str] | None] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)
    selects: list[tuple[str, list[str]]] = field(default_factory=list)

    def notify(self, message: str, notify_type: str = "info") -> None:
        self.notes.append((message, notify_type))

    def set_status(self, key: str, text: str | None) -> None:
        pass

    def set_widget(self, key: str, lines: list[str] | None) -> None:
        self.widgets.append(lines)

    @property
    def theme(self) -> FakeTheme:
        return FakeTheme()

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self.selects.append((title, list(options)))
        return self.answers.pop(0) if self.answers else None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return bool(self.answers.pop(0)) if self.answers else False

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        return self.answers.pop(0) if self.answers else None


@dataclass
class FakeSessionManager:
    session_file: str | None
    session_id: str = "0190-source"
    header: dict[str, Any] = field(default_factory=lambda: {"type": "session"})
    entries: list[dict[str, Any]] = field(default_factory=list)

    def get_session_id(self) -> str:
        return self.session_id

    def get_session_file(self) -> str | None:
        return self.session_file

    def get_header(self) -> dict[str, Any]:
        return self.header

    def get_entries(self) -> list[dict[str, Any]]:
        return self.entries


class FakeCtx:
    def __init__(self, cwd: str, manager: FakeSessionManager, ui: FakeUI) -> None:
        self.cwd = cwd
        self.session_manager = manager
        self.ui = ui
        self.idle = True
        self.percent: float | None = 10.0
        self.new_sessions: list[dict[str, Any]] = []
        self.sent_in_new: list[str] = []

    def is_idle(self) -> bool:
        return self.idle

    def has_pending_messages(self) -> bool:
        return False

    def get_context_usage(self) -> ContextUsage | None:
        if self.percent is None:
            return None
        return ContextUsage(tokens=int(self.percent * 2000), context_window=200_000, percent=self.percent)

    async def wait_for_idle(self) -> None:
        self.idle = True

    async def new_session(
        self, *, parent_session: str | None = None, with_session: Any = None
    ) -> dict[str, Any]:
        self.new_sessions.append({"parent_session": parent_session})
        if with_session is not None:
            outer = self

            class Replaced:
                ui = outer.ui

                async def send_user_message(self, text: str, **_: Any) -> None:
                    outer.sent_in_new.append(text)

            await with_session(Replaced())
        return {"cancelled": False}


class FakePi:
    def __init__(self) -> None:
        self.handlers: dict[str, list[Any]] = {}
        self.commands: dict[str, Any] = {}
        self.command_options: dict[str, dict[str, Any]] = {}
        self.tools: dict[str, Any] = {}
        self.user_messages: list[tuple[str, dict[str, Any]]] = []
        self.messages: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.entries: list[tuple[str, Any]] = []

    def on(self, event: str, handler: Any) -> Any:
        self.handlers.setdefault(event, []).append(handler)
        return lambda: None

    def register_command(self, name: str, handler: Any, **options: Any) -> None:
        self.commands[name] = handler
        self.command_options[name] = options

    def register_tool(self, tool: Any) -> None:
        self.tools[tool.name] = tool

    def send_user_message(self, content: str, **options: Any) -> None:
        self.user_messages.append((content, options))

    def send_message(self, message: dict[str, Any], **options: Any) -> None:
        self.messages.append((message, options))

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self.entries.append((custom_type, data))


@dataclass
class Rig:
    pi: FakePi
    ctx: FakeCtx
    handoff: BlitzHandoff

    def run(self, coro: Any) -> Any:
        return asyncio.run(coro)

    def emit(self, event_type: str, event: Any) -> Any:
        result = None
        for handler in self.pi.handlers.get(event_type, []):
            value = handler(event, self.ctx)
            if asyncio.iscoroutine(value):
                value = asyncio.run(value)
            result = value if value is not None else result
        return result

    def command(self, args: str) -> None:
        asyncio.run(self.pi.commands["sh"](args, self.ctx))

    def tool(self, name: str, params: dict[str, Any] | None = None, *, aborted: bool = False) -> Any:
        controller = AbortController()
        if aborted:
            controller.abort()
        return asyncio.run(self.pi.tools[name].execute("call", params or {}, controller.signal, self.ctx))

    def text(self, result: Any) -> str:
        return "".join(str(b.get("text", "")) for b in result.content)


def make_rig(tmp_path: Any, monkeypatch: Any, *, session_file: str | None = "default") -> Rig:
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    if session_file == "default":
        session_file = str(tmp_path / "sessions" / "source.jsonl")
    pi = FakePi()
    handoff = BlitzHandoff(pi)  # type: ignore[arg-type]
    handoff.register()
    ctx = FakeCtx(str(project), FakeSessionManager(session_file), FakeUI())
    rig = Rig(pi, ctx, handoff)
    rig.emit("session_start", SessionStartEvent(reason="startup"))
    return rig


class FakeTheme:
    """``ctx.ui.theme`` that leaves the text as it is (colours are checked by the features)."""

    def fg(self, color: str, text: str) -> str:
        return text
