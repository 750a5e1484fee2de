"""Cutting the pages of a PDF out of it (spec T1 `pages`), in the child process a PDF Read
starts (`activities/tools/pdf.py` `prepare_pdf`): `python -P -m activities.pdf_pages`, stdin
a JSON line (`key`, `pages`) and the file's bytes, stdout a JSON line (`total`, `first`,
`last`, `length`, or `error`) and the PDF to show.

A module of its own, outside `activities.tools`, so the child imports pypdf and nothing of
the worker (no temporalio: it starts in a tenth of the time).
"""

from __future__ import annotations

import io
import json
import logging
import re
import resource
import sys
from dataclasses import dataclass

MAX_PAGES_WHOLE = 10
"""A PDF longer than this must be read with `pages` (T1)."""
MAX_PAGES_PER_READ = 20
MAX_SENT_BYTES = 10 * 1024**2
"""The PDF the model gets: ~13.4 MB of base64, inside a request's 32 MB beside images."""
CHILD_TIMEOUT_S = 20
"""Below a local activity attempt's time, so a PDF too slow to parse is an answer to the
model, not an attempt that fails and is tried again."""
CHILD_MEMORY_BYTES = 2 * 1024**3

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


class NotReadable(Exception):
    """Why this PDF, or these pages of it, cannot be shown: said to the model."""


@dataclass(frozen=True)
class PreparedPdf:
    data: bytes
    """The PDF the model gets: the file itself, or the pages asked for."""
    total_pages: int
    first: int
    last: int
    """The pages shown, 1-based, inclusive."""

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total_pages


def parse_pages(pages: str) -> tuple[int, int]:
    """`"3"` or `"10-20"` as (first, last), 1-based; NotReadable for anything else."""
    match = _RANGE.match(pages)
    if not match:
        raise NotReadable(
            f'Invalid pages parameter "{pages}": give one page ("3") or a range ("1-5").'
        )
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1 or last < first:
        raise NotReadable(
            f'Invalid pages parameter "{pages}": pages count from 1, and a range runs from a '
            'lower page to a higher one ("1-5").'
        )
    if last - first + 1 > MAX_PAGES_PER_READ:
        raise NotReadable(
            f'pages "{pages}" is {last - first + 1} pages: at most {MAX_PAGES_PER_READ} can '
            f'be read at once ("{first}-{first + MAX_PAGES_PER_READ - 1}").'
        )
    return first, last


def child_limits() -> None:
    """Set by the child on itself, before it reads the file (a `preexec_fn` is not safe in a
    worker's threaded process): at most CHILD_MEMORY_BYTES of address space and a CPU budget
    a little over the wall-clock timeout."""
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
    cpu = CHILD_TIMEOUT_S + 5
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


def cut_pdf(data: bytes, key: str, pages: str | None) -> PreparedPdf:
    """What the child process does (`main`): count the pages and
    write the ones asked for as a PDF of their own, through pypdf (so a file pypdf had to
    repair reaches the model repaired, and never a file the API would refuse in every later
    request of the conversation)."""
    wanted = parse_pages(pages) if pages is not None else None
    from pypdf import PdfReader, PdfWriter

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise NotReadable(f"{key} is encrypted with a password; it cannot be read.")
        total = len(reader.pages)
    except NotReadable:
        raise
    except Exception as e:  # noqa: BLE001 - any parser failure is this file's, not ours
        raise NotReadable(f"{key} could not be read as a PDF: {e}") from None
    if total == 0:
        raise NotReadable(f"{key} has no pages.")
    if wanted is None:
        if total > MAX_PAGES_WHOLE:
            raise NotReadable(
                f"{key} has {total} pages: a PDF of more than {MAX_PAGES_WHOLE} pages is read "
                f'in parts with the pages parameter (such as "1-{MAX_PAGES_PER_READ}"), at '
                f"most {MAX_PAGES_PER_READ} pages a call."
            )
        wanted = (1, total)
    first, last = wanted
    if first > total:
        raise NotReadable(f"{key} has {total} pages; there is no page {first}.")
    last = min(last, total)
    try:
        writer = PdfWriter()
        # `append` leaves out annotations: a link on one page would bring the page it points
        # to, and so a whole book, into a cut of one page.
        writer.append(reader, pages=list(range(first - 1, last)), import_outline=False)
        out = io.BytesIO()
        writer.write(out)
    except Exception as e:  # noqa: BLE001
        raise NotReadable(f"pages {first}-{last} of {key} could not be read: {e}") from None
    shown = out.getvalue()
    if len(shown) > MAX_SENT_BYTES:
        raise NotReadable(
            f"pages {first}-{last} of {key} come to {len(shown)} bytes, more than the "
            f"{MAX_SENT_BYTES} a read can show: ask for fewer pages, or extract the text "
            "with Bash (pdftotext)."
        )
    return PreparedPdf(data=shown, total_pages=total, first=first, last=last)


def main() -> None:
    child_limits()
    logging.disable(logging.CRITICAL)  # pypdf's warnings on a crafted file could fill stderr
    raw = sys.stdin.buffer.read()
    head, _, data = raw.partition(b"\n")
    ask = json.loads(head)
    try:
        pdf = cut_pdf(data, ask["key"], ask["pages"])
    except NotReadable as e:
        sys.stdout.buffer.write(json.dumps({"error": str(e)}).encode() + b"\n")
        return
    meta = {"total": pdf.total_pages, "first": pdf.first, "last": pdf.last, "length": len(pdf.data)}
    sys.stdout.buffer.write(json.dumps(meta).encode() + b"\n" + pdf.data)


if __name__ == "__main__":
    main()
