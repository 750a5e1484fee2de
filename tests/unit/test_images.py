"""Image formats and sizes read from the files' own bytes (fixtures written by Pillow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.tools.images import (
    MAX_IMAGE_SIDE,
    NotAnImage,
    check_image,
    describe,
    dimensions,
    is_image_name,
    media_type_of,
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
def test_format_and_size_come_from_the_bytes(name: str, media_type: str, size: tuple) -> None:
    data = (IMAGES / name).read_bytes()
    assert media_type_of(data) == media_type
    assert dimensions(data, media_type) == size
    assert check_image(data, name) == (media_type, size)


def test_a_header_cut_short_has_no_size_but_keeps_its_format() -> None:
    data = (IMAGES / "red.png").read_bytes()[:12]
    assert media_type_of(data) == "image/png"
    assert dimensions(data, "image/png") is None
    assert check_image(data, "cut.png") == ("image/png", None)


def test_text_named_like_an_image_is_refused_with_what_to_do() -> None:
    with pytest.raises(NotAnImage, match=r"notes\.png is not a PNG, JPEG, GIF or WebP image"):
        check_image(b"just some text\n", "notes.png")
    with pytest.raises(NotAnImage, match="xxd"):
        check_image(b"", "empty.png")


def test_an_image_too_large_for_the_model_is_refused() -> None:
    data = bytearray((IMAGES / "red.png").read_bytes())
    data[16:20] = (MAX_IMAGE_SIDE + 1).to_bytes(4, "big")  # the IHDR width
    with pytest.raises(NotAnImage, match=r"8001x21 pixels; the model takes images up to 8000"):
        check_image(bytes(data), "wide.png")


def test_image_names_by_suffix_in_any_case() -> None:
    assert is_image_name("a.PNG") and is_image_name("b.jpeg") and is_image_name("c.webp")
    assert not is_image_name("png") and not is_image_name("a.svg") and not is_image_name("a.pdf")


def test_the_description_names_the_file_format_size_and_length() -> None:
    assert describe("/w/a.png", "image/png", (3, 2), 103) == "[image: /w/a.png, PNG 3x2, 103 bytes]"
    assert describe("/w/b.jpg", "image/jpeg", None, 9) == "[image: /w/b.jpg, JPEG, 9 bytes]"
