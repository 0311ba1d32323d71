"""Differential fidelity of prompt images (issue 11 item 1): a prompt with images, sent by RPC
``prompt.images`` to real Pi and by the simulator, to a model without image input (pi-ai's
placeholder, ``@earendil-works/pi-ai/dist/api/transform-messages.js:1-2, 37-56``) and to one with
it (``image_url`` parts, ``dist/api/openai-completions.js:926-941``): the request bodies are
identical, and the whole records too (no tolerance). The simulator's side is
``tests/simulator/test_fidelity_images.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_differential_fidelity import assert_equivalent, play, scenario

from pi_continuity_harness.targets.realpi import PiTarget
from pi_continuity_harness.targets.sim import SimTarget
from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

Targets = Callable[..., PiTarget | SimTarget]
#: A 1x1 black RGB PNG (``png()`` of tests/simulator/test_fidelity_images.py).
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYGAAAAAEAAH2FzhVAAAAAElFTkSuQmCC"
IMAGE = {"data": PIXEL, "mimeType": "image/png"}
URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
PLACEHOLDER = {"type": "text", "text": "(image omitted: model does not support images)"}


def agent_bodies(observation: Observation) -> list[dict[str, Any]]:
    """Each agent request's body, all of it but the system prompt (which names the work
    directory and the install path: the whole-record comparison neutralises those)."""
    bodies = [r.request.body for r in observation.requests("agent")]
    assert all(b is not None for b in bodies)
    return [{**b, "messages": b["messages"][1:]} for b in bodies if b is not None]


@pytest.mark.parametrize(
    ("images", "sent"),
    [(False, [PLACEHOLDER]), (True, [URL, URL])],
    ids=["model-without-image-input", "model-with-image-input"],
)
def test_prompt_images_are_sent_as_pi_ai_sends_them(targets: Targets, images: bool, sent: list[Any]) -> None:
    sc = scenario(
        {"agent": [{"text": "seen"}, {"text": "again"}]},
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": images}],
    )
    ops = [{"prompt": {"text": "look", "images": [IMAGE, IMAGE]}}, {"prompt": "and now"}]
    real, sim = play(targets, sc, ops)
    real_bodies = agent_bodies(real)
    assert [b["messages"][0] for b in real_bodies] == [
        {"role": "user", "content": [{"type": "text", "text": "look"}, *sent]}
    ] * 2
    assert agent_bodies(sim) == real_bodies
    assert_equivalent(real, sim)


@pytest.mark.parametrize("behavior", ["steer", "followUp"])
def test_a_queued_prompt_keeps_its_images(targets: Targets, behavior: str) -> None:
    queued = {"prompt": {"text": "later", "images": [IMAGE], "streaming_behavior": behavior}}
    sc = scenario(
        {"agent": [{"text": "slow", "during": [queued]}, {"text": "next"}]},
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
    )
    real, sim = play(targets, sc, [{"prompt": "first"}])
    real_bodies = agent_bodies(real)
    assert real_bodies[-1]["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "later"}, URL],
    }
    assert agent_bodies(sim) == real_bodies
    assert_equivalent(real, sim)
