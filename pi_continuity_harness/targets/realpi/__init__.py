"""Real Pi target: install Pi, fake the model, drive ``pi --mode rpc``, observe extensions.

* :mod:`.install` — pinned Node 22.23.3 + ``@earendil-works/pi-coding-agent`` (1.6.0 by default,
  or any of :data:`SUPPORTED_PI_VERSIONS`, each cached beside the others) from npm.
* :mod:`.versions` — what each supported Pi release lacks, with the file:line in its package.
* :mod:`.fake_server` — OpenAI-compatible streaming server playing a :class:`ModelScript`.
* :mod:`.rpc_client` — :class:`PiRpcProcess`, the RPC JSONL client (events, dialogs, helpers).
* :mod:`.environment` — :class:`PiEnvironment`, an isolated offline workspace and Pi's argv.
* ``observer.ts`` — passive extension logging the extension-only events (:data:`OBSERVER_PATH`).
* :mod:`.pi_target` — :class:`PiTarget`, the Target seam over a real Pi process.
* ``bridge.ts`` + :mod:`.bridge_runtime` — a Python extension hosted inside real Pi;
  :mod:`.bridge_zygote` + :mod:`.bridge_client` — each bridge a fork of an imported zygote.
* ``competitors.ts`` — TypeScript twins of the simulator's competitor extensions.
"""

from pi_continuity_harness.targets.realpi.environment import (
    OBSERVER_PATH,
    FakeModel,
    PiEnvironment,
    default_agent_settings,
)
from pi_continuity_harness.targets.realpi.fake_server import (
    FakeModelServer,
    RecordedRequest,
    classify_request,
    parse_chat_request,
    sse_chunks,
)
from pi_continuity_harness.targets.realpi.install import (
    NODE_VERSION,
    PI_VERSION,
    SUPPORTED_PI_VERSIONS,
    PiInstallation,
    PiInstallError,
    UnsupportedPiVersionError,
    bytecode_cache_env,
    check_pi_version,
    default_cache_dir,
    find_installation,
    install_pi,
)
from pi_continuity_harness.targets.realpi.pi_target import (
    BRIDGE_PATH,
    COMPETITORS_PATH,
    PiStartError,
    PiTarget,
    normalise_session_event,
)
from pi_continuity_harness.targets.realpi.rpc_client import (
    AnswerRules,
    DialogRecord,
    PiProcessExitedError,
    PiRpcError,
    PiRpcProcess,
    PiRpcTimeoutError,
    PromptResult,
    RpcEvent,
    dialog_response,
)
from pi_continuity_harness.targets.realpi.versions import (
    HOST_CAPABILITIES,
    PROFILES,
    PiVersionProfile,
    profile_for,
)

__all__ = [
    "BRIDGE_PATH",
    "COMPETITORS_PATH",
    "HOST_CAPABILITIES",
    "NODE_VERSION",
    "OBSERVER_PATH",
    "PI_VERSION",
    "PROFILES",
    "SUPPORTED_PI_VERSIONS",
    "AnswerRules",
    "DialogRecord",
    "FakeModel",
    "FakeModelServer",
    "PiEnvironment",
    "PiInstallError",
    "PiInstallation",
    "PiProcessExitedError",
    "PiRpcError",
    "PiRpcProcess",
    "PiRpcTimeoutError",
    "PiStartError",
    "PiTarget",
    "PiVersionProfile",
    "PromptResult",
    "RecordedRequest",
    "RpcEvent",
    "UnsupportedPiVersionError",
    "bytecode_cache_env",
    "check_pi_version",
    "classify_request",
    "default_agent_settings",
    "default_cache_dir",
    "dialog_response",
    "find_installation",
    "install_pi",
    "normalise_session_event",
    "parse_chat_request",
    "profile_for",
    "sse_chunks",
]
