"""A PDF for the model to read (spec T1 `pages`): the whole file when it is short, else the
pages asked for, cut out as a PDF of their own. The model gets it as a `document` block,
which the API reads as text and page images; history and the Web UI get a description.

The parsing runs in a child process (`activities/pdf_pages.py`) with a time and memory limit,
so `pypdf` is never imported by the worker itself (issue 9's memory budget), and a crafted
file cannot stall or exhaust it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from activities.pdf_pages import (
    CHILD_TIMEOUT_S,
    MAX_PAGES_PER_READ,
    MAX_PAGES_WHOLE,
    MAX_SENT_BYTES,
    NotReadable,
    PreparedPdf,
    parse_pages,
)

__all__ = [
    "MAX_PAGES_PER_READ",
    "MAX_PAGES_WHOLE",
    "MAX_SENT_BYTES",
    "NotReadable",
    "PreparedPdf",
    "describe",
    "is_pdf_name",
    "prepare_pdf",
]

MAX_FILE_BYTES = 64 * 1024**2
"""What Read opens at all: a bigger PDF is read with Bash (pdftotext, qpdf)."""
MEDIA_TYPE = "application/pdf"
ROOT = str(Path(__file__).resolve().parents[2])
CHILD_COMMAND = [sys.executable, "-P", "-m", "activities.pdf_pages"]
"""`-P`, `cwd` and `PYTHONPATH` at the project root: the child imports Outlast's module and
the standard library, never a `json.py` an agent wrote where the worker runs."""
CHILDREN = threading.BoundedSemaphore(2)
"""PDF children at once per worker: each may take up to its memory limit."""


def is_pdf_name(name: str) -> bool:
    return name.lower().endswith(".pdf")


def prepare_pdf(data: bytes, key: str, pages: str | None) -> PreparedPdf:
    """The PDF to show for a Read of `key` with `pages` (None: the whole file).

    The file is parsed in a child process with a time and memory limit: pypdf is pure
    Python, a thread running it cannot be stopped, and a crafted PDF can keep it busy for
    good or make it take all the memory there is, stalling every tool of the worker."""
    if b"%PDF-" not in data[:1024]:  # where PDF readers look for the header
        raise NotReadable(f"{key} is named like a PDF but is not one (no %PDF- header).")
    if pages is not None:
        parse_pages(pages)  # refused here, without a process for it
    header = json.dumps({"key": key, "pages": pages}).encode() + b"\n"
    # Nothing of the worker's environment (its API keys) but where Python finds its modules.
    env = {"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    try:
        with CHILDREN:
            done = subprocess.run(
                CHILD_COMMAND,
                input=header + data,
                capture_output=True,
                timeout=CHILD_TIMEOUT_S,
                env=env,
                cwd=ROOT,
            )
    except subprocess.TimeoutExpired:
        raise NotReadable(
            f"{key} took more than {CHILD_TIMEOUT_S} seconds to read as a PDF; extract what "
            "you need with Bash (pdftotext, qpdf --pages)."
        ) from None
    head, _, body = done.stdout.partition(b"\n")
    try:
        answer = json.loads(head)
    except ValueError:
        why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no answer"]
        raise NotReadable(
            f"{key} could not be read as a PDF (the reader stopped: {why[0][:300]})."
        ) from None
    if "error" in answer:
        raise NotReadable(answer["error"])
    if done.returncode != 0 or len(body) != answer.get("length"):
        # Killed part-way through writing (its memory or CPU limit): no PDF cut short is sent.
        raise NotReadable(f"{key} could not be read as a PDF (the reader was stopped).")
    return PreparedPdf(
        data=body, total_pages=answer["total"], first=answer["first"], last=answer["last"]
    )


def describe(key: str, pdf: PreparedPdf, size: int) -> str:
    """What history, the Web UI and the model's text part say about the document."""
    pages = "page" if pdf.total_pages == 1 else "pages"
    text = f"[pdf: {key}, {pdf.total_pages} {pages}, {size} bytes"
    if not pdf.whole:
        span = str(pdf.first) if pdf.first == pdf.last else f"{pdf.first}-{pdf.last}"
        text += f"; shown: {'page' if pdf.first == pdf.last else 'pages'} {span}"
    return text + "]"
