"""What Read needs to know of an image file: its format and size, from its own bytes.

The model gets an image as an image block, whose media type must match the bytes (the API
refuses a JPEG sent as `image/png`), so the format is read from the file's signature, not
its name; the name only decides that Read treats the file as an image at all, as Claude
Code's Read does.
"""

from __future__ import annotations

import struct

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})

MAX_IMAGE_BYTES = 3_932_160
"""3.75 MB: base64 makes it 5 MB, the most the Messages API takes for one image."""
MAX_IMAGE_SIDE = 8000
"""Pixels; the API refuses an image wider or taller than this."""

_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


class NotAnImage(ValueError):
    """The file cannot go to the model as an image; the message says why, for the model."""


def is_image_name(name: str) -> bool:
    dot = name.rfind(".")
    return dot >= 0 and name[dot:].lower() in IMAGE_SUFFIXES


def media_type_of(data: bytes) -> str | None:
    """The image's media type from its signature, or None when it is none of the four."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, media_type: str) -> tuple[int, int] | None:
    """(width, height) from the image's header, or None when the header is cut short or
    unknown (the API then judges the image itself)."""
    try:
        if media_type == "image/png":
            return struct.unpack(">II", data[16:24])
        if media_type == "image/gif":
            return struct.unpack("<HH", data[6:10])
        if media_type == "image/webp":
            return _webp_dimensions(data)
        if media_type == "image/jpeg":
            return _jpeg_dimensions(data)
    except struct.error:
        return None
    return None


def _webp_dimensions(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    return None


_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (the others in the range are tables), whose segment holds the size."""


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length follows
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _JPEG_FRAMES:
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def check_image(data: bytes, name: str) -> tuple[str, tuple[int, int] | None]:
    """The image's media type and dimensions, or NotAnImage saying what the model can do."""
    media_type = media_type_of(data)
    if media_type is None:
        raise NotAnImage(
            f"{name} is not a PNG, JPEG, GIF or WebP image (its bytes do not start like one), "
            "so it cannot be shown as an image. Inspect it with Bash (`file`, `xxd | head`)."
        )
    size = dimensions(data, media_type)
    if size is not None and max(size) > MAX_IMAGE_SIDE:
        raise NotAnImage(
            f"{name} is {size[0]}x{size[1]} pixels; the model takes images up to "
            f"{MAX_IMAGE_SIDE} pixels on a side. Make a smaller copy with Bash and read that."
        )
    return media_type, size


def describe(name: str, media_type: str, size: tuple[int, int] | None, length: int) -> str:
    """What history and the Web UI show for an image the model sees (they never carry it)."""
    shape = f" {size[0]}x{size[1]}" if size else ""
    return f"[image: {name}, {_NAMES[media_type]}{shape}, {length} bytes]"
