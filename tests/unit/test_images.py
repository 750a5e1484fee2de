"""Images as Read sends them: decoded, scaled to what the model takes (fixtures by Pillow)."""

from __future__ import annotations

import io
import random
import zlib
from pathlib import Path

import pytest
from PIL import Image

from activities.tools.images import (
    MAX_IMAGE_BYTES,
    MAX_SIDE,
    NotAnImage,
    describe,
    is_image_name,
    media_type_of,
    prepare_image,
)

IMAGES = Path(__file__).resolve().parents[1] / "activities" / "images"


@pytest.mark.parametrize(
    ("name", "media_type", "size"),
    [
        ("red.png", "image/png", (37, 21)),
        ("red.jpg", "image/jpeg", (37, 21)),
        ("progressive.jpg", "image/jpeg", (37, 21)),
        ("red.gif", "image/gif", (37, 21)),
        ("lossy.webp", "image/webp", (37, 21)),
        ("lossless.webp", "image/webp", (37, 21)),
        ("alpha.webp", "image/webp", (45, 19)),
    ],
)
def test_a_small_image_goes_as_it_is(name: str, media_type: str, size: tuple) -> None:
    data = (IMAGES / name).read_bytes()
    assert media_type_of(data) == media_type
    image = prepare_image(data, name)
    assert (image.data, image.media_type, image.size) == (data, media_type, size)
    assert not image.scaled


def encoded(im: Image.Image, fmt: str, **options) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **options)
    return buf.getvalue()


def test_a_large_image_is_scaled_to_the_side_the_model_takes() -> None:
    data = encoded(Image.new("RGB", (4000, 1000), (10, 200, 10)), "PNG")
    image = prepare_image(data, "wide.png")
    assert image.scaled and image.media_type == "image/png"
    assert image.size == (MAX_SIDE, 500) and image.original_size == (4000, 1000)
    assert Image.open(io.BytesIO(image.data)).size == (MAX_SIDE, 500)
    assert describe("/w/wide.png", image, len(data)) == (
        f"[image: /w/wide.png, PNG 4000x1000, {len(data)} bytes; shown as PNG 2000x500, "
        f"{len(image.data)} bytes]"
    )


def test_an_image_too_heavy_as_png_goes_as_jpeg_on_white() -> None:
    rng = random.Random(7)
    noise = Image.frombytes("RGBA", (1200, 1200), rng.randbytes(1200 * 1200 * 4))
    data = encoded(noise, "PNG")
    assert len(data) > MAX_IMAGE_BYTES  # noise does not compress
    image = prepare_image(data, "noise.png")
    assert image.media_type == "image/jpeg" and image.size == (1200, 1200)
    assert len(image.data) <= MAX_IMAGE_BYTES
    assert Image.open(io.BytesIO(image.data)).mode == "RGB"


def test_a_cut_short_image_is_refused_before_the_api_sees_it() -> None:
    data = (IMAGES / "red.jpg").read_bytes()[:300]
    with pytest.raises(NotAnImage, match=r"cut\.jpg starts like a JPEG image but does not decode"):
        prepare_image(data, "cut.jpg")


def test_an_image_whose_header_is_broken_is_refused_without_a_python_repr() -> None:
    data = bytearray((IMAGES / "red.png").read_bytes())
    data[20] ^= 0xFF  # the IHDR no longer matches its checksum
    with pytest.raises(NotAnImage) as refused:
        prepare_image(bytes(data), "bad.png")
    assert str(refused.value) == (
        "bad.png starts like a PNG image but does not decode: it may be cut short or corrupt. "
        "Inspect it with Bash (`file`)."
    )


def test_text_named_like_an_image_is_refused_with_what_to_do() -> None:
    with pytest.raises(NotAnImage, match=r"notes\.png is not a PNG, JPEG, GIF or WebP image"):
        prepare_image(b"just some text\n", "notes.png")
    with pytest.raises(NotAnImage, match="xxd"):
        prepare_image(b"", "empty.png")


def test_an_image_claiming_too_many_pixels_is_not_decoded() -> None:
    data = bytearray((IMAGES / "red.png").read_bytes())
    data[16:24] = (50_000).to_bytes(4, "big") * 2  # the IHDR's width and height
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")  # and its checksum
    with pytest.raises(NotAnImage, match=r"claims 50000x50000 pixels, more than Read decodes"):
        prepare_image(bytes(data), "bomb.png")


def test_image_names_by_suffix_in_any_case() -> None:
    assert is_image_name("a.PNG") and is_image_name("b.jpeg") and is_image_name("c.webp")
    assert not is_image_name("png") and not is_image_name("a.svg") and not is_image_name("a.pdf")


def test_the_description_names_the_file_format_size_and_length() -> None:
    image = prepare_image((IMAGES / "red.png").read_bytes(), "a.png")
    assert describe("/w/a.png", image, 103) == "[image: /w/a.png, PNG 37x21, 103 bytes]"
