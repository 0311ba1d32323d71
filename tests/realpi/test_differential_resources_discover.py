"""Differential: a Python extension's ``resources_discover`` handler, real Pi 1.6 against the simulator.

After each ``session_start`` of a runtime Pi asks the extensions for more resources
(``dist/core/agent-session.js:2786-2805``, reason ``"startup"``; :3136-3139 after a reload,
``"reload"``); the skills a handler's ``skillPaths`` name are loaded (``dist/core/skills.js``
``loadSkills``) and listed in the system prompt's ``skills`` section, in the session's first
system message or as a section patch on the next run's system message after a reload
(``_preparePromptAndToolLoadout``, :1395-1400), and a ``/skill:<name>`` prompt expands to
the skill's body (``_expandSkillCommand``, :1820-1844). A handler that raises is an
``extension_error``.

The extension below records each call (its event's class, reason, and whether ``cwd`` is the
context's), returns a skills directory at startup and one skill file after the reload; a second
handler raises after the reload. The test asserts real Pi's record and requests explicitly,
then that the simulator's are the same (before the simulator dispatched the event, its record
was empty and its system prompt had no skills).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from realpi.test_differential_api_surface import notes
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

pytestmark = pytest.mark.realpi

_EXTENSION = """\
import json

SKILLS = {skills!r}
ONE = {one!r}


def extension(pi):
    def discover(event, ctx):
        seen = [event.type, type(event).__name__, event.reason, event.cwd == ctx.cwd]
        ctx.ui.notify("discover_" + event.reason + ": " + json.dumps(seen), "info")
        if event.reason == "startup":
            return {{"skillPaths": [SKILLS, "no-such-directory"], "themePaths": []}}
        return {{"skillPaths": [ONE]}}

    def fail(event, ctx):
        if event.reason == "reload":
            raise RuntimeError("discover failed")

    pi.on("resources_discover", discover)
    pi.on("resources_discover", fail)
"""


def _skills_section(prompt: str) -> str:
    return prompt[prompt.index("<skills>\n") : prompt.index("</skills>")]


def _skill(path: Path, front: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n\n# Body\n", encoding="utf-8")


def test_skills_a_resources_discover_handler_names_are_listed_in_the_system_prompt(
    targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skills = tmp_path / "skills"
    _skill(skills / "probe-skill" / "SKILL.md", "name: probe-skill\ndescription: Probe <this> & that")
    _skill(skills / "hidden" / "SKILL.md", "description: never listed\ndisable-model-invocation: true")
    _skill(skills / "loose.md", "name: loose\ndescription: a top-level markdown skill")
    (skills / "notes.md").write_text("no frontmatter: no skill\n", encoding="utf-8")
    _skill(skills / "nested" / "deeper" / "SKILL.md", "description: named after its directory")
    one = tmp_path / "other" / "solo" / "SKILL.md"
    _skill(one, "description: the only skill after the reload")
    directory = tmp_path / "extension"
    directory.mkdir()
    text = _EXTENSION.format(skills=str(skills), one=str(one))
    (directory / "discover_probe.py").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(directory))  # the bridge inherits it as PYTHONPATH
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    ops = [{"prompt": "/skill:probe-skill-unknown one"}, "reload", {"prompt": "/skill:solo  go on "}]
    real, sim = play(targets, sc, ops, "discover_probe:extension")

    found = notes(real)
    assert found["discover_startup"] == ["resources_discover", "ResourcesDiscoverEvent", "startup", True]
    assert found["discover_reload"] == ["resources_discover", "ResourcesDiscoverEvent", "reload", True]
    first, second = real.requests("agent")
    assert "<skills>\n" in first.request.system_prompt, first.request.system_prompt
    listed = first.request.system_prompt.split("<available_skills>")[1]
    assert "<name>probe-skill</name>" in listed and "Probe &lt;this&gt; &amp; that" in listed
    assert "<name>loose</name>" in listed and "<name>deeper</name>" in listed
    assert "hidden" not in listed and "notes" not in listed
    assert f"<location>{skills / 'probe-skill' / 'SKILL.md'}</location>" in listed
    # After the reload only the file the handler named again is listed.
    listed = second.request.system_prompt.split("<available_skills>")[1]
    assert "<name>solo</name>" in listed and "probe-skill" not in listed
    # ``/skill:<name>`` of a loaded skill is its body in a <skill> block (agent-session.js:1820-1844);
    # an unknown name stays as typed.
    assert first.last_user_text() == "/skill:probe-skill-unknown one"
    assert second.last_user_text() == (
        f'<skill name="solo" location="{one}">\nReferences are relative to {one.parent}.\n\n# Body\n</skill>\n\ngo on'
    )
    errors = [(e["event"], e["error"]) for e in real.session("extension_error")]
    assert errors == [("resources_discover", "discover failed")]
    system = [
        e["message"] for e in real.entries if e["type"] == "message" and e["message"]["role"] == "system"
    ]
    assert len(system) == 2 and list(system[1]["sections"]) == ["skills"], json.dumps(system[1])

    assert notes(sim) == found
    # The machine paths differ (same lengths, scenario/layout.py); the skills sections do not.
    assert [_skills_section(r.request.system_prompt) for r in sim.requests("agent")] == [
        _skills_section(first.request.system_prompt),
        _skills_section(second.request.system_prompt),
    ]
    assert [r.last_user_text() for r in sim.requests("agent")] == [
        first.last_user_text(),
        second.last_user_text(),
    ]
    assert [(e["event"], e["error"]) for e in sim.session("extension_error")] == errors
    assert_equivalent(real, sim)


_COUNTING = """\
import json

