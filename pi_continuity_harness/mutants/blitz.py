"""Mutants of the pi-blitz-handoff reference: each breaks exactly one rule, each must be killed.

Rules cite the reference document by section: §1 requirements, §2 public interface, §3
transfer sequence (§3.1-§3.7, its numbered steps), §4 deferral, reminder and emergency, §5
status, cancellation and recovery, §6 settings, §7 managed paths, templates and projects.

Each mutant is a subclass of :class:`~pi_continuity_harness.reference.blitz.BlitzHandoff` that
overrides one method (nothing is patched globally, so mutants can run in one process). Its
factory is the classmethod ``<Class>.extension`` (``--extension
pi_continuity_harness.mutants.blitz:FinishAcceptsForeignId.extension``), which declares
``pi_continuity_system = "pi-blitz-handoff"`` so the suite runs the blitz handoff features
against it. :data:`BLITZ_MUTANTS` maps each mutant's name to the rule it breaks, how, and the
spec that loads it; ``catalogue`` adds them to the kill matrix.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_continuity_harness.api import ExtensionAPI
from pi_continuity_harness.reference.blitz import BlitzHandoff
from pi_continuity_harness.reference.blitz.atomic_io import remove_exact
from pi_continuity_harness.reference.blitz.state import BlitzRequest, Route

__all__ = ["BLITZ_MUTANTS", "BlitzMutant", "blitz_mutant_names"]

SYSTEM = "pi-blitz-handoff"


@dataclass(frozen=True)
class BlitzMutant:
    name: str
    rule: str
    how: str
    factory: Callable[[ExtensionAPI], None]
    #: The ``--extension`` value that loads it in a fresh process.
    spec: str
    #: The ids of the catalogue rules it breaks (``pi_continuity_harness.rules``, ``blitz.yaml``).
    rules: tuple[str, ...] = ()


BLITZ_MUTANTS: dict[str, BlitzMutant] = {}


def blitz_mutant_names() -> list[str]:
    return list(BLITZ_MUTANTS)


class _Mutant(BlitzHandoff):
    """Base of every mutant: :meth:`extension` is the mutant's factory."""

    @classmethod
    def extension(cls, pi: ExtensionAPI) -> None:
        """The extension factory of this mutant (what the reference's ``extension`` is to it)."""
        cls(pi).register()


# A bound classmethod reads attributes of its function: every ``<Mutant>.extension`` declares the system.
_Mutant.extension.__func__.pi_continuity_system = SYSTEM  # type: ignore[attr-defined]


def _mutant(rule: str, how: str, rules: tuple[str, ...] = ()) -> Callable[[type[_Mutant]], type[_Mutant]]:
    def register(cls: type[_Mutant]) -> type[_Mutant]:
        name = _snake(cls.__name__)
        spec = f"{__name__}:{cls.__qualname__}.extension"
        BLITZ_MUTANTS[name] = BlitzMutant(name, rule, how, cls.extension, spec, rules)
        return cls

    return register


def _snake(name: str) -> str:
    out = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
    return "blitz_" + out


