"""``resources_discover``: the resources extensions add after a runtime starts, as Pi 1.6 does.

After each ``session_start`` of a runtime Pi asks the extensions for more resources
(``AgentSession.extendResourcesFromExtensions``, ``dist/core/agent-session.js:2790-2805``):
``bindExtensions`` (:2786-2788, called for every runtime RPC mode binds, ``rpc-mode.js:249``:
startup, new session, fork, resume) with reason ``"startup"``, and ``reload`` (:3136-3139)
with ``"reload"``. Without a handler nothing happens (``hasHandlers``, :2791). With one, the
handlers' ``skillPaths``, ``promptPaths`` and ``themePaths`` (runner.js:1194-1214) extend the
resource loader's (``extendResources``, resource-loader.js:339-364) and the system prompt is
rebuilt (``_rebuildSystemPrompt``, :1358-1383), so the skills found are listed in its
``skills`` section (:mod:`.skills`): in the session's first system message, or as a section
patch on the next run's (``_preparePromptAndToolLoadout``, :1395-1400).
The templates of a result's ``promptPaths`` are loaded after the default folders'
(:class:`.prompt_templates.PromptTemplates`).

A reload starts again from the settings' resources (``_resourceLoader.reload()``, :3122), so
skills an extension named before it are gone unless a handler names them again. The skills Pi
finds without an extension (its skill folders and ``skills`` setting, :mod:`.skill_dirs`) come
before the named ones (``lastSkillPaths``, resource-loader.js:353), so a name both have is the
folder's.

Not modelled: a resumed session whose transcript lists skills no handler names any more (Pi
patches the section away on the next run; the simulator diffs the sections only once its own
session listed skills, :attr:`.AgentSession.skills_seen`); ``themePaths`` (themes matter to
the TUI only) are collected and dropped.

Each skill path remembers the extension that named it (:attr:`.AgentSession.extension_skill_owners`), whose
``sourceInfo`` the skill's ``get_commands`` entry carries (``extendResources``,
resource-loader.js:339-345; cleared by a reload, :393).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pi_continuity_harness.simulator.context_files import (
    load_context_files,
    prompt_file,
    render_project_context,
)
from pi_continuity_harness.simulator.skill_dirs import skill_paths as all_skill_paths
from pi_continuity_harness.simulator.skills import (
    format_skills_for_prompt,
    load_skills,
    merge_paths,
    resolve_resource_path,
)

if TYPE_CHECKING:
    from pi_continuity_harness.simulator.agent_session import AgentSession

__all__ = [
    "extend_resources_from_extensions",
    "read_prompt_files",
    "reset_extension_resources",
]


def read_prompt_files(session: AgentSession, agent_dir: str, root: str, *, trusted: bool) -> None:
    """The resource loader's context files, ``SYSTEM.md`` and ``APPEND_SYSTEM.md``
    (resource-loader.js:482-511, after the extensions loaded, :429): read for each runtime and
    on every reload (:mod:`.context_files`), as the host's own reads."""
    with session.host_io():
        files = load_context_files(session.cwd, agent_dir, root)
        session.custom_prompt = prompt_file(session.cwd, agent_dir, "SYSTEM.md", trusted=trusted)
        session.prompt_addendum = prompt_file(session.cwd, agent_dir, "APPEND_SYSTEM.md", trusted=trusted)
    session.project_context = render_project_context(files)
    session.prompt_files_seen = session.prompt_files_seen or bool(
        files or session.custom_prompt or session.prompt_addendum
    )


def reset_extension_resources(session: AgentSession) -> None:
    """A reload's ``_resourceLoader.reload()`` (agent-session.js:3122): the skills and prompt
    paths extensions added are dropped (``lastSkillPaths`` recomputed from the settings,
    resource-loader.js:441-445; ``extensionSkillSourceInfos`` emptied, :393)."""
    session.extension_skill_paths = []
    session.skills = []
    session.skills_prompt = ""
    session.extension_skill_owners = {}


async def extend_resources_from_extensions(
    session: AgentSession, reason: Literal["startup", "reload"]
) -> None:
    """agent-session.js:2790-2805: dispatch ``resources_discover`` and load the skills named
    (the files read as the host's own, :attr:`.AgentSession.host_io`: Pi's loader, not a tool)."""
    runner = session.runner
    if runner is None or not runner.has_handlers("resources_discover"):
        return
    found = await runner.emit_resources_discover(session.cwd, reason)
    named = [(path, owner) for path, owner in found["skillPaths"] if isinstance(path, str)]
    skill_paths = [path for path, _ in named]
    if skill_paths:
        for path, owner in named:
            # A ``Map.set``: a path named again keeps its place and takes the later extension.
            session.extension_skill_owners[resolve_resource_path(path, session.cwd)] = owner
        with session.host_io():
            session.extension_skill_paths = merge_paths(
                session.extension_skill_paths, skill_paths, session.cwd
            )
            session.skills = load_skills(all_skill_paths(session), session.cwd)
        # ``read`` is always among the simulated session's tools (system-prompt.js:101-103).
        session.skills_prompt = format_skills_for_prompt(session.skills, "read")
        session.skills_seen = session.skills_seen or bool(session.skills_prompt)
    prompt_paths = [(path, owner) for path, owner in found["promptPaths"] if isinstance(path, str)]
    if prompt_paths:
        # After the skills (resource-loader.js:356-358): :mod:`.prompt_templates`.
        with session.host_io():
            session.prompt_templates.extend(prompt_paths, session.cwd)
