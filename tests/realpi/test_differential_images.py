"""Differential fidelity of prompt images (issue 11 item 1): a prompt with images, sent by RPC
``prompt.images`` to real Pi and by the simulator, to a model without image input (pi-ai's
placeholder, ``@earendil-works/pi-ai/dist/api/transform-messages.js:1-2, 37-56``) and to one with
it (``image_url`` parts, ``dist/api/openai-completions.js:926-941``): the request bodies are
identical, and the whole records too (no tolerance). The simulator's side is
``tests/simulator/test_fidelity_images.py``.
"""

from __future__ import annotations

import base64
import struct
import zlib
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


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _grey_png(width: int, height: int, padding: int = 0) -> str:
    """Base64 of a black grey-scale PNG, with a ``prVt`` chunk of ``padding`` zero bytes (a
    private ancillary chunk, which decoders skip) to set its size."""
    raw = (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress((b"\x00" * (width + 1)) * height, 9))
        + (_chunk(b"prVt", b"\x00" * padding) if padding else b"")
        + _chunk(b"IEND", b"")
    )
    return base64.b64encode(raw).decode("ascii")


#: 4,718,588 characters of base64, four under Pi's 4.5 MiB ``maxBytes`` (image-resize-core.js:9, 54).
JUST_UNDER = _grey_png(1, 1, 4718588 // 4 * 3 - 79)


@pytest.mark.parametrize(
    "data",
    [_grey_png(2000, 2000), JUST_UNDER],
    ids=["2000x2000", "4718588-chars"],
)
def test_an_image_just_within_pis_resize_limits_is_sent_unchanged_on_both(
    targets: Targets, data: str
) -> None:
    """Pi keeps an image when ``width <= 2000 && height <= 2000 && base64 length < 4718592``
    (``CA utils/image-resize-core.js:39, 53-62``); the scenario format accepts exactly those
    (one past either limit is refused at load: tests/simulator/test_fidelity_images.py), so both
    targets send the image byte for byte."""
    assert len(JUST_UNDER) == 4718588
    sc = scenario(
        {"agent": [{"text": "seen"}]},
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
    )
    real, sim = play(
        targets, sc, [{"prompt": {"text": "look", "images": [{"data": data, "mimeType": "image/png"}]}}]
    )
    url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
    real_bodies = agent_bodies(real)
    assert real_bodies[0]["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "look"}, url],
    }
    assert agent_bodies(sim) == real_bodies
    assert_equivalent(real, sim)
