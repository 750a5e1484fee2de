"""Read on real files (spec T1), called through a real activity context."""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.store import default_store
from activities.tools.base import ToolContext, ToolOutput
from activities.tools.images import MAX_FILE_BYTES
from activities.tools.read import ReadInput, ReadRequest, format_size, read_file

HERE = Path(__file__).resolve().parent


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


async def read(root: Path, file_path: str, cwd: Path | None = None, **kw: int | str) -> ToolOutput:
    ctx = ToolContext(workspace_root=str(root), cwd=str(cwd or root))
    req = ReadRequest(ctx=ctx, input=ReadInput(file_path=file_path, **kw))
    return await ActivityEnvironment().run(read_file, req)


def numbered(content: str) -> list[tuple[int, str]]:
    """(line number, text) for every `cat -n` line of a Read result."""
    out = []
    for line in content.split("\n"):
        m = re.fullmatch(r"\s*(\d+)\t(.*)", line)
        assert m, f"not in cat -n form: {line!r}"
        out.append((int(m.group(1)), m.group(2)))
    return out


async def test_default_reads_first_2000_lines(ws: Path) -> None:
    path = ws / "big.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 2101)))
    out = await read(ws, str(path))
    assert not out.is_error
    lines = out.content.split("\n")
    assert len(lines) == 2000
    assert re.match(r"^\s*1\t", lines[0])
    assert lines[0] == "     1\tline 1"
    assert numbered(out.content)[-1] == (2000, "line 2000")


async def test_stamp_covers_the_whole_file_not_the_lines_shown(ws: Path) -> None:
    path = ws / "big.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 2101)))
    out = await read(ws, str(path), offset=5, limit=3)
    stamp = out.stamps[str(path)]
    assert stamp.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    assert stamp.size == path.stat().st_size
    assert stamp.mtime_ns == path.stat().st_mtime_ns


async def test_offset_and_limit_number_from_the_real_line(ws: Path) -> None:
    path = ws / "letters.txt"
    path.write_text("A\nB\nC\nD\nE\n")
    out = await read(ws, str(path), offset=2, limit=2)
    assert numbered(out.content) == [(2, "B"), (3, "C")]


async def test_relative_path_is_read_from_cwd_and_stamped_normalised(ws: Path) -> None:
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    out = await read(ws, "./sub/../mod.py", cwd=ws / "pkg")
    assert numbered(out.content) == [(1, "x = 1")]
    assert list(out.stamps) == [str(ws / "pkg" / "mod.py")]


async def test_long_lines_are_truncated_at_2000_chars(ws: Path) -> None:
    path = ws / "wide.txt"
    path.write_text("x" * 3000 + "\nshort\n")
    out = await read(ws, str(path))
    (n1, first), (n2, second) = numbered(out.content)
    assert first.startswith("x" * 2000)
    assert first.count("x") == 2000
    assert (n2, second) == (2, "short")


async def test_crlf_line_endings_are_not_shown(ws: Path) -> None:
    path = ws / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    out = await read(ws, str(path))
    assert numbered(out.content) == [(1, "one"), (2, "two")]


async def test_empty_file_gives_a_reminder_and_a_stamp(ws: Path) -> None:
    path = ws / "empty.txt"
    path.write_text("")
    out = await read(ws, str(path))
    assert not out.is_error
    assert out.content.startswith("<system-reminder>")
    assert "exists but the contents are empty" in out.content
    assert out.stamps[str(path)].size == 0


async def test_offset_past_the_end_says_how_long_the_file_is(ws: Path) -> None:
    path = ws / "short.txt"
    path.write_text("a\nb\nc\n")
    out = await read(ws, str(path), offset=10)
    assert not out.is_error
    assert out.content.startswith("<system-reminder>")
    assert "shorter than the provided offset (10)" in out.content
    assert "3 lines" in out.content


async def test_missing_file_is_an_error_naming_the_path(ws: Path) -> None:
    out = await read(ws, str(ws / "nope.txt"))
    assert out.is_error
    assert out.content.startswith("File does not exist.")
    assert str(ws / "nope.txt") in out.content
    assert out.stamps == {}


async def test_directory_is_an_error_pointing_to_ls(ws: Path) -> None:
    (ws / "src").mkdir()
    out = await read(ws, str(ws / "src"))
    assert out.is_error
    assert "directory" in out.content and "`ls`" in out.content


