"""Pi 1.6's ``read`` of an image file: detected by its bytes, sent to the model as an image block.

``read.js:210-229`` asks ``detectSupportedImageMimeTypeFromFile`` (``dist/utils/mime.js``: the
first 4,100 bytes; JPEG, non-animated PNG, GIF, WebP, BMP) and hands an image to
``processImage`` (``dist/utils/image-process.js``): PNG, JPEG, GIF and WebP keep their type, and
Photon's resize (``image-resize-core.js:36-61``) returns the file's own bytes when the picture
is at most 2,000 by 2,000 pixels and its base64 under 4.5 MB. The result is the text
``Read image file [<type>]`` and the image (base64), with ``details.imageUnsupportedByModel``
naming a model whose ``input`` lacks ``image`` (read.js:221-224).

Modelled: that pass-through, with the size read from the file's header (PNG ``IHDR``, GIF's
screen, JPEG's first frame, WebP's VP8/VP8L/VP8X). Not modelled, and failed with a message that
says so: a BMP (Photon converts it to PNG), a larger picture (Photon re-encodes it), and a
header this module cannot read. A file whose header is an image's but whose pixels do not
decode passes here where Photon fails it.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

__all__ = ["IMAGE_SNIFF_BYTES", "ImageNotModelledError", "detect_image_mime", "read_image"]

#: mime.js:2.
IMAGE_SNIFF_BYTES = 4100
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: image-resize-core.js:9-15.
_MAX_SIDE = 2000
_MAX_BASE64_BYTES = 4.5 * 1024 * 1024


class ImageNotModelledError(Exception):
    """What Pi does with this image (convert or re-encode it with Photon) is not modelled."""


def _u32be(buf: bytes, offset: int) -> int:
    return int.from_bytes(buf[offset : offset + 4].ljust(4, b"\0"), "big")


def _u32le(buf: bytes, offset: int) -> int:
    return int.from_bytes(buf[offset : offset + 4].ljust(4, b"\0"), "little")


def _u16le(buf: bytes, offset: int) -> int:
    return int.from_bytes(buf[offset : offset + 2].ljust(2, b"\0"), "little")


def _is_png(buf: bytes) -> bool:
    """``isPng`` (mime.js:33-35): the first chunk is a 13-byte ``IHDR``."""
    return len(buf) >= 16 and _u32be(buf, 8) == 13 and buf[12:16] == b"IHDR"


def _is_animated_png(buf: bytes) -> bool:
    """``isAnimatedPng`` (mime.js:36-50): an ``acTL`` chunk before the first ``IDAT``."""
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(buf):
        length = _u32be(buf, offset)
        kind = buf[offset + 4 : offset + 8]
        if kind == b"acTL":
            return True
        if kind == b"IDAT":
            return False
        following = offset + 8 + length + 4
        if following <= offset or following > len(buf):
            return False
        offset = following
    return False


def _is_bmp(buf: bytes) -> bool:
    """``isBmp`` (mime.js:51-76)."""
    if len(buf) < 26:
        return False
    size, pixels, dib = _u32le(buf, 2), _u32le(buf, 10), _u32le(buf, 14)
    if size != 0 and size < 26:
        return False
    if pixels < 14 + dib or (size != 0 and pixels >= size):
        return False
    if dib == 12:
        planes, bits = _u16le(buf, 22), _u16le(buf, 24)
    elif 40 <= dib <= 124:
        if len(buf) < 30:
            return False
        planes, bits = _u16le(buf, 26), _u16le(buf, 28)
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)


def detect_image_mime(head: bytes) -> str | None:
    """``detectSupportedImageMimeType`` (mime.js:4-21) of a file's first 4,100 bytes."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if len(head) > 3 and head[3] == 0xF7 else "image/jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "image/png" if _is_png(head) and not _is_animated_png(head) else None
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _is_bmp(head):
        return "image/bmp"
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            return None
        marker = data[offset + 1]
        if marker == 0xFF:
            offset += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            offset += 2
            continue
        length = int.from_bytes(data[offset + 2 : offset + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if offset + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return width, height
        offset += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        return _u16le(data, 26) & 0x3FFF, _u16le(data, 28) & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = _u32le(data, 21)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


def _size(data: bytes, mime: str) -> tuple[int, int] | None:
    if mime == "image/png":
        return _u32be(data, 16), _u32be(data, 20)
    if mime == "image/gif":
        return (_u16le(data, 6), _u16le(data, 8)) if len(data) >= 10 else None
    if mime == "image/jpeg":
        return _jpeg_size(data)
    return _webp_size(data)


def read_image(data: bytes, mime: str, model_id: str | None, model_takes_images: bool) -> dict[str, Any]:
    """The image branch of ``execute`` (read.js:210-229) for a picture Photon passes through;
    :class:`ImageNotModelledError` for the others."""
    if mime == "image/bmp":
        raise ImageNotModelledError("Pi converts a BMP to PNG with Photon")
    size = _size(data, mime)
    if size is None:
        raise ImageNotModelledError(f"the size of this {mime} file could not be read from its header")
    width, height = size
    if width > _MAX_SIDE or height > _MAX_SIDE or -(-len(data) // 3) * 4 >= _MAX_BASE64_BYTES:
        raise ImageNotModelledError(f"Pi resizes a {width}x{height} picture of {len(data)} bytes with Photon")
    content = [
        {"type": "text", "text": f"Read image file [{mime}]"},
        {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime},
    ]
    result: dict[str, Any] = {"content": content}
    if model_id is not None and not model_takes_images:
        result["details"] = {"imageUnsupportedByModel": model_id}
    # toReadOutput (read.js:56-60): the image and its note for programmatic callers.
    result["structuredContent"] = {
        "type": "image",
        "data": content[1]["data"],
        "mimeType": mime,
        "note": content[0]["text"],
    }
    return result
