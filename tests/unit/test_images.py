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


def claiming(width: int, height: int) -> bytes:
    """red.png with another size in its header (and the header's checksum fixed)."""
    data = bytearray((IMAGES / "red.png").read_bytes())
    data[16:24] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)


def test_an_image_claiming_too_many_pixels_is_not_decoded() -> None:
    with pytest.raises(NotAnImage) as refused:
        prepare_image(claiming(8000, 6000), "big.png")
    assert str(refused.value) == (
        "big.png claims 8000x6000 pixels, more than Read decodes (40,000,000 pixels)."
    )
    with pytest.raises(NotAnImage) as refused:  # past Pillow's own limit, refused at open
        prepare_image(claiming(50_000, 50_000), "bomb.png")
    assert (
        str(refused.value) == "bomb.png claims more pixels than Read decodes (40,000,000 pixels)."
    )


def test_a_photo_is_turned_upright_as_its_exif_says() -> None:
    photo = Image.new("RGB", (300, 100), (200, 10, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated: shown upright, it is 100 wide and 300 tall
    data = encoded(photo, "JPEG", exif=exif)
    image = prepare_image(data, "photo.jpg")
    assert image.size == image.original_size == (100, 300) and image.media_type == "image/jpeg"
    assert Image.open(io.BytesIO(image.data)).size == (100, 300)


def test_a_palette_screenshot_is_scaled_smoothly_and_keeps_its_format() -> None:
    shot = Image.new("P", (4000, 400), 0)
    shot.putpalette([255, 255, 255, 0, 0, 0] + [0] * 762)
    for x in range(0, 4000, 2):
        shot.putpixel((x, 200), 1)  # a hairline of dots that nearest-neighbour would drop
    image = prepare_image(encoded(shot, "PNG"), "shot.png")
    assert image.size == (2000, 200) and image.media_type == "image/png"
    scaled = Image.open(io.BytesIO(image.data)).convert("L")
    assert min(scaled.getpixel((x, 100)) for x in range(2000)) < 200  # the line is still there


def test_sixteen_bit_grey_keeps_its_shade_when_scaled() -> None:
    grey = Image.new("I;16", (2400, 1600), 40_000)
    image = prepare_image(encoded(grey, "PNG"), "depth.png")
    assert image.size == (2000, 1333)
    assert Image.open(io.BytesIO(image.data)).convert("L").getpixel((9, 9)) == 40_000 // 256


def test_image_names_by_suffix_in_any_case() -> None:
    assert is_image_name("a.PNG") and is_image_name("b.jpeg") and is_image_name("c.webp")
    assert not is_image_name("png") and not is_image_name("a.svg") and not is_image_name("a.pdf")


def test_the_description_names_the_file_format_size_and_length() -> None:
    image = prepare_image((IMAGES / "red.png").read_bytes(), "a.png")
    assert describe("/w/a.png", image, 103) == "[image: /w/a.png, PNG 37x21, 103 bytes]"