async def test_whole_file_over_256kb_is_refused_but_a_range_is_not(ws: Path) -> None:
    path = ws / "huge.txt"
    path.write_text(("y" * 99 + "\n") * 3072)  # 300 KiB
    out = await read(ws, str(path))
    assert out.is_error
    assert out.content.startswith(
        "File content (300KB) exceeds maximum allowed size (256KB). Use offset and limit "
        "parameters to read specific portions of the file, or search for specific content "
        "instead of reading the whole file."
    )
    ranged = await read(ws, str(path), offset=3000, limit=5)
    assert [n for n, _ in numbered(ranged.content)] == [3000, 3001, 3002, 3003, 3004]


async def test_a_range_of_a_file_over_1gb_is_refused_with_what_to_use(ws: Path) -> None:
    path = ws / "giant.log"
    with path.open("wb") as f:
        f.truncate(1024**3 + 1)  # sparse: no gigabyte written
    out = await read(ws, str(path), offset=1, limit=10)
    assert out.is_error and out.content.startswith("File content (1GB) exceeds the maximum size")
    assert "Grep" in out.content and "sed -n" in out.content


async def test_too_many_tokens_is_refused(ws: Path) -> None:
    path = ws / "dense.txt"
    path.write_text(("z" * 999 + "\n") * 150)  # 150 KB of text: ~37500 tokens
    out = await read(ws, str(path))
    assert out.is_error
    assert re.match(
        r"File content \(\d+ tokens\) exceeds maximum allowed tokens \(25000\)\. Use offset and "
        r"limit parameters",
        out.content,
    )


@pytest.mark.parametrize(("width", "whole"), [(40, True), (45, False)])
async def test_a_whole_read_is_all_of_its_lines_or_the_token_error(
    ws: Path, width: int, whole: bool
) -> None:
    """2000 lines of 45 characters are ~23,000 tokens of text but ~26,500 with their line
    numbers: counted without them, the read passed and lost lines from its middle to the
    result's cap. Now either every line comes back or the model is told to narrow it."""
    path = ws / "wide.py"
    path.write_text("".join(f"{i:0{width - 1}d}\n" for i in range(2000)))
    out = await read(ws, str(path))
    assert "omitted" not in out.content
    if whole:
        assert not out.is_error and [n for n, _ in numbered(out.content)] == list(range(1, 2001))
    else:
        assert out.is_error and "exceeds maximum allowed tokens (25000)" in out.content


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
async def test_a_file_with_a_utf_16_or_utf_32_mark_is_read_as_text(ws: Path, encoding: str) -> None:
    """Windows tools write text with a byte order mark; its NULs made it "binary" to Read,
    which Claude Code reads. The stamp is of the bytes on disk, as Edit and Write check."""
    mark = codecs.BOM_UTF16_LE if encoding == "utf-16-le" else codecs.BOM_UTF16_BE
    if encoding.startswith("utf-32"):
        mark = codecs.BOM_UTF32_LE if encoding.endswith("le") else codecs.BOM_UTF32_BE
    data = mark + "naïve\r\nzwei\nthree".encode(encoding)
    (ws / "win.txt").write_bytes(data)
    out = await read(ws, "win.txt")
    assert not out.is_error, out.content
    assert numbered(out.content) == [(1, "naïve"), (2, "zwei"), (3, "three")]
    (stamp,) = out.stamps.values()
    assert stamp.sha256 == hashlib.sha256(data).hexdigest()[:32] and stamp.size == len(data)
    assert numbered((await read(ws, "win.txt", offset=2, limit=1)).content) == [(2, "zwei")]


async def test_binary_file_is_an_error(ws: Path) -> None:
    path = ws / "blob.bin"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    out = await read(ws, str(path))
    assert out.is_error
    assert "binary" in out.content
    assert out.stamps == {}


async def test_a_quick_read_sends_no_heartbeat() -> None:
    """The first heartbeat waits one interval (5 s): each one is a server request and, on
    Temporal Cloud, a billed action, and a Read is over long before (Bash's test shows they
    come)."""
    beats: list[tuple] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    req = ReadRequest(
        ctx=ToolContext(workspace_root=str(HERE), cwd=str(HERE)),
        input=ReadInput(file_path=__file__),
    )
    out = await env.run(read_file, req)
    assert not out.is_error
    assert beats == []


def test_format_size() -> None:
    assert format_size(900) == "900 bytes"
    assert format_size(300 * 1024) == "300KB"
    assert format_size(1536 * 1024) == "1.5MB"


IMAGES = HERE / "images"


