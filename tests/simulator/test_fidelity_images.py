"""Fidelity of prompt images (issue 11 item 1): what pi-ai 1.6 sends for an image in a user
prompt, to a model without image input and to one with it.

``PA`` = ``@earendil-works/pi-ai/dist``, ``CA`` = ``@earendil-works/pi-coding-agent/dist``.
Each case is also played on both targets by ``tests/realpi/test_differential_images.py``.
"""

from __future__ import annotations

import base64
import json
import struct
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.api.extension_api import Model
from pi_continuity_harness.cli import main
from pi_continuity_harness.errors import ScenarioError
from pi_continuity_harness.scenario import parse_scenario
from pi_continuity_harness.simulator.provider import (
    NON_VISION_TOOL_IMAGE_PLACEHOLDER,
    NON_VISION_USER_IMAGE_PLACEHOLDER,
    request_body,
)

from .helpers import base, run, session_entries


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width: int = 1, height: int = 1, data: bytes | None = None, depth: int = 8, level: int = -1) -> str:
    """Base64 of a well-formed RGB PNG of ``width`` x ``height`` black pixels (``data``: other
    image data to deflate, which need not match the header; ``depth``: the header's bit depth)."""
    rows = (b"\x00" + b"\x00\x00\x00" * width) * height if data is None else data
    raw = (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, 2, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress(rows, level))
        + _chunk(b"IEND", b"")
    )
    return base64.b64encode(raw).decode("ascii")


PIXEL = png()
IMAGE = {"data": PIXEL, "mimeType": "image/png"}
TEXT_ONLY = Model("fake", "fake-model", 20000, 1000)
VISION = Model("fake", "fake-vision", 20000, 1000, input=("text", "image"))


def image_scenario(images: bool) -> dict[str, Any]:
    return base(
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": images}],
        model={"agent": [{"text": "seen"}, {"text": "again"}]},
        operations=[{"prompt": {"text": "look", "images": [IMAGE, IMAGE]}}, {"prompt": "and now"}],
    )


def agent_bodies(result: Any) -> list[dict[str, Any]]:
    return [r.body for r in result.host.service.requests if r.kind == "agent"]


