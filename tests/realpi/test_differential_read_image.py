"""Differential: Pi 1.6's ``read`` of an image file, real Pi against the simulator.

Pi detects an image by its first bytes (``dist/utils/mime.js``) and sends it to the model as an
image block after the text ``Read image file [<type>]``; Photon passes a picture of at most
2,000 by 2,000 pixels through unchanged (``image-resize-core.js:36-61``), and a model whose
``input`` lacks ``image`` is named in ``details.imageUnsupportedByModel`` (read.js:210-229) and
gets pi-ai's placeholder instead of the picture. The simulator read such a file as UTF-8 text
until this test (``simulator/read_image.py``). A BMP, which Photon converts to PNG, is not
modelled: the simulator fails that call with a message saying so.
"""

from __future__ import annotations

from typing import Any

import pytest
from realpi.test_differential_fidelity import Targets, assert_equivalent, play, scenario

from pi_continuity_harness.targets.target import Observation

pytestmark = pytest.mark.realpi

#: Small pictures, one of each type Photon passes through.
PICTURES = {
    "p.png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "p.gif": "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
    "p.webp": "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==",
    # 16x16, CPython's Lib/test/test_email/data/python.jpg.
    "p.jpg": (
        "/9j/4AAQSkZJRgABAQEAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDREN"
        "Dg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ"
        "EBAQEBAQEBAQEBAQEBD/wAARCAAQABADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAABwQF/8QAJBAAAQQBBAICAwAA"
        "AAAAAAAAAQIDBAYFBwgSExEiABQJMTL/xAAVAQEBAAAAAAAAAAAAAAAAAAAABv/EACMRAAECBQMFAAAAAAAAAAAAAAECEQME"
        "BQYhABIxFRZhgeH/2gAMAwEAAhEDEQA/ABSm0mobc8HmExLUlRzzEWPkJWW+ulrsaUVAseUgslSlH9LKuPryIKuWPZdskzXm"
        "m3fX5m2nF4GlVxx/HOpx4ks51+MiU/Iaad7UcUo4tILoS4kqcWkezS0hO/HvuRp0rO6hWnWO1UisZVuFi4GFeyEpmGepa5S5"
        "SWVPuciFKRFLgSrwetnyPIB+Vb4N9mKhQMzo5po9XLdDs9d6ZVix2VEhiL9kuNPxw2gEKcDQ/rs8AuA8VAe0vdl7VOYn+27f"
        "lGAUgmITjbhSmCg3BYlyeWDkMolvw4KOp1KM6iCNvngZHwetf//Z"
    ),
}


def _results(observation: Observation) -> list[dict[str, Any]]:
    return [e["message"] for e in observation.entries if e.get("message", {}).get("role") == "toolResult"]


@pytest.mark.parametrize("image_input", [True, False], ids=["model-with-image-input", "model-without"])
def test_an_image_file_is_read_as_an_image(targets: Targets, image_input: bool) -> None:
    calls = [
        {"name": "read", "arguments": {"path": f"pics/{name}"}, "id": f"c{i}"}
        for i, name in enumerate(PICTURES)
    ]
    replies = [{"text": "reading", "tool_calls": [call]} for call in calls] + [{"text": "DONE"}]
    files = {f"pics/{name}": {"base64": data} for name, data in PICTURES.items()}
    model: dict[str, Any] = {"id": "fake/fake-model", "context_window": 20000, "max_tokens": 1000}
    model["images"] = image_input
    sc = scenario({"agent": replies}, files=files, models=[model])
    real, sim = play(targets, sc, [{"prompt": "look"}])
    results = _results(real)
    assert [r["content"][0]["text"] for r in results] == [
        "Read image file [image/png]",
        "Read image file [image/gif]",
        "Read image file [image/webp]",
        "Read image file [image/jpeg]",
    ]
    assert [r["content"][1]["data"] for r in results] == list(PICTURES.values())
    assert all(("details" in r) is not image_input for r in results)
    assert_equivalent(real, sim)
