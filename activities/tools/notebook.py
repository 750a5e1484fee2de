"""A Jupyter notebook as Read shows it: every cell with its outputs, as Claude Code's Read does.

Each cell is `<cell id="…">` + its type (when not code) + its source + `</cell id="…">`,
followed by its outputs as text. The first MAX_IMAGES images among the outputs (PNG and
JPEG plots) are shown after the text, each named where its output is.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

MAX_CELL_OUTPUT_CHARS = 10_000
"""A cell whose outputs are longer is shown without them, with the command that prints them."""
MAX_IMAGES = 10
"""Images shown from one notebook: each is ~1,600 tokens and a request carries 20 at most
(activities/request_images.py)."""
SHOWN_MIME = ("image/png", "image/jpeg")


@dataclass
class Rendered:
    text: str
    images: list[bytes] = field(default_factory=list)
    """The output images to show, in order: image N is `images[N - 1]`."""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NotANotebook(ValueError):
    """The file is not a notebook Read can show; the message is for the model."""


def _text(value: Any) -> str:
    """nbformat keeps multi-line strings as lists of lines."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return "" if value is None else str(value)


def _output_text(output: dict[str, Any], images: list[bytes]) -> str:
    kind = output.get("output_type")
    # Colour codes (a traceback's, a progress bar's) mean nothing to the model.
    if kind == "stream":
        return _ANSI.sub("", _text(output.get("text")))
    if kind == "error":
        trace = "\n".join(_text(line) for line in output.get("traceback") or [])
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return _ANSI.sub("", f"{head}\n{trace}" if trace else head)
    if kind in ("execute_result", "display_data"):
        data = output.get("data") or {}
        parts = [_text(data["text/plain"])] if "text/plain" in data else []
        parts += [_image(mime, data[mime], images) for mime in data if mime.startswith("image/")]
        return "\n".join(parts)
    return ""


def _image(mime: str, value: Any, images: list[bytes]) -> str:
    """The note naming an output image, the image added to `images` when it is shown."""
    if mime not in SHOWN_MIME:
        return f"[{mime} output not shown]"
    if len(images) >= MAX_IMAGES:
        return f"[{mime} output not shown: a Read shows {MAX_IMAGES} images of a notebook]"
    try:
        images.append(base64.b64decode("".join(_text(value).split()), validate=True))
    except (binascii.Error, ValueError):
        return f"[{mime} output not shown: its data is not base64]"
    return f"[{mime} output: image {len(images)}, shown after the cells]"


def _cell(index: int, cell: dict[str, Any], language: str, path: str, images: list[bytes]) -> str:
    cell_id = cell.get("id") or f"cell-{index}"
    kind = cell.get("cell_type", "code")
    meta = "" if kind == "code" else f"<cell_type>{kind}</cell_type>"
    if kind == "code" and language != "python":
        meta += f"<language>{language}</language>"
    shown = f'<cell id="{cell_id}">{meta}{_text(cell.get("source"))}</cell id="{cell_id}">'
    before = len(images)
    outputs = [
        t
        for o in cell.get("outputs") or []
        if isinstance(o, dict)
        if (t := _output_text(o, images))
    ]
    text = "\n".join(outputs)
    if len(text) > MAX_CELL_OUTPUT_CHARS:
        del images[before:]  # their notes go with the rest of the outputs
        text = (
            f"[outputs of {len(text)} characters not shown; print them with Bash: "
            f"jq '.cells[{index}].outputs' {shlex.quote(path)}]"
        )
    return f"{shown}\n{text}" if text else shown


def render_notebook(raw: bytes, path: str) -> Rendered:
    """The notebook's cells and outputs, or NotANotebook."""
    try:
        book = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise NotANotebook(
            f"{path} is not a valid notebook: its JSON does not parse ({e})."
        ) from None
    if not isinstance(book, dict) or not isinstance(book.get("cells"), list):
        raise NotANotebook(f"{path} is not a valid notebook: it has no list of `cells`.")
    meta = book.get("metadata") if isinstance(book.get("metadata"), dict) else {}
    info = meta.get("language_info")
    language = str((info.get("name") if isinstance(info, dict) else None) or "python")
    # Numbered as in the file: the jq command for a long output names the cell by index.
    cells = [(i, c) for i, c in enumerate(book["cells"]) if isinstance(c, dict)]
    images: list[bytes] = []
    try:
        text = "\n".join(_cell(i, c, language, path, images) for i, c in cells)
    except (TypeError, AttributeError, KeyError) as e:
        # A cell or an output of the wrong shape (`data` a list, a number for a string).
        raise NotANotebook(
            f"{path} is not a valid notebook: a cell does not have the notebook format's "
            f"shape ({type(e).__name__}: {e})."
        ) from None
    return Rendered(text, images)