CALLS = []


def extension(pi):
    def discover(event, ctx):
        CALLS.append(event.reason)
        ctx.ui.notify("discover: " + json.dumps(CALLS), "info")

    pi.on("resources_discover", discover)
"""


def test_a_new_session_asks_for_resources_again_as_startup(
    targets: Targets, python_extension: Callable[[str, str], str]
) -> None:
    """RPC mode binds every new runtime (``rpc-mode.js:249``, ``bindExtensions``), whose
    ``session_start`` reason is ``new``: ``resources_discover`` says ``startup``
    (agent-session.js:2788)."""
    python_extension("discover_count", _COUNTING)
    sc = scenario({"agent": []})
    real, sim = play(targets, sc, ["new_session"], "discover_count:extension")
    assert notes(real)["discover"] == ["startup", "startup"]
    assert notes(sim) == notes(real)
    assert_equivalent(real, sim)


_STEADY = """\
SKILL = {skill!r}


def extension(pi):
    pi.on("resources_discover", lambda event, ctx: {{"skillPaths": [SKILL]}})
"""


def test_a_restarted_process_that_names_the_same_skills_patches_nothing(
    targets: Targets, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed session whose transcript already lists the skills the handler names again:
    the prompt sections are unchanged, so the next run carries no system message
    (``diffSystemPromptSections`` finds nothing, system-prompt.js:139-150)."""
    skill = tmp_path / "skills" / "steady" / "SKILL.md"
    _skill(skill, "description: always there")
    directory = tmp_path / "extension"
    directory.mkdir()
    (directory / "discover_steady.py").write_text(_STEADY.format(skill=str(skill)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(directory))
    sc = scenario({"agent": [{"text": "first reply"}, {"text": "second reply"}]})
    real, sim = play(
        targets, sc, [{"prompt": "one"}, "restart", {"prompt": "two"}], "discover_steady:extension"
    )
    roles = [e["message"]["role"] for e in real.entries if e["type"] == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    first, second = real.requests("agent")
    assert "<name>steady</name>" in first.request.system_prompt
    assert second.request.system_prompt == first.request.system_prompt
    assert [e["message"]["role"] for e in sim.entries if e["type"] == "message"] == roles
    assert_equivalent(real, sim)