# ======================================================= PA api/transform-messages.js:1-2, 22-56
def test_a_prompt_image_becomes_a_placeholder_for_a_model_without_image_input(tmp_path: Path) -> None:
    """``downgradeUnsupportedImages``: the run of two images is one placeholder, in every
    request; the session keeps the images (the rewrite is the request's only)."""
    result = run(tmp_path, image_scenario(images=False))
    expected_user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "text", "text": NON_VISION_USER_IMAGE_PLACEHOLDER},
        ],
    }
    bodies = agent_bodies(result)
    assert [b["messages"][1] for b in bodies] == [expected_user, expected_user]
    [first_user, _] = [
        e["message"]
        for e in session_entries(result)
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert first_user["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
    ]


# ======================================================= CA core/agent-session.js:1888-1914
@pytest.mark.parametrize("behavior", ["steer", "followUp"])
def test_a_queued_prompt_keeps_its_images(tmp_path: Path, behavior: str) -> None:
    """``_queueSteer``/``_queueFollowUp``: the queued user message is the text, then the images."""
    queued = {"prompt": {"text": "later", "images": [IMAGE], "streaming_behavior": behavior}}
    scenario = base(
        models=[{"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000, "images": True}],
        model={"agent": [{"text": "slow", "during": [queued]}, {"text": "next"}]},
        operations=[{"prompt": "first"}],
    )
    result = run(tmp_path, scenario)
    url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    assert agent_bodies(result)[-1]["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "later"}, url],
    }


# ======================================================= PA api/openai-completions.js:926-941
def test_a_prompt_image_goes_as_an_image_url_to_a_model_with_image_input(tmp_path: Path) -> None:
    result = run(tmp_path, image_scenario(images=True))
    url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    expected_user = {"role": "user", "content": [{"type": "text", "text": "look"}, url, url]}
    assert [b["messages"][1] for b in agent_bodies(result)] == [expected_user, expected_user]


def test_the_placeholder_after_a_placeholder_text_adds_none() -> None:
    """``replaceImagesWithPlaceholder`` (PA transform-messages.js:22-36): an image right after
    a text block that is the placeholder adds no second one; after other text it does."""
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    content = [
        {"type": "text", "text": NON_VISION_USER_IMAGE_PLACEHOLDER},
        image,
        {"type": "text", "text": "between"},
        image,
    ]
    body = request_body(TEXT_ONLY, [{"role": "user", "content": content, "timestamp": 0}])
    assert [p["text"] for p in body["messages"][0]["content"]] == [
        NON_VISION_USER_IMAGE_PLACEHOLDER,
        "between",
        NON_VISION_USER_IMAGE_PLACEHOLDER,
    ]


def test_tool_result_images_follow_the_tool_results_for_a_model_with_image_input() -> None:
    """PA openai-completions.js:1058-1113 (text model: PA transform-messages.js:49-53). No
    scenario can make a tool return an image yet, so this is checked on the request builder
    alone, not on real Pi."""
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 0},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "shot", "arguments": {}},
                {"type": "toolCall", "id": "c2", "name": "shot", "arguments": {}},
            ],
            "stopReason": "toolUse",
            "provider": "fake",
            "api": "openai-completions",
            "model": "fake-model",
        },
        {"role": "toolResult", "toolCallId": "c1", "toolName": "shot", "content": [image], "isError": False},
        {
            "role": "toolResult",
            "toolCallId": "c2",
            "toolName": "shot",
            "content": [{"type": "text", "text": "two"}, image],
            "isError": False,
        },
    ]
    url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    vision = request_body(VISION, messages)["messages"][2:]
    assert vision == [
        {"role": "tool", "content": "(see attached image)", "tool_call_id": "c1"},
        {"role": "tool", "content": "two", "tool_call_id": "c2"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, url, url],
        },
    ]
    text_only = request_body(TEXT_ONLY, messages)["messages"][2:]
    assert text_only == [
        {"role": "tool", "content": NON_VISION_TOOL_IMAGE_PLACEHOLDER, "tool_call_id": "c1"},
        {"role": "tool", "content": f"two\n{NON_VISION_TOOL_IMAGE_PLACEHOLDER}", "tool_call_id": "c2"},
    ]


# ======================================================= load-time validation
@pytest.mark.parametrize(
    ("image", "message"),
    [
        ({"data": "not base64!", "mimeType": "image/png"}, "images[0].data: not base64"),
        (
            {"data": base64.b64encode(b"GIF89a").decode(), "mimeType": "image/png"},
            "images[0].data: not a PNG (no PNG signature)",
        ),
        (
            {
                "data": base64.b64encode(base64.b64decode(PIXEL)[:-1] + b"\x00").decode(),
                "mimeType": "image/png",
            },
            "images[0].data: PNG chunk IEND has a bad CRC",
        ),
        (
            {"data": png(2001, 1), "mimeType": "image/png"},
            "images[0].data: a 2001x1 PNG would be resized by Pi",
        ),
        ({"data": PIXEL, "mimeType": "image/gif"}, "images[0].mimeType: Input should be 'image/png'"),
        ({"data": PIXEL}, "images[0].mimeType: Field required"),
        (
            {"data": png(1, 1, b"\x00" * (4 << 20), level=9), "mimeType": "image/png"},
            "images[0].data: PNG image data inflates to more than the 4 bytes its IHDR (1x1) declares",
        ),
        (
            {"data": png(2, 1, b"\x00\x00"), "mimeType": "image/png"},
            "images[0].data: PNG image data inflates to 2 bytes, not the 7 its IHDR (2x1) declares",
        ),
        (
            {"data": png(1, 1, depth=3), "mimeType": "image/png"},
            "images[0].data: PNG IHDR has bit depth 3 with colour type 2, which PNG has not",
        ),
    ],
    ids=[
        "base64",
        "signature",
        "crc",
        "too-big",
        "mime-type",
        "no-mime-type",
        "more-data",
        "less-data",
        "depth",
    ],
)
def test_a_bad_prompt_image_is_refused_naming_the_field(image: dict[str, Any], message: str) -> None:
    data = image_scenario(images=False)
    data["operations"] = [{"prompt": {"text": "look", "images": [image]}}]
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data, "bad.yaml")
    assert f"bad.yaml: operations[0].prompt.{message}" in str(raised.value)


