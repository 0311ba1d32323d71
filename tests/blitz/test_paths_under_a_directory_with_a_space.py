"""A blitz run under a directory with a space reads its paths whole.

On real Pi under ``--workdir "/tmp/pch review/w"`` 46 of the 249 blitz scenarios failed for the
reference: the scripted model found the dossier path in the template response with a path
pattern that stopped at whitespace, so it took ``/w/.../handoff_<id>.md`` (the part after the
space); the harness refused that write outside the run, and no Finish followed. The receiver's
``rm -f <path>`` split there too. Now the oracle's path patterns start with
:data:`~pi_continuity_harness.scenario.ROOT_MARK` (the run's directory, which both targets give
the scripted model), hold no quote character, and the scripted ``rm`` puts its path in single
quotes, which both targets read as bash does. On a directory without a space, every pattern
reads what it read before (the property below), and the 232 PSC and 249 blitz suite traces are
byte-identical but for two that write to an unmatched placeholder, whose text holds the pattern.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.features.steps import blitz as steps
from pi_continuity_harness.reference.blitz import messages
from pi_continuity_harness.scenario import ROOT_MARK, expand_root
from pi_continuity_harness.scenario.model_script import ModelRequest, ScriptedToolCall, resolve_tool_calls

ROOT = "/tmp/pch review/w"
DOSSIER = f"{ROOT}/machine/project/.pi/handoff_0193-abc.md"


def _response() -> str:
    return messages.get_response(
        template_text="# Handoff\n\nRun /sh cancel to stop.\n",
        dossier=DOSSIER,
        transcript=f"{ROOT}/machine/agent/sessions/s.jsonl",
        session_id="0193-abc",
        finish_id="fid-0193-1",
        pending_call=None,
        repeated=False,
    )


def _resolved(arguments: dict[str, str], text: str, root: str | None) -> dict[str, object]:
    request = ModelRequest(
        kind="agent",
        index=0,
        model="fake/m",
        system_prompt=None,
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
    )
    call = ScriptedToolCall(name="bash", arguments=arguments)
    return resolve_tool_calls(request, (call,), root=root)[0].arguments


def test_the_dossier_path_of_the_references_template_response_is_read_whole() -> None:
    assert _resolved({"path": steps.DOSSIER_FILE}, _response(), ROOT) == {"path": DOSSIER}


def test_without_the_runs_directory_the_path_pattern_stops_at_the_space_as_it_did() -> None:
    """The failure this fixes: the part after the space, a path outside the run."""
    assert _resolved({"path": steps.DOSSIER_FILE}, _response(), None) == {
        "path": "/w/machine/project/.pi/handoff_0193-abc.md"
    }


def test_the_receivers_read_and_quoted_rm_name_the_whole_dossier() -> None:
    prompt = messages.bootstrap_prompt(DOSSIER, delete_after_reading=True)
    assert _resolved({"path": steps.DOSSIER_FILE}, prompt, ROOT) == {"path": DOSSIER}
    assert _resolved({"command": "rm -f '" + steps.DELETE_FILE + "'"}, prompt, ROOT) == {
        "command": f"rm -f '{DOSSIER}'"
    }


def test_the_oracle_reads_a_deletion_instruction_for_a_path_with_a_space() -> None:
    assert oracle.instructs_deletion(messages.bootstrap_prompt(DOSSIER, delete_after_reading=True), DOSSIER)
    assert not oracle.instructs_deletion(
        messages.bootstrap_prompt(DOSSIER, delete_after_reading=False), DOSSIER
    )
    assert oracle.instructs_retention(messages.bootstrap_prompt(DOSSIER, delete_after_reading=False), DOSSIER)


def test_the_path_patterns_hold_no_quote_so_a_script_can_single_quote_them_matched_or_not() -> None:
    for pattern in (oracle.DOSSIER_MATCH, oracle.DELETION_MATCH):
        assert "'" not in pattern and '"' not in pattern, pattern
        assert ROOT_MARK in pattern, pattern


_DIR_CHARS = "ab/._-"
_TEXT_PIECES = st.sampled_from(
    [" ", "/", "a", "b", ".", "-", "/.pi/", "handoff_x1.md", ".md", "remove ", "delete ", "not ", ": ", "\n"]
)
_UNDER_ROOT = st.sampled_from(["/.pi/handoff_x1.md", "/p/.pi/handoff_x1.md", "/x.md", "/notes", ""])


@given(
    root=st.text(alphabet=_DIR_CHARS, min_size=1, max_size=8).map(lambda s: "/" + s),
    before=st.lists(_TEXT_PIECES, max_size=8),
    under=_UNDER_ROOT,
    after=st.lists(_TEXT_PIECES, max_size=6),
)
def test_the_root_mark_changes_nothing_under_a_directory_without_spaces(
    root: str, before: list[str], under: str, after: list[str]
) -> None:
    """Under a directory whose name a path pattern already reads (no whitespace, quotes or
    brackets), the expanded pattern finds exactly what the comment-only one finds: the
    simulator's machine root is such a directory, so its runs read what they read before.
    (With a space in ``_DIR_CHARS`` this fails at once: that is the case the mark is for.)"""
    text = "".join(before) + root + under + "".join(after)
    for pattern in (oracle.DOSSIER_MATCH, oracle.DELETION_MATCH):
        found = [m.group(1) for m in re.finditer(pattern, text)]
        expanded = [m.group(1) for m in re.finditer(expand_root(pattern, root), text)]
        assert expanded == found, (pattern, text)


def test_a_path_with_a_space_is_never_read_as_words() -> None:
    """Under ``/tmp/x delete/w`` the words "delete" and "keep" are the directory's, not the
    prompt's: the oracle reads the reference's "leave it unchanged" prompt as retention, and
    the steps' word checks see ``<path>`` in place of the whole path."""
    root = "/tmp/x delete/keep w"
    dossier = f"{root}/machine/project/.pi/handoff_0193-abc.md"
    keep = messages.bootstrap_prompt(dossier, delete_after_reading=False)
    assert oracle.instructs_retention(keep, dossier)
    assert not oracle.instructs_deletion(keep, dossier)
    assert oracle.without_paths(f"read {dossier} now", f"{root}/machine") == "read <path> now"
    # Without the directory, its words stay: the failure this avoids.
    assert oracle.without_paths(f"read {dossier} now") == "read <path> delete<path> w<path> now"


def test_a_verb_in_the_directorys_name_is_not_the_deletion_instruction() -> None:
    """Under ``/tmp/x delete/keep w`` the scripted receiver's ``rm`` names the dossier: "delete"
    followed by ``/`` is a directory of the path. Read as the verb, the path after it in the same
    path (``/keep w/...`` cut at the space) was taken, and on real Pi the dossier stayed
    (``tests/realpi/test_blitz_under_a_directory_with_a_space.py``)."""
    root = "/tmp/x delete/keep w"
    dossier = f"{root}/machine/project/.pi/handoff_0193-abc.md"
    prompt = messages.bootstrap_prompt(dossier, delete_after_reading=True)
    assert _resolved({"command": "rm -f '" + steps.DELETE_FILE + "'"}, prompt, root) == {
        "command": f"rm -f '{dossier}'"
    }
