"""Tree navigation of the session: ``navigateTree`` without the branch summariser.

The part of Pi's ``AgentSession`` (``dist/core/agent-session.js``) that moves the session's
leaf, ``navigateTree`` (agent-session.js:3370-3538), held by :class:`SessionTree` for its
:class:`~.agent_session.AgentSession` (whose branch-summary abort controller makes it count
as compacting meanwhile, ``isCompacting`` :1295-1300). Where the new leaf goes and which
entries a summary would take are :mod:`.tree`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_continuity_harness.api.abort import AbortController
from pi_continuity_harness.api.events import (
    BeforeTreeResult,
    SessionBeforeTreeEvent,
    SessionTreeEvent,
    TreePreparation,
)
from pi_continuity_harness.simulator.session_shared import PiThrewError, PromptRejectedError
from pi_continuity_harness.simulator.tree import (
    NAVIGATE_WHILE_COMPACTING,
    NAVIGATE_WHILE_STREAMING,
    NO_SUMMARY_MODEL,
    SUMMARY_NOT_MODELLED,
    collect_entries_for_branch_summary,
    entry_not_found,
    new_leaf_for,
)

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = ["SessionTree"]


class SessionTree:
    """The tree-navigation job of one :class:`~.agent_session.AgentSession`."""

    __slots__ = ("_session",)

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> dict[str, Any]:
        """``AgentSession.navigateTree`` (agent-session.js:3370-3535) without the branch summariser.

        Throws (:class:`PiThrewError`, Pi's messages) while a run streams or a prompt is in
        preflight (:3371-3373), while compacting or navigating (:3374-3376); a no-op at the current
        leaf (:3379-3381); an unknown entry throws (:3386-3389). ``session_before_tree`` gets the
        preparation and a signal; ``{cancel: true}`` returns ``{cancelled: true}`` (:3412-3421);
        handler overrides of instructions and label apply (:3425-3433). The new leaf: a user or
        custom message's parent (its text for the editor), else the entry itself (:3466-3482);
        ``branch``/``resetLeaf`` (:3494-3500); a label goes on the target (:3502-3504); the context
        is refreshed (:3506) and ``session_tree`` emitted (:3518-3524). Idle waiters are checked at
        the end (:3533). ``summarize=True`` is refused (:data:`~.tree.SUMMARY_NOT_MODELLED`): the
        simulator does not model ``generateBranchSummary``; an extension's ``summary`` result is
        used only with ``summarize`` (:3422-3424), so it is ignored here as in Pi.
        The tool loadout restore (``_restoreToolsFromTranscript``, :3507) is not modelled: the
        simulator records no tool loadout in system messages a branch could switch between.
        """
        s = self._session
        if s.is_streaming or s._prompt_preflight_count > 0:
            raise PiThrewError(NAVIGATE_WHILE_STREAMING)
        if s.is_compacting:
            raise PiThrewError(NAVIGATE_WHILE_COMPACTING)
        manager = s.session_manager
        old_leaf_id = manager.get_leaf_id()
        if target_id == old_leaf_id:
            return {"cancelled": False}
        if summarize and s.model is None:
            raise PiThrewError(NO_SUMMARY_MODEL)
        if summarize:
            # The simulator's own refusal, not an Error of Pi's: a PromptRejectedError, no PiError.
            raise PromptRejectedError(SUMMARY_NOT_MODELLED)
        target = manager.get_entry(target_id)
        if target is None:
            raise PiThrewError(entry_not_found(target_id))
        entries, common = collect_entries_for_branch_summary(manager, old_leaf_id, target_id)
        preparation = TreePreparation(
            target_id=target_id,
            old_leaf_id=old_leaf_id,
            common_ancestor_id=common,
            entries_to_summarize=entries,
            user_wants_summary=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
        )
        controller = AbortController()
        s._branch_summary_abort = controller
        try:
            if s._runner().has_handlers("session_before_tree"):
                result = await s.dispatch(
                    SessionBeforeTreeEvent(preparation=preparation, signal=controller.signal)
                )
                if isinstance(result, BeforeTreeResult):
                    if result.cancel:
                        return {"cancelled": True}
                    if result.label is not None:
                        label = result.label
            new_leaf_id, editor_text = new_leaf_for(target)
            if new_leaf_id is None:
                manager.reset_leaf()
            else:
                manager.branch(new_leaf_id)
            if label:
                manager.append_label_change(target_id, label)
            s._refresh_finalized_context()
            s._tools.restore_tools_from_transcript()
            s._branch_summary_abort = None
            await s.dispatch(SessionTreeEvent(new_leaf_id=manager.get_leaf_id(), old_leaf_id=old_leaf_id))
            out: dict[str, Any] = {"cancelled": False}
            if editor_text is not None:
                out["editorText"] = editor_text
            return out
        finally:
            if s._branch_summary_abort is controller:
                s._branch_summary_abort = None
            s._resolve_idle_waiters()