def test_a_png_whose_data_inflates_far_beyond_its_header_is_refused_without_inflating_it() -> None:
    """An image bomb: a 1x1 PNG whose IDAT is 64 MiB of deflated zeros (64 KB of base64; the
    audit's 3.2 GB in 4.3 MB took ``simulate`` to 6.6 GB of memory). Before, ``zlib.decompress``
    inflated it all and accepted it; now the data is inflated with the header's size as the
    bound and refused, using a few kilobytes."""
    bomb = png(1, 1, b"\x00" * (64 << 20), level=9)
    assert len(bomb) < 100_000
    data = image_scenario(images=False)
    data["operations"] = [{"prompt": {"text": "look", "images": [{"data": bomb, "mimeType": "image/png"}]}}]
    tracemalloc.start()
    try:
        with pytest.raises(
            ScenarioError, match=r"inflates to more than the 4 bytes its IHDR \(1x1\) declares"
        ):
            parse_scenario(data, "bomb.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


@pytest.mark.parametrize(("width", "height"), [(1, 1), (3, 5), (9, 10), (17, 3)])
def test_an_interlaced_png_is_accepted_at_the_size_its_header_declares_and_refused_one_byte_short(
    width: int, height: int
) -> None:
    """Adam7 (PNG spec 8.2): seven passes, each row with its filter byte; an empty pass has none.
    The sizes agree with Pillow's decoder, which reports the image truncated one byte short
    (before, any data that inflated was accepted)."""
    passes = (
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    )
    size = 0
    for x, y, dx, dy in passes:
        columns, rows = max(0, -(-(width - x) // dx)), max(0, -(-(height - y) // dy))
        size += rows * (1 + 3 * columns) if columns and rows else 0
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 1))

    def scenario(data_size: int) -> dict[str, Any]:
        raw = b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", zlib.compress(b"\x00" * data_size))
        image = {"data": base64.b64encode(raw + _chunk(b"IEND", b"")).decode(), "mimeType": "image/png"}
        data = image_scenario(images=False)
        data["operations"] = [{"prompt": {"text": "look", "images": [image]}}]
        return data

    parse_scenario(scenario(size), "interlaced.yaml")
    with pytest.raises(ScenarioError, match=f"inflates to {size - 1:,} bytes, not the {size:,} its IHDR"):
        parse_scenario(scenario(size - 1), "interlaced.yaml")


# ======================================================= CA utils/image-resize-core.js:39, 53-62
def padded_png(size: int) -> bytes:
    """A well-formed 1x1 grey PNG of exactly ``size`` bytes, made up to size with a private
    ancillary chunk (``prVt``), which PNG decoders skip."""
    head = (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress(b"\x00\x00"))
    )
    tail = _chunk(b"IEND", b"")
    raw = head + _chunk(b"prVt", b"\x00" * (size - len(head) - len(tail) - 12)) + tail
    assert len(raw) == size
    return raw


