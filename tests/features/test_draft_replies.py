"""A reply a Given step scripts before the target starts is kept as data in the scenario draft
and read back on build: it must come back equal, ``during`` operations included. Before, the
draft kept ``reply.model_dump_json(exclude_defaults=True)``, which wrote ``abort`` and
``compact: {}`` as ``{}`` (no longer an operation: the build failed) and dropped a given
``json: null`` (the ``edit_file`` then wrote no JSON)."""

from __future__ import annotations

import pytest

from pi_continuity_harness.features.world import ScenarioDraft
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply

_DURING = [
    "abort",
    {"compact": {}},
    {"edit_file": {"path": "notes.json", "json": None}},
    {"edit_file": {"path": "notes.txt", "text": ""}},
    {"command": {"text": "/psc status", "answers": [{"confirm": True, "during": ["reload"]}]}},
    {"prompt": {"text": "next", "streaming_behavior": "followUp"}},
]


@pytest.mark.parametrize("index", range(len(_DURING)))
def test_a_scripted_reply_with_during_operations_builds_back_equal(index: int) -> None:
    reply = Reply.model_validate({"text": "working", "during": [_DURING[index]]})
    draft = ScenarioDraft("draft")
    draft.script("agent", reply)
    assert draft.build().model.agent == (reply,)


def test_a_scripted_synthesis_reply_builds_back_equal() -> None:
    reply = SynthesisReply.model_validate({"kind": "raw", "text": "brief", "during": _DURING})
    draft = ScenarioDraft("draft")
    draft.script("extension", reply)
    assert draft.build().model.extension == (reply,)
