"""Read of a PDF (spec T1 `pages`), on real files through a real activity context."""

from __future__ import annotations

import hashlib
import io
import os
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from activities.store import default_store
from activities.tools.pdf import MAX_FILE_BYTES
from tests.activities.test_tool_read import read


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


def make_pdf(pages: int, password: str | None = None) -> bytes:
    """A PDF whose page n (1-based) is 100 + n points wide, so a test can tell pages apart."""
    writer = PdfWriter()
    for n in range(1, pages + 1):
        writer.add_blank_page(width=100 + n, height=200)
    if password is not None:
        writer.encrypt(user_password=password, owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def widths(data: bytes) -> list[int]:
    return [round(float(p.mediabox.width)) for p in PdfReader(io.BytesIO(data)).pages]


async def test_a_short_pdf_goes_to_the_store_whole_and_its_description_to_history(ws: Path):
    data = make_pdf(3)
    path = ws / "paper.PDF"
    path.write_bytes(data)
    out = await read(ws, str(path))
    assert not out.is_error
    assert out.content == f"[pdf: {path}, 3 pages, {len(data)} bytes]"
    [document] = out.images
    assert document.media_type == "application/pdf" and document.is_document
    # Written again through the reader, so what the API gets is what pypdf could read.
    assert widths(default_store().get(document.ref)) == [101, 102, 103]
    assert out.stamps[str(path)].sha256 == hashlib.sha256(data).hexdigest()[:32]


async def test_a_long_pdf_needs_pages_and_gets_just_those(ws: Path):
    path = ws / "book.pdf"
    path.write_bytes(make_pdf(25))
    whole = await read(ws, str(path))
    assert whole.is_error and not whole.images
    assert "has 25 pages" in whole.content and 'pages parameter (such as "1-20")' in whole.content
    out = await read(ws, str(path), pages="3-5")
    assert not out.is_error and out.content.endswith(
        "25 pages, " + f"{path.stat().st_size} bytes; shown: pages 3-5]"
    )
    [document] = out.images
    assert widths(default_store().get(document.ref)) == [103, 104, 105]
    one = await read(ws, str(path), pages=" 7 ")
    assert one.content.endswith("shown: page 7]")
    assert widths(default_store().get(one.images[0].ref)) == [107]
    # A range running past the end shows what there is.
    tail = await read(ws, str(path), pages="24-40")
    assert widths(default_store().get(tail.images[0].ref)) == [124, 125]


@pytest.mark.parametrize(
    ("pages", "expected"),
    [
        ("1-21", "at most 20 can be read at once"),
        ("0", "pages count from 1"),
        ("5-3", "pages count from 1"),
        ("1,3", 'give one page ("3") or a range ("1-5")'),
        ("30", "has 25 pages; there is no page 30"),
    ],
)
async def test_pages_that_do_not_fit_say_what_to_ask_instead(ws: Path, pages: str, expected: str):
    path = ws / "book.pdf"
    path.write_bytes(make_pdf(25))
    out = await read(ws, str(path), pages=pages)
    assert out.is_error and not out.images
    assert expected in out.content


async def test_pages_on_a_file_that_is_not_a_pdf_is_an_error(ws: Path):
    (ws / "notes.txt").write_text("a\n")
    out = await read(ws, str(ws / "notes.txt"), pages="1")
    assert out.is_error and "applies only to PDF files" in out.content


async def test_a_pdf_the_api_could_not_read_is_refused_before_it_is_sent(ws: Path):
    (ws / "fake.pdf").write_text("just text\n")
    fake = await read(ws, str(ws / "fake.pdf"))
    assert fake.is_error and "is not one (no %PDF- header)" in fake.content
    (ws / "cut.pdf").write_bytes(make_pdf(2)[:200])
    cut = await read(ws, str(ws / "cut.pdf"))
    assert cut.is_error and "could not be read as a PDF" in cut.content
    (ws / "locked.pdf").write_bytes(make_pdf(2, password="secret"))
    locked = await read(ws, str(ws / "locked.pdf"))
    assert locked.is_error and "encrypted with a password" in locked.content


async def test_a_pdf_encrypted_without_a_user_password_is_sent_decrypted(ws: Path):
    data = make_pdf(2, password="")
    (ws / "open.pdf").write_bytes(data)
    out = await read(ws, str(ws / "open.pdf"))
    assert not out.is_error
    sent = default_store().get(out.images[0].ref)
    assert sent != data and not PdfReader(io.BytesIO(sent)).is_encrypted
    assert widths(sent) == [101, 102]


async def test_a_pdf_past_what_read_opens_is_refused(ws: Path):
    path = ws / "huge.pdf"
    path.write_bytes(make_pdf(1))
    os.truncate(path, MAX_FILE_BYTES + 1)  # sparse
    out = await read(ws, str(path))
    assert out.is_error and f"A PDF can be read up to {MAX_FILE_BYTES} bytes" in out.content


def linked_pdf() -> bytes:
    """Two pages; the first links to the second, which holds 2.7 MB."""
    from pypdf.annotations import Link
    from pypdf.generic import DecodedStreamObject, NameObject

    writer = PdfWriter()
    for n in range(2):
        writer.add_blank_page(width=101 + n, height=200)
    filler = DecodedStreamObject()
    filler.set_data(b"% filler\n" * 300_000)
    writer.pages[1][NameObject("/Contents")] = writer._add_object(filler)
    writer.add_annotation(page_number=0, annotation=Link(rect=(0, 0, 50, 50), target_page_index=1))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


async def test_a_page_cut_out_does_not_bring_the_pages_it_links_to(ws: Path):
    path = ws / "linked.pdf"
    path.write_bytes(linked_pdf())
    out = await read(ws, str(path), pages="1")
    sent = default_store().get(out.images[0].ref)
    assert widths(sent) == [101] and len(sent) < 10_000


async def test_a_pdf_too_slow_to_parse_is_an_answer_not_a_stalled_worker(ws: Path, monkeypatch):
    from activities.tools import pdf

    monkeypatch.setattr(pdf, "CHILD_TIMEOUT_S", 0.001)
    path = ws / "slow.pdf"
    path.write_bytes(make_pdf(2))
    out = await read(ws, str(path))
    assert out.is_error and "took more than 0.001 seconds to read as a PDF" in out.content


async def test_a_parser_crash_in_the_child_is_an_answer_too(ws: Path, monkeypatch):
    from activities.tools import pdf

    # A child killed by its memory limit (or any crash) ends without its answer line.
    crash = "import sys; sys.stderr.write('MemoryError\\n'); sys.exit(1)"
    monkeypatch.setattr(pdf, "CHILD_COMMAND", [sys.executable, "-c", crash])
    path = ws / "any.pdf"
    path.write_bytes(make_pdf(2))
    out = await read(ws, str(path))
    assert out.is_error
    assert "could not be read as a PDF (the reader stopped: MemoryError)" in out.content


async def test_the_child_imports_nothing_from_where_the_worker_runs(ws: Path, monkeypatch):
    """An agent may write `json.py` into the directory the worker runs in; the PDF reader's
    process must not run it (nor see the worker's environment)."""
    marker = ws / "ran"
    (ws / "json.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(9)\n")
    (ws / "activities").mkdir()
    (ws / "activities" / "__init__.py").write_text("raise SystemExit(9)\n")
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PYTHONPATH", str(ws))
    path = ws / "paper.pdf"
    path.write_bytes(make_pdf(2))
    out = await read(ws, str(path))
    assert not out.is_error, out.content
    assert widths(default_store().get(out.images[0].ref)) == [101, 102]
    assert not marker.exists()