def sized_png(base64_chars: int) -> str:
    """Base64 of exactly ``base64_chars`` characters (a multiple of 4) of :func:`padded_png`."""
    return base64.b64encode(padded_png(base64_chars // 4 * 3)).decode("ascii")


#: Pi's ``maxBytes``: 4.5 MiB of base64 (image-resize-core.js:9), kept when strictly below (:54).
LIMIT = 4718592


@pytest.mark.parametrize(
    ("data", "refusal"),
    [
        (png(2000, 2000), None),
        (png(2001, 1), "a 2001x1 PNG would be resized by Pi"),
        (png(1, 2001), "a 1x2001 PNG would be resized by Pi"),
        (sized_png(LIMIT - 4), None),
        (sized_png(LIMIT), "larger than Pi's 4.5 MB inline limit"),
    ],
    ids=["2000x2000", "2001x1", "1x2001", "just-under-4.5MiB", "at-4.5MiB"],
)
def test_an_image_within_pis_resize_limits_is_accepted_and_one_past_them_refused_naming_file_and_field(
    data: str, refusal: str | None
) -> None:
    """Pi keeps an image when ``width <= 2000 && height <= 2000 && base64 length < 4718592``
    (``CA utils/image-resize-core.js:9-15, 39, 54``) and otherwise resizes or re-encodes it
    (measured on Pi 1.6.0's ``processImage``: 2001x1 and 4,718,592 characters come back changed
    with a dimension note, 1x2001 as a JPEG), which the simulator does not model."""
    scenario = image_scenario(images=False)
    scenario["operations"] = [
        {"prompt": {"text": "look", "images": [{"data": data, "mimeType": "image/png"}]}}
    ]
    if refusal is None:
        parse_scenario(scenario, "limits.yaml")
        return
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(scenario, "limits.yaml")
    assert f"limits.yaml: operations[0].prompt.images[0].data: {refusal}" in str(raised.value)


def non_canonical(data: str) -> str:
    """``data`` with non-zero padding bits: the same bytes to a decoder, other characters."""
    assert data.endswith("==")
    last = data[-3]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    changed = data[:-3] + alphabet[alphabet.index(last) + 1] + "=="
    assert base64.b64decode(changed) == base64.b64decode(data) and changed != data
    return changed


def test_base64_that_pi_would_re_encode_is_refused_naming_file_and_field() -> None:
    """Pi sends ``Buffer.from(bytes).toString("base64")`` of a kept image (``CA
    utils/image-resize-core.js:56``), so base64 with non-zero padding bits goes out changed
    (measured on Pi 1.6.0's ``processImage`` and ``normalizeToolResultImages``: ``...gh==``
    comes back ``...gg==``, no note). Before, the simulator accepted it and sent it as given."""
    data = base64.b64encode(padded_png(82)).decode("ascii")  # 82 = 3 * 27 + 1: ends in "=="
    parse_scenario(
        {
            **image_scenario(images=False),
            "operations": [{"prompt": {"text": "look", "images": [{"data": data, "mimeType": "image/png"}]}}],
        },
        "canonical.yaml",
    )
    scenario = image_scenario(images=False)
    scenario["operations"] = [
        {"prompt": {"text": "look", "images": [{"data": non_canonical(data), "mimeType": "image/png"}]}}
    ]
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(scenario, "padding.yaml")
    assert "padding.yaml: operations[0].prompt.images[0].data: not canonical base64: Pi re-encodes it" in str(
        raised.value
    )


def test_an_image_pi_would_change_stops_simulate_with_one_line_naming_file_and_field_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal reaches the command line as the other load-time errors do: one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    scenario = image_scenario(images=False)
    scenario["operations"] = [
        {"prompt": {"text": "look", "images": [{"data": sized_png(LIMIT), "mimeType": "image/png"}]}}
    ]
    (tmp_path / "big.yaml").write_text(json.dumps(scenario), encoding="utf-8")
    assert main(["simulate", "big.yaml", "--workdir", "run"]) == 2
    assert capsys.readouterr().err == (
        "pi-continuity-harness simulate: big.yaml: operations[0].prompt.images[0].data: "
        "larger than Pi's 4.5 MB inline limit (resizing is not modelled)\n"
    )
