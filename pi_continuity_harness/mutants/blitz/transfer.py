"""Mutants of the transfer sequence (reference: Transfer sequence 1-7): starts, the Call, GET,
Finish, the cutover and the receiver."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import stat
import uuid
from typing import Any

from pi_continuity_harness.mutants.blitz.base import Mutant, Proxy, mutant, patched, with_new_session
from pi_continuity_harness.reference.blitz import messages, status
from pi_continuity_harness.reference.blitz.constants import DEFAULT_CALL_TEMPLATE
from pi_continuity_harness.reference.blitz.paths import dossier_path, normalise_session_component
from pi_continuity_harness.reference.blitz.receiver import TurnTracker
from pi_continuity_harness.reference.blitz.state import BlitzRequest, FinishCheck, Route, check_finish
from pi_continuity_harness.reference.blitz.templates import TemplateResolutionError, resolve_template


@mutant("H29a", how="accepts any ID", invariant="finish_only_with_returned_id")
class FinishAcceptsForeignId(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.finish_id is not None and not request.submitted:
            params = {**params, "id": request.finish_id}
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant("H29b", how="a second Finish is accepted again", invariant="finish_only_with_returned_id")
class FinishAcceptedTwice(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.phase == "finished" and params.get("id") == request.finish_id:
            request.phase = "writing"
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant("H13", how="a second start replaces the first", invariant="one_active_request")
class SecondRequestReplacesFirst(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        self.request = None
        return super().start_request(ctx, route)


@mutant("H20", how="each GET issues a new Finish ID", invariant="one_active_request")
class GetIssuesNewIds(Mutant):
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


@mutant("H44a", how="the dossier is deleted at cutover", invariant="dossier_kept_until_receiver_turn")
class DossierDeletedAtCutover(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        dossier = request.dossier if request is not None else None
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            if dossier and os.path.exists(dossier):
                os.remove(dossier)
            return await original(**options)

        await super().cutover(token, with_new_session(ctx, new_session))


@mutant("H38", how="the new session has no parent link", invariant="receiver_link_follows_chain_limit")
class NoParentLink(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        original = ctx.new_session

        async def new_session(**options: Any) -> Any:
            return await original(**{**options, "parent_session": None})

        await super().cutover(token, with_new_session(ctx, new_session))


@mutant("H40b", how="the receiver is always told to delete", invariant="dossier_retained_when_deletion_off")
class DeletionSettingIgnored(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        self.settings = self.settings.model_copy(update={"delete_handoff_after_reading": True})


@mutant(
    "H41b", "H84b", how="recovery is deleted right after sending", invariant="captured_prompts_kept_in_order"
)
class RecoveryDeletedBeforeCompletion(Mutant):
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


@mutant("H16", how="the Call is sent again after GET", invariant="one_active_request")
class CallRepeatedAfterEarlyGet(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.route == "model":
            request.call_dispatched = False
        return result


@mutant(
    "H16",
    how="a repeated GET after an early one carries the Call instruction again (an outside mutant; the "
    "features made one early GET only)",
    unreachable="no invariant reads the text of a template response",
)
class CallInEveryGetAfterEarly(Mutant):
    def template_result(
        self, request: Any, finish_id: str, *, pending_call: str | None, repeated: bool
    ) -> Any:
        if pending_call is not None:
            self._early_call = pending_call
        elif repeated and request.route == "model":
            pending_call = getattr(self, "_early_call", None)
        return super().template_result(request, finish_id, pending_call=pending_call, repeated=repeated)


_ONE_RUN = "a fixed text or the order of one start's messages (the features check it)"


@mutant(
    "H14a", how="/sh start sends the Call at once, as steering into the running turn", unreachable=_ONE_RUN
)
class CallSentWhileBusy(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        if args.strip() != "start" or ctx.is_idle():
            await super().run(args, ctx)
            return
        request = self.start_request(ctx, "command")
        request.call_dispatched = True
        request.reminder_started_at = self.now()
        self.pi.send_user_message(request.call_text, deliver_as="steer")


@mutant("H14b", how="a model start sends the Call at once, within the model's run", unreachable=_ONE_RUN)
class ModelCallWithinRun(Mutant):
    async def tool_status(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_status(call_id, params, signal, ctx)
        request = self.request
        if params.get("action") == "start" and request is not None and not request.call_dispatched:
            request.call_dispatched = True
            request.reminder_started_at = self.now()
            self.pi.send_user_message(request.call_text, deliver_as="steer")
        return result


@mutant(
    "H18a",
    how="the Call is always the shipped default, whatever template is selected",
    invariant="project_call_template_used",
)
class SelectedCallIgnored(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        request.call_text = messages.call_instruction(DEFAULT_CALL_TEMPLATE)
        return request


@mutant(
    "H18b",
    how="the Call is the template alone, without the GET/Finish protocol",
    invariant="project_call_template_used",
)
class CallWithoutProtocol(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        request.call_text = request.call_text.split("\n## Protocol", 1)[0] + "\n"
        return request


@mutant("H18c", how="the Call names the dossier file", unreachable=_ONE_RUN)
class CallNamesDossier(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        request.call_text += f"\nWrite the dossier to {request.dossier}.\n"
        return request


def _edit_result(result: Any, edit: Any) -> Any:
    text = "".join(str(b.get("text", "")) for b in result.content if isinstance(b, dict))
    return type(result)(
        content=[{"type": "text", "text": edit(text)}], details=result.details, is_error=result.is_error
    )


@mutant("H19a", how="the template response leaves out the Handoff template", unreachable=_ONE_RUN)
class GetWithoutTemplate(Mutant):
    def template_result(
        self, request: BlitzRequest, finish_id: str, *, pending_call: str | None, repeated: bool
    ) -> Any:
        result = super().template_result(request, finish_id, pending_call=pending_call, repeated=repeated)
        return _edit_result(result, lambda t: t.replace(request.handoff_template.text.rstrip("\n"), ""))


@mutant("H19b", how="the template response names the dossier's directory, not the file", unreachable=_ONE_RUN)
class GetNamesDirectory(Mutant):
    def template_result(
        self, request: BlitzRequest, finish_id: str, *, pending_call: str | None, repeated: bool
    ) -> Any:
        result = super().template_result(request, finish_id, pending_call=pending_call, repeated=repeated)
        return _edit_result(result, lambda t: t.replace(request.dossier, os.path.dirname(request.dossier)))


@mutant("H19c", how="the template response leaves out the source transcript", unreachable=_ONE_RUN)
class GetWithoutTranscript(Mutant):
    def template_result(
        self, request: BlitzRequest, finish_id: str, *, pending_call: str | None, repeated: bool
    ) -> Any:
        result = super().template_result(request, finish_id, pending_call=pending_call, repeated=repeated)
        return _edit_result(result, lambda t: t.replace(request.source_session_file, "(not given)"))


@mutant("H19d", how="the Finish ID is the session ID", unreachable=_ONE_RUN)
class FinishIdIsSessionId(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.finish_id and request.finish_id != request.source_session_id:
            old, request.finish_id = request.finish_id, request.source_session_id
            result = _edit_result(result, lambda t: t.replace(old, request.source_session_id))
        return result


@mutant("H21", how="a template request without a handoff starts one", unreachable=_ONE_RUN)
class GetWithoutRequestStarts(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        if self.request is None:
            request = self.start_request(ctx, "model")
            request.call_dispatched = True
        return await super().tool_get(call_id, params, signal, ctx)


@mutant(
    "H23",
    how="deferPromptsFrom request is ignored: capture starts at the template only",
    invariant="user_operation_blocked_while_protected",
)
class RequestDeferralIgnored(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        request.capture = None
        request.defer_mode = "writing"
        return request


@mutant("H27a", how="a captured prompt also reaches the model", invariant="prompts_captured_when_due")
class CapturedPromptAlsoSent(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        super().on_input(event, ctx)
        return None


@mutant("H28a", how="the extension's own inputs are captured too", invariant="explicit_start_makes_request")
class ExtensionInputsCaptured(Mutant):
    def on_input(self, event: Any, ctx: Any) -> Any:
        if event.source == "extension":
            request = self.request
            if request is not None and request.active and request.capture is not None:
                request.capture.capture(event.text)
                self.refresh(ctx)
                return {"action": "handled"}
        return super().on_input(event, ctx)


@mutant(
    "H28b",
    how="/sh cancel during capture is deferred like a prompt",
    invariant="explicit_start_makes_request",
)
class SlashCommandCaptured(Mutant):
    async def run(self, args: str, ctx: Any) -> None:
        request = self.request
        if (
            args.strip() == "cancel"
            and request is not None
            and request.active
            and request.capture is not None
        ):
            request.capture.capture("/sh cancel")
            self.refresh(ctx)
            return
        await super().run(args, ctx)


@mutant(
    "H30",
    how="before any template response, a Finish on a written dossier is accepted",
    invariant="finish_only_with_returned_id",
)
class FinishBeforeGetAccepted(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.phase == "requested" and os.path.isfile(request.dossier):
            request.finish_id = str(params.get("id"))
            request.reservation_owned = True
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant(
    "H31a", how="a rejected Finish still starts the switch", invariant="switch_only_after_accepted_finish"
)
class RejectedFinishSwitches(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_finish(call_id, params, signal, ctx)
        request = self.request
        if result.is_error and request is not None and request.active:
            request.phase = "finished"
        return result


@mutant("H32", how="a writer that stops is sent the Call again (once)", invariant="one_active_request")
class WriterRetried(Mutant):
    def on_settled(self, event: Any, ctx: Any) -> None:
        super().on_settled(event, ctx)
        request = self.request
        retried = getattr(request, "retried", False)
        if (
            request is not None
            and request.phase == "writing"
            and not retried
            and not ctx.has_pending_messages()
        ):
            request.retried = True  # type: ignore[attr-defined]
            self.pi.send_user_message(request.call_text)


@mutant(
    "H33a",
    how="the switch starts at the accepted Finish, without waiting for the source to be idle",
    invariant="captured_prompts_kept_in_order",
)
class SwitchBeforeIdle(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_finish(call_id, params, signal, ctx)
        request = self.request
        if not result.is_error and request is not None and request.cutover_token is None:
            request.cutover_token = uuid.uuid4().hex
            self.pi.send_user_message(
                f"/sh __cutover {request.cutover_token}", deliver_as="steer", expand_prompt_templates=True
            )
        return result

    async def cutover(self, token: str, ctx: Any) -> None:
        await super().cutover(token, Proxy(ctx, is_idle=lambda: True, has_pending_messages=lambda: False))


@mutant("H36", how="the deferred prompts are not appended to the dossier", unreachable=_ONE_RUN)
class DeferredNotAppended(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if request is not None and request.capture is not None:
            request.capture.prompts = []
        await super().cutover(token, ctx)


def _bootstrap_edit(edit: Any) -> Any:
    original = messages.bootstrap_prompt

    def bootstrap(dossier: str, delete_after_reading: bool) -> str:
        return str(edit(original(dossier, delete_after_reading), dossier))

    return bootstrap


class _BootstrapMutant(Mutant):
    """A mutant that changes the bootstrap prompt (its module function, for this instance's cutover)."""

    @staticmethod
    def edit(text: str, dossier: str) -> str:
        return text

    async def cutover(self, token: str, ctx: Any) -> None:
        with patched(messages, "bootstrap_prompt", _bootstrap_edit(self.edit)):
            await super().cutover(token, ctx)


@mutant(
    "H37a",
    how="the first prompt names the dossier by a relative path",
    invariant="captured_prompts_kept_in_order",
)
class BootstrapRelativePath(_BootstrapMutant):
    @staticmethod
    def edit(text: str, dossier: str) -> str:
        return text.replace(dossier, os.path.relpath(dossier))


@mutant("H37b", how="the first prompt has no cleanup instruction", unreachable=_ONE_RUN)
class BootstrapWithoutCleanup(_BootstrapMutant):
    @staticmethod
    def edit(text: str, dossier: str) -> str:
        text = text.replace(f"After a complete, successful read, delete exactly this file: {dossier}", "")
        return text.replace("Leave the file unchanged after reading it.", "")


@mutant(
    "H37c",
    how="the first prompt repeats the source's first user message",
    invariant="captured_prompts_kept_in_order",
)
class BootstrapWithHistory(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        users = [
            e for e in ctx.session_manager.get_entries() if (e.get("message") or {}).get("role") == "user"
        ]
        last = users[0]["message"]["content"] if users else ""
        last = last if isinstance(last, str) else "".join(str(b.get("text", "")) for b in last)
        original = messages.bootstrap_prompt
        with patched(
            messages, "bootstrap_prompt", lambda d, x: f"The user said: {last}\n\n" + original(d, x)
        ):
            await super().cutover(token, ctx)


@mutant(
    "H39a",
    how="the first prompt asks to read the file, not all of it, and says nothing of truncation",
    unreachable=_ONE_RUN,
)
class BootstrapPartialRead(_BootstrapMutant):
    @staticmethod
    def edit(text: str, dossier: str) -> str:
        text = text.replace("read the entire file", "read the file")
        return text.replace(" (continue past any truncation until you have read all of it)", "")


@mutant("H39b", how="the first prompt says nothing about a failed read", unreachable=_ONE_RUN)
class BootstrapNoBlockerClause(_BootstrapMutant):
    @staticmethod
    def edit(text: str, dossier: str) -> str:
        return text.replace(" If the read fails or is incomplete, keep the file and report the blocker.", "")


@mutant("H40a", how="deleteHandoffAfterReading defaults to false", unreachable=_ONE_RUN)
class DeletionOffByDefault(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not os.path.exists(self.managed().config):
            self.settings = self.settings.model_copy(update={"delete_handoff_after_reading": False})


@mutant("H41a", how="the recovery file stays after the bootstrap turn completed", unreachable=_ONE_RUN)
class RecoveryKeptAfterBootstrap(Mutant):
    def adopt_duty(self, duty: Any) -> None:
        duty.recovery_file = None
        super().adopt_duty(duty)


@mutant("H104a", how="callTemplate defaults to call_fast.cmpl", unreachable=_ONE_RUN)
class CallTemplateDefaultFast(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        if not os.path.exists(self.managed().config):
            self.settings = self.settings.model_copy(update={"call_template": "call_fast.cmpl"})


@mutant("H112", how="the reservation is readable by everyone", unreachable=_ONE_RUN)
class ReservationWorldReadable(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and os.path.exists(request.dossier):
            os.chmod(request.dossier, 0o644)
        return result


@mutant("H115a", how="the shipped Call template asks to finish the whole task", unreachable=_ONE_RUN)
class ShippedCallWholeTask(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        with open(
            os.path.join(self.managed().templates, "call_default.cmpl"), "w", encoding="utf-8"
        ) as handle:
            handle.write("# Session Handoff requested\n\nFinish the whole task first, then hand off.\n")


@mutant("H115b", how="the shipped Handoff template is a one-line summary request", unreachable=_ONE_RUN)
class ShippedHandoffSummary(Mutant):
    def load(self, ctx: Any) -> None:
        super().load(ctx)
        with open(
            os.path.join(self.managed().templates, "handoff_default.cmpl"), "w", encoding="utf-8"
        ) as handle:
            handle.write("# Summary\n\nSummarise the session in a few lines.\n")


@mutant(
    "H132",
    how="the protocol is appended only to the default Call template",
    invariant="project_call_template_used",
)
class ProtocolOnlyForDefault(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        if not request.call_text.startswith(DEFAULT_CALL_TEMPLATE.rstrip("\n")):
            request.call_text = request.call_text.split("\n## Protocol", 1)[0] + "\n"
        return request


_WIRING = importlib.import_module("pi_continuity_harness.reference.blitz.wiring")


@mutant(
    "H31b",
    how="a rejected Finish ends the request",
    invariant="valid_finish_accepted",
)
class RejectedFinishEndsRequest(Mutant):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        request = self.request
        result = await super().tool_finish(*args, **kwargs)
        if result.is_error and request is not None and request.active and request.finish_id is not None:
            self.request = None
        return result


@mutant(
    "H34a",
    how="Finish accepts an empty dossier",
    invariant="finish_refused_onto_empty_dossier",
)
class EmptyDossierAccepted(Mutant):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        with patched(_WIRING, "is_nonempty_regular_file", os.path.lexists):
            return await super().tool_finish(*args, **kwargs)


@mutant(
    "H34c",
    how="Finish requires a Markdown heading in the dossier",
    invariant="valid_finish_accepted",
)
class HeadingRequired(Mutant):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        request = self.request
        if request is not None and os.path.isfile(request.dossier):
            with open(request.dossier, encoding="utf-8", errors="replace") as handle:
                if not handle.read().lstrip().startswith("#"):
                    return _WIRING._text("Rejected: the dossier has no title.", error=True)
        return await super().tool_finish(*args, **kwargs)


@mutant(
    "H34b",
    how="Finish accepts a directory at the dossier path",
    unreachable="the explorer's writer always writes a regular file",
)
class FinishAcceptsDirectory(Mutant):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        original = _WIRING.is_nonempty_regular_file
        with patched(_WIRING, "is_nonempty_regular_file", lambda path: os.path.isdir(path) or original(path)):
            return await super().tool_finish(*args, **kwargs)


def _nonempty_file_following_links(path: str) -> bool:
    """``atomic_io.is_nonempty_regular_file`` with ``stat`` for ``lstat``: a link to a nonempty
    regular file passes, the mistake ``os.path.isfile`` and ``getsize`` make."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


@mutant(
    "H34b",
    how="Finish follows a symbolic link at the dossier path (stat, not lstat)",
    unreachable="the explorer plants no symbolic link (the suite does: edit_file kind symlink)",
)
class FinishFollowsSymlink(Mutant):
    """From the independent round (docs/pi-blitz-handoff.md): it survived while no scenario
    could plant a link. The reference's check is ``lstat`` (reference, Transfer 6:
    "Metadata-only nonempty-regular-file check"; rule H34b: "a directory or symlink")."""

    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        with patched(_WIRING, "is_nonempty_regular_file", _nonempty_file_following_links):
            return await super().tool_finish(*args, **kwargs)


@mutant(
    "H33b",
    how="an accepted Finish asks the source model once more before the switch (an assembly turn)",
    invariant="captured_prompts_kept_in_order",
)
class AssemblyTurnAfterFinish(Mutant):
    async def tool_finish(self, *args: Any, **kwargs: Any) -> Any:
        result = await super().tool_finish(*args, **kwargs)
        request = self.request
        if request is not None and request.submitted:
            self.pi.send_user_message("Summarise the handoff in one line.", deliver_as="followUp")
        return result


@mutant(
    "H42",
    how="a failed bootstrap turn deletes the recovery file anyway",
    invariant="captured_prompts_kept_in_order",
)
class FailedBootstrapDeletesRecovery(Mutant):
    def adopt_duty(self, duty: Any) -> None:
        super().adopt_duty(duty)
        tracker = self.trackers[-1]
        original = tracker.on_failed

        def failed(ctx: Any, reason: str) -> None:
            if duty.recovery_file and os.path.exists(duty.recovery_file):
                os.remove(duty.recovery_file)
            original(ctx, reason)

        setattr(tracker, "on_failed", failed)  # noqa: B010 (an instance's callback replaced)


@mutant(
    "H123",
    how="an unreadable ancestor counts as the end of the chain (a guessed count)",
    unreachable="the explorer never removes a session file",
)
class ChainGuessed(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        original = _WIRING.decide_parent
        chain = importlib.import_module("pi_continuity_harness.reference.blitz.chain")

        def guessed(source_file: str, source_parent: str | None, limit: int) -> Any:
            try:
                return original(source_file, source_parent, limit)
            except chain.ChainError:
                return chain.ChainDecision(source_file, False)

        with patched(_WIRING, "decide_parent", guessed):
            await super().cutover(token, ctx)


@mutant(
    "H77d",
    how="a submitted Finish awaiting the switch is no longer protected",
    invariant="user_operation_blocked_while_protected",
)
class SubmittedUnprotected(Mutant):
    def protected(self) -> bool:
        request = self.request
        if request is not None and request.submitted and not self.cleaning:
            return False
        return super().protected()


@mutant(
    "H44b",
    how="a recovery file the receiver cannot delete is reported as a plain success",
    unreachable="the blitz explorer injects no file-system faults",
)
class RecoveryCleanupFailureHidden(Mutant):
    def adopt_duty(self, duty: Any) -> None:
        super().adopt_duty(duty)
        tracker = self.trackers[-1]
        done = tracker.on_completed

        def quiet(ctx: Any) -> None:
            done(Proxy(ctx, ui=Proxy(ctx.ui, notify=lambda text, _kind="info": ctx.ui.notify(text, "info"))))

        tracker.on_completed = quiet


@mutant(
    "H107",
    how="a child session hands off its parent (the parent's session file is the source)",
    invariant="receiver_link_follows_chain_limit",
)
class ChildHandsOffParent(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        request = super().start_request(ctx, route)
        parent = (ctx.session_manager.get_header() or {}).get("parentSession")
        if isinstance(parent, str) and parent:
            request.source_session_file = parent
        return request


@mutant(
    "H67",
    how="Wait Time runs until the accepted Finish (Handoff Time starts there)",
    unreachable="the explorer's invariants read no widget times",
)
class WaitTimeUntilFinish(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_finish(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.submitted:
            request.retrieved_at = self.now()
        return result


@mutant(
    "H26",
    how="a template request that completes after the cancel still serves the cancelled request",
    invariant="valid_finish_accepted",
)
class GetServesCancelledRequest(Mutant):
    cancelled: BlitzRequest | None = None

    async def cancel(self, ctx: Any) -> None:
        self.cancelled = self.request
        await super().cancel(ctx)

    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        if self.request is None and self.cancelled is not None:
            self.request, self.cancelled = self.cancelled, None
            try:
                return await super().tool_get(call_id, params, signal, ctx)
            finally:
                self.request = None
        return await super().tool_get(call_id, params, signal, ctx)


@mutant(
    "H123",
    how="an unreadable ancestor ends the request silently: no failure notification, no failed widget",
    unreachable="the explorer never removes a session file",
)
class ChainErrorSilent(Mutant):
    def fail(self, ctx: Any, request: Any, reason: str, *, keep: bool = False) -> None:
        if reason.startswith(("The ancestor session", "The session chain")):
            self.request = None
            return
        super().fail(ctx, request, reason, keep=keep)


@mutant(
    "H29a",
    how="the Finish ID is compared after trimming and case folding",
    invariant="finish_only_with_returned_id",
)
class FinishIdNormalised(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        given = params.get("id")
        if (
            request is not None
            and request.finish_id is not None
            and isinstance(given, str)
            and given.strip().casefold() == request.finish_id.casefold()
        ):
            params = {**params, "id": request.finish_id}
        return await super().tool_finish(call_id, params, signal, ctx)


@mutant(
    "H19d",
    how="the Finish ID is derived from the source session file: every request of a session gets the same one",
    unreachable="the explorer compares no Finish IDs across requests",
)
class FinishIdPerSession(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        fresh = request is not None and request.finish_id is None
        result = await super().tool_get(call_id, params, signal, ctx)
        if fresh and request is not None and request.finish_id is not None and not result.is_error:
            old = request.finish_id
            request.finish_id = str(uuid.uuid5(uuid.NAMESPACE_URL, request.source_session_file))
            text = result.content[0]["text"].replace(old, request.finish_id)
            result = type(result)(
                content=[{"type": "text", "text": text}], details=result.details, is_error=result.is_error
            )
        return result


@mutant(
    "H67",
    how="the receiver's Handoff Time runs from the handoff request, not from the template request",
    unreachable="the explorer's invariants read no widget times",
)
class HandoffTimeFromRequest(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if request is None:
            await super().cutover(token, ctx)
            return
        requested = request.requested_at
        original = _WIRING.register_duty

        def register(duty: Any) -> None:
            duty.retrieved_at = requested
            original(duty)

        with patched(_WIRING, "register_duty", register):
            await super().cutover(token, ctx)


# ---------------------------------------------------------------- a third independent round
@mutant(
    "H112",
    how="the dossier is named after the normalised session id, not the native one",
    invariant="dossier_named_after_source_session",
)
class DossierNamedNormalised(Mutant):
    def start_request(self, ctx: Any, route: Route) -> BlitzRequest:
        with patched(
            _WIRING, "dossier_path", lambda cwd, sid: dossier_path(cwd, normalise_session_component(sid))
        ):
            return super().start_request(ctx, route)


@mutant(
    "H20",
    how="a repeated template request reads the Handoff template from disk again",
    unreachable="the explorer edits no template while a request is active",
)
class RepeatedGetRereadsTemplate(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        request = self.request
        if request is not None and request.active and request.finish_id is not None:
            with contextlib.suppress(TemplateResolutionError):
                request.handoff_template = resolve_template(
                    "handoff",
                    request.handoff_template.selected,
                    self.managed().templates,
                    self.settings.template_directory,
                )
        return await super().tool_get(call_id, params, signal, ctx)


def _prefix_check(request: BlitzRequest | None, finish_id: object) -> FinishCheck:
    if (
        request is not None
        and request.active
        and not request.submitted
        and request.finish_id is not None
        and isinstance(finish_id, str)
        and request.finish_id.startswith(finish_id)
    ):
        return FinishCheck(True, "accepted")
    return check_finish(request, finish_id)


@mutant(
    "H29a",
    how="Finish accepts any prefix of the Finish ID (a truncated copy, the empty string)",
    invariant="finish_only_with_returned_id",
)
class FinishIdPrefixAccepted(Mutant):
    async def tool_finish(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        with patched(_WIRING, "check_finish", _prefix_check):
            return await super().tool_finish(call_id, params, signal, ctx)


class _FirstStopTracker(TurnTracker):
    """Judges a delivered turn by its first assistant message's stop reason, not its last."""

    def on_message_end(self, message: dict[str, Any]) -> None:
        if message.get("role") == "assistant" and self.delivered and self.last_stop is not None:
            return
        super().on_message_end(message)


@mutant(
    "H42",
    how="the bootstrap turn is judged by its first assistant message: a read, then an error, counts as completed",
    unreachable="the blitz explorer scripts no failing receiver turn",
)
class TrackerFirstStop(Mutant):
    def adopt_duty(self, duty: Any) -> None:
        with patched(_WIRING, "TurnTracker", _FirstStopTracker):
            super().adopt_duty(duty)


_NO_TIMES = "no invariant reads the widget's times"


def _wait_running(original: Any) -> Any:
    def request_lines(request: BlitzRequest, now: float) -> list[str]:
        lines = list(original(request, now))
        if request.phase == "writing":
            running = f"Wait Time {status.format_duration(now - request.requested_at)}"
            lines[1] = re.sub(r"Wait Time \d+:\d\d", running, lines[1], count=1)
        return lines

    return request_lines


@mutant(
    "H67",
    how="a widget redrawn while the handoff is written shows a Wait Time running on to now (an outside "
    "mutant; no redraw came later than the template request)",
    unreachable=_NO_TIMES,
)
class WaitTimeRunsWhileWritten(Mutant):
    def refresh(self, ctx: Any) -> None:
        with patched(status, "request_lines", _wait_running(status.request_lines)):
            super().refresh(ctx)


@mutant("H67", how="Wait Time runs from the Call's dispatch, not from the request", unreachable=_NO_TIMES)
class WaitTimeFromDispatch(Mutant):
    def dispatch_call(self, request: BlitzRequest) -> None:
        if not request.call_dispatched:
            request.requested_at = self.now()
        super().dispatch_call(request)


@mutant(
    "H67",
    how="the receiver's Handoff Time stops at the switch, not at the end of its completed turn",
    unreachable=_NO_TIMES,
)
class HandoffTimeStopsAtCutover(Mutant):
    def adopt_duty(self, duty: Any) -> None:
        switched = self.now()
        super().adopt_duty(duty)
        tracker = self.trackers[-1]
        completed = tracker.on_completed
        clock = self.now

        def on_completed(ctx: Any) -> None:
            self.now = lambda: switched  # type: ignore[method-assign]
            try:
                completed(ctx)
            finally:
                self.now = clock  # type: ignore[method-assign]

        tracker.on_completed = on_completed


# ---------------------------------------------------------------- the fourth independent round
@mutant(
    "H29b",
    "H20",
    how="a template request after the accepted Finish reopens writing, so a second Finish is accepted",
    unreachable="the explorer's writers ask for the template again only before their Finish",
)
class RepeatedGetReopensWriting(Mutant):
    async def tool_get(self, call_id: str, params: dict[str, Any], signal: Any, ctx: Any) -> Any:
        result = await super().tool_get(call_id, params, signal, ctx)
        request = self.request
        if request is not None and request.phase == "finished":
            request.phase = "writing"
        return result


@mutant(
    "H123",
    how="a transfer that failed (an unreadable ancestor) keeps its request active, still capturing prompts",
    unreachable="the explorer never removes a session file",
)
class FailedCutoverKeepsRequest(Mutant):
    def fail(self, ctx: Any, request: Any, reason: str, *, keep: bool = False) -> None:
        super().fail(ctx, request, reason, keep=True)


@mutant(
    "H40b",
    how="an empty deferred-prompts section is appended to the dossier when nothing was captured",
    unreachable="dossier_retained_when_deletion_off checks that the dossier is kept, not its bytes",
)
class EmptyDeferredSectionAppended(Mutant):
    async def cutover(self, token: str, ctx: Any) -> None:
        request = self.request
        if (
            request is not None
            and request.phase == "finished"
            and token
            and token == request.cutover_token
            and (request.capture is None or not request.capture.prompts)
        ):
            with contextlib.suppress(OSError), open(request.dossier, "a", encoding="utf-8") as handle:
                handle.write("\n\n# Deferred prompts\n\n(none)\n")
        await super().cutover(token, ctx)
