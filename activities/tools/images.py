"""What Read sends the model for an image file: the image, decoded to prove it whole and
scaled to what the model takes, as Claude Code's Read does.

A broken image must fail here, as a tool error the model can act on: sent on, the API would
refuse it, and refuse every later request of the conversation with it. The format is read
from the file's signature, not its name (the API refuses a JPEG sent as `image/png`); the
name only decides that Read treats the file as an image at all.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})

MAX_IMAGE_BYTES = 3_932_160
"""3.75 MB sent: base64 makes it 5 MB, the most the Messages API takes for one image."""
MAX_SIDE = 2000
"""Pixels, as Claude Code scales to: the API takes 8000 a side, but only 2000 once a request
holds more than 20 images, and scales anything over 1568 down itself anyway."""
MAX_FILE_BYTES = 64 * 1024**2
"""The largest file Read opens as an image (before scaling)."""
MAX_PIXELS = 40_000_000
"""Refused before decoding: a small file can claim a huge image (a decompression bomb), and
40 megapixels of RGBA are 160 MB already, for each Read running at once."""

_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}


class NotAnImage(ValueError):
    """The file cannot go to the model as an image; the message says why, for the model."""


@dataclass(frozen=True)
class PreparedImage:
    data: bytes
    """What the model gets: the file's bytes, or the scaled copy."""
    media_type: str
    size: tuple[int, int]
    original_size: tuple[int, int]
    original_media_type: str

    @property
    def scaled(self) -> bool:
        return self.size != self.original_size or self.media_type != self.original_media_type


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


def prepare_image(data: bytes, name: str) -> PreparedImage:
    """The image as the model gets it, or NotAnImage saying what is wrong with it."""
    media_type = media_type_of(data)
    if media_type is None:
        raise NotAnImage(
            f"{name} is not a PNG, JPEG, GIF or WebP image (its bytes do not start like one), "
            "so it cannot be shown as an image. Inspect it with Bash (`file`, `xxd | head`)."
        )
    # Imported here: Pillow costs a worker memory only once it reads an image.
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        # The format named: Pillow loads its other plugins lazily, racing another thread's
        # Read, and a valid image could then read as undecodable.
        with Image.open(io.BytesIO(data), formats=[_PIL_FORMATS[media_type]]) as im:
            width, height = im.size
            if width * height > MAX_PIXELS:
                raise NotAnImage(_too_many_pixels(name, f"{width}x{height} pixels, more"))
            if media_type == "image/jpeg":
                im.draft("RGB", (MAX_SIDE, MAX_SIDE))  # decode at a fraction of the size
            im.load()  # a truncated or corrupt image fails here, not at the API
            upright = ImageOps.exif_transpose(im)  # a photo's rotation, which scaling drops
            rotated = upright.size != im.size or _orientation(im) not in (None, 1)
            original_size = upright.size if rotated else (width, height)
            original = PreparedImage(data, media_type, original_size, original_size, media_type)
            if not rotated and max(original_size) <= MAX_SIDE and len(data) <= MAX_IMAGE_BYTES:
                return original
            return _scaled(upright, original)
    except Image.DecompressionBombError:
        raise NotAnImage(_too_many_pixels(name, "more pixels")) from None  # Pillow's own check
    except MemoryError:
        raise NotAnImage(f"{name} is too large to decode in memory.") from None
    except (OSError, SyntaxError, ValueError) as e:
        if isinstance(e, NotAnImage):
            raise
        why = "" if isinstance(e, UnidentifiedImageError) else f" ({e})"
        raise NotAnImage(
            f"{name} starts like a {_NAMES[media_type]} image but does not decode{why}: it "
            "may be cut short or corrupt. Inspect it with Bash (`file`)."
        ) from None


_PIL_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def _too_many_pixels(name: str, claim: str) -> str:
    return f"{name} claims {claim} than Read decodes ({MAX_PIXELS:,} pixels)."


def _orientation(im) -> int | None:
    try:
        return im.getexif().get(0x0112)
    except Exception:  # a broken EXIF block: the image itself decoded, so show it as it is
        return None


def _scaled(im, original: PreparedImage) -> PreparedImage:
    """`im` within MAX_SIDE and MAX_IMAGE_BYTES: its own format if that fits, else JPEG at
    falling quality."""
    from PIL import Image

    im = _smoothable(im)
    im.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    tries: list[tuple[str, str, dict]] = []
    if original.media_type in ("image/png", "image/gif", "image/webp"):
        tries.append(("image/png", "PNG", {"optimize": True}))
    tries += [("image/jpeg", "JPEG", {"quality": q}) for q in (85, 70, 50, 35)]
    for media_type, fmt, options in tries:
        frame = _opaque(im) if fmt == "JPEG" else im
        buf = io.BytesIO()
        frame.save(buf, fmt, **options)
        if buf.tell() <= MAX_IMAGE_BYTES:
            return PreparedImage(
                buf.getvalue(), media_type, im.size, original.size, original.media_type
            )
    raise NotAnImage(
        "the image stays over 3.75 MB even scaled to "
        f"{im.size[0]}x{im.size[1]} and compressed as JPEG; it cannot be shown to the model."
    )


def _smoothable(im):
    """A mode Pillow scales smoothly: it scales palette and 1-bit images by nearest
    neighbour, which drops a screenshot's thin lines; 16-bit grey it cannot flatten."""
    if im.mode in ("P", "PA"):
        return im.convert("RGBA")
    if im.mode == "1":
        return im.convert("L")
    if im.mode.startswith("I") or im.mode == "F":
        return im.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    return im


def _opaque(im):
    """RGB for JPEG: a transparent image on white (as a viewer shows it), not on black."""
    from PIL import Image

    if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    return im.convert("RGB")


def describe(name: str, image: PreparedImage, file_bytes: int) -> str:
    """What history, the Web UI and the model read beside the image (history and the Web UI
    never carry the image itself)."""
    w, h = image.original_size
    text = f"[image: {name}, {_NAMES[image.original_media_type]} {w}x{h}, {file_bytes} bytes"
    if image.scaled:
        sw, sh = image.size
        text += f"; shown as {_NAMES[image.media_type]} {sw}x{sh}, {len(image.data)} bytes"
    return text + "]"
