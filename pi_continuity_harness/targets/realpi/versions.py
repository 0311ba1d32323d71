"""What each supported Pi release can and cannot do, as the real-Pi target needs to know it.

One :class:`PiVersionProfile` per release of :data:`~.install.SUPPORTED_PI_VERSIONS`. Every
difference from Pi 1.6.0 cites the file and line in *that* release's shipped package
(``node_modules/@earendil-works/pi-coding-agent/dist/...``; the ``dist/bundle`` chunks Pi
executes hold the same code).

What does *not* change between 1.0.3 and 1.6.0, so the target needs nothing per release for it:
the RPC protocol (``dist/modes/rpc/rpc-types.d.ts`` and ``jsonl.js`` are byte-identical in all
six), the CLI flags and environment variables the target uses, the settings keys, the session
file format (``CURRENT_SESSION_VERSION = 3``, ``dist/core/session-manager.js:11``), the event
payloads (every ``_emit`` of ``compaction_start/end``, ``auto_retry_*``, ``queue_update``,
``session_compact``, ``entry_appended`` is textually identical), ``session_before_compact``
with ``reason`` and ``willRetry`` (``dist/core/agent-session.js:2161-2162`` in 1.0.3), and the
extension API the bridge and the observer call.

What changes is behaviour. Two differences the target removes or absorbs:

``rpc_new_session_binds_twice`` (1.0.3-1.5.2)
    RPC ``new_session`` calls ``rebindSession()`` after ``runtimeHost.newSession()``
    (``dist/modes/rpc/rpc-mode.js:336-338`` in 1.0.3-1.5.0, ``:358-360`` in 1.5.2), which had
    already rebound through ``finishSessionReplacement`` (``dist/core/agent-session-runtime.js:120-122``);
    each ``bindExtensions`` emits ``session_start``, so every extension sees
    ``session_start {reason: "new"}`` twice. 1.6.0 rebinds once (``rpc-mode.js:360-366``). On these
    releases the target starts a new session with the observer's ``/harness-new-session``
    command instead (``ctx.newSession``: one rebind).
``agent_settled`` without ``aborted`` (1.0.3)
    ``dist/core/agent-session.js:676-677`` emits ``{type: "agent_settled"}``; 1.3.0 has
    ``{type: "agent_settled", aborted}`` (``:690-691``). The target reports ``aborted: false``
    (an observation, not a guess); capability ``agent-settled-aborted`` says the field is real.

The others are host capabilities (:data:`HOST_CAPABILITIES`, described in
``targets.target.CAPABILITIES``): a scenario that needs one is tagged ``@needs-<capability>`` and
skipped, with the reason, on a release that lacks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pi_continuity_harness.targets.realpi.install import PI_VERSION, SUPPORTED_PI_VERSIONS, check_pi_version

__all__ = ["HOST_CAPABILITIES", "PROFILES", "PiVersionProfile", "profile_for"]

#: Capabilities of the host itself that Pi 1.6.0 and the simulator have and older releases may
#: lack (their meaning: ``targets.target.CAPABILITIES``).
HOST_CAPABILITIES: frozenset[str] = frozenset(
    {
        "agent-settled-aborted",
        "busy-while-run-starts",
        "uncapped-summary-output",
        "saved-trust-decision",
        "pi-1.5-system-prompt",
        "reload-refused-while-busy",
        "rpc-session-start-events",
    }
)


@dataclass(frozen=True)
class PiVersionProfile:
    """One Pi release as the real-Pi target sees it."""

    version: str
    #: Host capabilities (of :data:`HOST_CAPABILITIES`) this release lacks -> the file:line in
    #: this release's package that shows it.
    lacks: dict[str, str] = field(default_factory=dict)
    #: Why RPC ``new_session`` runs ``session_start`` twice here (file:line), or None.
    rpc_new_session_binds_twice: str | None = None

    @property
    def capabilities(self) -> frozenset[str]:
        """The host capabilities this release has."""
        return HOST_CAPABILITIES - set(self.lacks)

    def lacks_reason(self, capability: str) -> str | None:
        return self.lacks.get(capability)


def _rpc_session_start_events(rpc_mode_lines: str) -> dict[str, str]:
    return {
        "rpc-session-start-events": (
            f"dist/modes/rpc/rpc-mode.js:{rpc_mode_lines}: rebindSession() binds the extensions "
            "(session_start) before it subscribes to the session's events (1.6.0: "
            "rpc-mode.js:237-249 subscribes first)"
        )
    }


def _reload_refused(reload_line: int) -> dict[str, str]:
    return {
        "reload-refused-while-busy": (
            f"dist/core/agent-session.js:{reload_line}: reload() has no isStreaming/isCompacting "
            "guard (1.5.2: agent-session.js:3095-3100 refuses)"
        )
    }


def _before_1_5(trust_line: int, prompt_line: int) -> dict[str, str]:
    return {
        "saved-trust-decision": (
            f"dist/core/project-trust.js:{trust_line}-{trust_line + 1}: returns true for a project "
            "without trust-requiring resources before reading trust.json (1.5.0: "
            "project-trust.js:23 reads it)"
        ),
        "pi-1.5-system-prompt": (
            f'dist/core/system-prompt.js:{prompt_line}: "You are an expert coding assistant operating '
            'inside pi ..." and dist/core/tools/edit.js:25 "Use edit for precise changes ...": 2,735 '
            "characters of prompt sections against 2,288 from 1.5.0 on"
        ),
    }


_CAPPED_SUMMARY = {
    "uncapped-summary-output": (
        "dist/core/compaction/compaction.js:512: maxTokens = min(0.8 x reserveTokens, model.maxTokens) "
        "(:727 the turn prefix, 0.5 x, without customInstructions); 1.4.0 asks for the model's limit"
    )
}
_BINDS_TWICE_OLD = (
    "dist/modes/rpc/rpc-mode.js:336-338: new_session calls rebindSession() after "
    "runtimeHost.newSession() already rebound (dist/core/agent-session-runtime.js:120-122)"
)

PROFILES: dict[str, PiVersionProfile] = {
    "1.0.3": PiVersionProfile(
        "1.0.3",
        lacks={
            **_rpc_session_start_events("228-265"),
            **_reload_refused(2899),
            **_before_1_5(21, 81),
            **_CAPPED_SUMMARY,
            "agent-settled-aborted": (
                'dist/core/agent-session.js:676-677: emits {type: "agent_settled"} without aborted '
                "(1.3.0: agent-session.js:690-691)"
            ),
            "busy-while-run-starts": (
                "dist/core/agent-session.js:1550: prompt() runs the pre-prompt compaction before "
                "_runAgentPrompt sets _isAgentRunActive (:1352), and isStreaming is that flag "
                "(:1034), so a message sent meanwhile starts its own run (1.3.0: _startRun sets "
                "it first, agent-session.js:1392-1393)"
            ),
        },
        rpc_new_session_binds_twice=_BINDS_TWICE_OLD,
    ),
    "1.3.0": PiVersionProfile(
        "1.3.0",
        lacks={
            **_rpc_session_start_events("228-265"),
            **_reload_refused(2969),
            **_before_1_5(22, 83),
            **_CAPPED_SUMMARY,
        },
        rpc_new_session_binds_twice=_BINDS_TWICE_OLD,
    ),
    "1.4.0": PiVersionProfile(
        "1.4.0",
        lacks={**_rpc_session_start_events("228-265"), **_reload_refused(2998), **_before_1_5(22, 83)},
        rpc_new_session_binds_twice=_BINDS_TWICE_OLD,
    ),
    "1.5.0": PiVersionProfile(
        "1.5.0",
        lacks={**_rpc_session_start_events("228-265"), **_reload_refused(3016)},
        rpc_new_session_binds_twice=_BINDS_TWICE_OLD,
    ),
    "1.5.2": PiVersionProfile(
        "1.5.2",
        lacks=_rpc_session_start_events("232-272"),
        rpc_new_session_binds_twice=(
            "dist/modes/rpc/rpc-mode.js:358-360: new_session calls rebindSession() after "
            "runtimeHost.newSession() already rebound (dist/core/agent-session-runtime.js:120-122)"
        ),
    ),
    "1.6.0": PiVersionProfile("1.6.0"),
}
if set(PROFILES) != set(SUPPORTED_PI_VERSIONS):  # pragma: no cover - a mistake in this file
    raise AssertionError("PROFILES must hold exactly the supported Pi versions")


def profile_for(version: str | None) -> PiVersionProfile:
    """The profile of ``version`` (None: :data:`PI_VERSION`); an unsupported version raises
    :class:`~.install.UnsupportedPiVersionError`."""
    return PROFILES[check_pi_version(version or PI_VERSION)]