@pytest.mark.parametrize(
    ("fixture", "name", "media_type"),
    [("red.png", "shot.PNG", "image/png"), ("red.jpg", "photo.jpeg", "image/jpeg")],
)
async def test_an_image_goes_to_the_store_and_its_description_to_history(
    ws: Path, fixture: str, name: str, media_type: str
) -> None:
    data = (IMAGES / fixture).read_bytes()
    path = ws / name
    path.write_bytes(data)
    out = await read(ws, str(path), offset=3, limit=1)  # lines mean nothing to an image
    assert not out.is_error
    assert out.content == f"[image: {path}, {media_type[6:].upper()} 37x21, {len(data)} bytes]"
    [image] = out.images
    assert image.media_type == media_type and default_store().get(image.ref) == data
    assert out.stamps[str(path)].sha256 == hashlib.sha256(data).hexdigest()[:32]
    assert out.stored_ref() is None


async def test_a_file_named_like_an_image_that_is_not_one_is_an_error(ws: Path) -> None:
    (ws / "notes.png").write_text("not an image at all\n")
    out = await read(ws, str(ws / "notes.png"))
    assert out.is_error and not out.images
    assert "is not a PNG, JPEG, GIF or WebP image" in out.content


async def test_an_image_file_past_what_read_opens_is_refused(ws: Path) -> None:
    path = ws / "huge.png"
    path.write_bytes((IMAGES / "red.png").read_bytes())
    os.truncate(path, MAX_FILE_BYTES + 1)  # sparse: no 64 MB written
    out = await read(ws, str(path))
    assert out.is_error and not out.images
    assert out.content == (
        f"{path} is {MAX_FILE_BYTES + 1} bytes. An image can be read up to {MAX_FILE_BYTES} "
        "bytes (one that big is scaled down to what the model takes; this one is past that "
        "too). Ask for a smaller image."
    )


async def test_a_broken_image_is_an_error_not_a_request_the_api_refuses(ws: Path) -> None:
    path = ws / "cut.jpg"
    path.write_bytes((IMAGES / "red.jpg").read_bytes()[:300])
    out = await read(ws, str(path))
    assert out.is_error and not out.images
    assert "starts like a JPEG image but does not decode" in out.content


async def test_a_binary_file_with_an_image_s_bytes_but_no_image_name_stays_binary(
    ws: Path,
) -> None:
    (ws / "red.dat").write_bytes((IMAGES / "red.png").read_bytes())
    out = await read(ws, str(ws / "red.dat"))
    assert out.is_error and "binary" in out.content


async def test_a_notebook_is_its_cells_and_outputs_with_a_stamp(ws: Path) -> None:
    book = {
        "cells": [
            {
                "cell_type": "code",
                "id": "a1",
                "source": "print('hi')",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "hi\n"}],
            },
        ],
        "metadata": {},
    }
    path = ws / "analysis.ipynb"
    path.write_text(json.dumps(book))
    out = await read(ws, str(path))
    assert not out.is_error
    assert out.content == '<cell id="a1">print(\'hi\')</cell id="a1">\nhi\n'
    assert out.stamps[str(path)].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()[:32]


async def test_a_broken_notebook_or_one_without_cells_says_so(ws: Path) -> None:
    (ws / "broken.ipynb").write_text("{")
    out = await read(ws, str(ws / "broken.ipynb"))
    assert out.is_error and "is not a valid notebook" in out.content
    (ws / "empty.ipynb").write_text('{"cells": []}')
    out = await read(ws, str(ws / "empty.ipynb"))
    assert not out.is_error and "has no cells" in out.content


async def test_a_notebook_s_plots_are_shown_after_its_cells(ws: Path) -> None:
    png = (IMAGES / "red.png").read_bytes()
    plot = {"output_type": "display_data", "data": {"image/png": base64.b64encode(png).decode()}}
    broken = {"output_type": "display_data", "data": {"image/png": "aGVsbG8="}}  # "hello"
    book = {
        "cells": [{"cell_type": "code", "id": "p", "source": "plot()", "outputs": [broken, plot]}]
    }
    path = ws / "plots.ipynb"
    path.write_text(json.dumps(book))
    out = await read(ws, str(path))
    assert not out.is_error
    [image] = out.images
    assert image.media_type == "image/png" and default_store().get(image.ref) == png
    assert "[image/png output: image 2, shown after the cells]" in out.content
    assert "[image 1 is not a PNG, JPEG, GIF or WebP image" in out.content
    assert out.content.endswith("[the images after the cells, in order: 2]")