@_mutant("§3.5 Finish only with the exact returned ID", "accepts any ID")
class FinishAcceptsForeignId(_Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.finish_id is not None and not request.submitted:
            params = {**params, "id": request.finish_id}
        return await super().tool_finish(call_id, params, signal, ctx)


@_mutant("§3.5 Finish once; a duplicate Finish is rejected", "a second Finish is accepted again")
class FinishAcceptedTwice(_Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.phase == "finished" and params.get("id") == request.finish_id:
            request.phase = "writing"
        return await super().tool_finish(call_id, params, signal, ctx)


@_mutant(
    "§3.1 one active request; a second start is rejected without replacing it",
    "a second start replaces the first",
)
class SecondRequestReplacesFirst(_Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        self.request = None
        return super().start_request(ctx, route)


@_mutant(
    "§3.3 a repeated GET returns the same snapshot, path and Finish ID", "each GET issues a new Finish ID"
)
class GetIssuesNewIds(_Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.finish_id is not None:
            old = request.finish_id
            request.finish_id = str(uuid.uuid4())
            text = result.content[0]["text"].replace(old, request.finish_id)
            result = type(result)(
                content=[{"type": "text", "text": text}], details=result.details, is_error=result.is_error
            )
        return result


@_mutant(
    "§3.4 captured prompts are kept unchanged and in order", "the recovery snapshot reverses the prompts"
)
class DeferredPromptsReversed(_Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.reverse()
            request.capture.flush()
        return result


@_mutant("§3.4 captured prompts are kept in memory and one recovery file", "captured prompts are dropped")
class DeferredPromptsDropped(_Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        result = super().on_input(event, ctx)
        request = self.request
        if result is not None and request is not None and request.capture is not None:
            request.capture.prompts.clear()
            if request.capture.path:
                remove_exact(request.capture.path)
        return result


@_mutant("§5 a cancel retains the recovery file for explicit action", "cancel deletes the recovery file")
class CancelDeletesRecovery(_Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        await super().cancel(ctx)
        if request is not None and request.capture is not None and request.capture.path:
            remove_exact(request.capture.path)


@_mutant("§5 a cancel removes only the exact owned reservation", "cancel removes whatever file is there")
class CancelRemovesForeignFile(_Mutant):
    async def cancel(self, ctx: Any) -> None:
        request = self.request
        if request is not None:
            request.reservation_owned = True
        await super().cancel(ctx)


@_mutant(
    "§3.7 the extension never deletes the dossier; the receiver does", "the dossier is deleted at cutover"
)
class DossierDeletedAtCutover(_Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        dossier = request.dossier if request is not None else None
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            if dossier and os.path.exists(dossier):
                os.remove(dossier)
            return await original(**options)

        await super().cutover(token, _with_new_session(ctx, new_session))


@_mutant("§3.6 the receiver is normally parent-linked to the source", "the new session has no parent link")
class NoParentLink(_Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            return await original(**{**options, "parent_session": None})

        await super().cutover(token, _with_new_session(ctx, new_session))


def _with_new_session(ctx: Any, new_session: Callable[..., Any]) -> Any:
    """``ctx`` with its ``new_session`` replaced (everything else passes through)."""

    class _Ctx:
        def __getattr__(self, name: str) -> Any:
            return new_session if name == "new_session" else getattr(ctx, name)

    return _Ctx()


@_mutant("§7 at the chain limit the next transfer starts an independent master", "the chain limit is ignored")
class ChainLimitIgnored(_Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.settings = self.settings.model_copy(update={"max_session_chain_length": 10_000})


@_mutant("§4 one visible reminder after readinessRetrySeconds", "the reminder repeats at every boundary")
class ReminderRepeats(_Mutant):
    def check_reminder(self, ctx: Any) -> None:
        request = self.request
        super().check_reminder(ctx)
        if request is not None and request.reminded and not request.escalated and not request.submitted:
            request.reminded = False


@_mutant("§4 one fixed emergency instruction at 90% with an unsubmitted handoff", "no emergency instruction")
class NoEmergency(_Mutant):
    def on_turn_end(self, event: Any, ctx: Any) -> None:
        if self.request is not None:
            self.request.escalated = True
        super().on_turn_end(event, ctx)


@_mutant(
    "§4 automatic initiation: one final attempt at the critical level, none after",
    "the automatic budget never runs out",
)
class AutomaticBudgetUnlimited(_Mutant):
    def spend_budget(self, attempts: int) -> None:
        super().spend_budget(0)


@_mutant("§4 automatic initiation is off by default", "automatic initiation is on by default")
class AutomaticOnByDefault(_Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not self.settings.automatic_session_handoff:
            self.settings = self.settings.model_copy(update={"automatic_session_handoff": True})


@_mutant("§6 invalid settings input keeps the prior value with a hint", "an out-of-range percent is saved")
class InvalidSettingSaved(_Mutant):
    def validate_edit(self, key: str, raw: str) -> tuple[Any, str | None]:
        updated, hint = super().validate_edit(key, raw)
        if updated is None and key.endswith("Percent"):
            data = {**self.settings.to_json(), key: float(raw)}
            fields = type(self.settings).model_fields.items()
            return type(self.settings).model_construct(**{n: data[str(f.alias)] for n, f in fields}), None
        return updated, hint


@_mutant(
    "§6 deleteHandoffAfterReading false leaves the exact file unchanged",
    "the receiver is always told to delete",
)
class DeletionSettingIgnored(_Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.settings = self.settings.model_copy(update={"delete_handoff_after_reading": True})


@_mutant(
    "§5 recovery is deleted only after the delivered turn completed",
    "recovery is deleted right after sending",
)
class RecoveryDeletedBeforeCompletion(_Mutant):
    def on_message_end(self, event: Any) -> None:
        super().on_message_end(event)
        for tracker in list(self.trackers):
            if tracker.delivered and not tracker.decided:
                tracker.decided = True
                tracker.on_completed(_NullCtx())


class _NullCtx:
    class ui:  # noqa: N801
        @staticmethod
        def notify(*_: Any) -> None:
            return None

        @staticmethod
        def set_widget(*_: Any, **__: Any) -> None:
            return None


@_mutant(
    "§7 project templates: the nearest concrete selection upward is used", "project selections are ignored"
)
class ProjectTemplatesIgnored(_Mutant):
    def managed(self) -> Any:
        paths = super().managed()
        return _NoProjects(paths)


class _NoProjects:
    def __init__(self, paths: Any) -> None:
        self._paths = paths

    def __getattr__(self, name: str) -> Any:
        if name == "project_templates":
            return os.path.join(self._paths.root, "ignored-project-templates.json")
        return getattr(self._paths, name)


@_mutant(
    "§3.1 an early GET carries the pending Call instruction once, no repeat",
    "the Call is sent again after GET",
)
class CallRepeatedAfterEarlyGet(_Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.route == "model":
            request.call_dispatched = False
        return result
