"""The child process of a PDF Read (activities/tools/pdf.py `prepare_pdf`): stdin is a JSON
line (`key`, `pages`) and the file's bytes; stdout a JSON line (`total`, `first`, `last`, or
`error`) and, on success, the PDF to show."""

from __future__ import annotations

import json
import sys

from activities.tools.pdf import NotReadable, child_limits, cut_pdf


def main() -> None:
    child_limits()
    raw = sys.stdin.buffer.read()
    head, _, data = raw.partition(b"\n")
    ask = json.loads(head)
    try:
        pdf = cut_pdf(data, ask["key"], ask["pages"])
    except NotReadable as e:
        sys.stdout.buffer.write(json.dumps({"error": str(e)}).encode() + b"\n")
        return
    meta = {"total": pdf.total_pages, "first": pdf.first, "last": pdf.last}
    sys.stdout.buffer.write(json.dumps(meta).encode() + b"\n" + pdf.data)


if __name__ == "__main__":
    main()
