"""Read: a text file shown the way `cat -n` prints it (an image as an image, a notebook as its
cells), and the stamp that licenses edits."""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities.beneath import open_file
from activities.heartbeats import run_blocking
from activities.tools.base import (
    FileStamp,
    ImageRef,
    ToolOutput,
    ToolRequest,
    with_content_ref,
)
from activities.tools.images import MAX_FILE_BYTES as MAX_IMAGE_FILE_BYTES
from activities.tools.images import (
    NotAnImage,
    describe,
    is_image_name,
    prepare_image,
)
from activities.tools.notebook import NotANotebook, render_notebook
from activities.tools.pdf import MAX_FILE_BYTES as MAX_PDF_FILE_BYTES
from activities.tools.pdf import MEDIA_TYPE as PDF_MEDIA_TYPE
from activities.tools.pdf import NotReadable, is_pdf_name, prepare_pdf
from activities.tools.pdf import describe as describe_pdf
from activities.tools.text_lines import looks_binary, read_slice
from activities.workspace import WorkspaceEscape, file_digest, resolve_in_workspace
from agents.paths import normalize_path

MAX_LINES = 2000
MAX_FILE_BYTES = 256 * 1024
MAX_SLICE_FILE_BYTES = 1024**3
"""Read with offset or limit still hashes the whole file (for the stamp Write and Edit check)
and walks it line by line: a bigger file would run past the activity's time and be retried."""
MAX_TOKENS = 25_000
MAX_NOTEBOOK_BYTES = 16 * 1024**2
"""A notebook's outputs (plots as base64) make its file far bigger than the text shown."""

DESCRIPTION = """\
Reads a file from the local filesystem and returns its text with line numbers. Any file in \
the workspace can be read directly; if the user gives you a path, assume it is valid. Asking \
for a file that does not exist is fine: you get an error back.

Usage:
- file_path must be an absolute path, not a relative one.
- By default up to 2000 lines are returned, starting at the top of the file.
- offset (1-based line number) and limit (number of lines) read part of a file. Only use them \
when the file is too large to read at once; otherwise read the whole file.
- Lines longer than 2000 characters are cut off.
- The result is in `cat -n` form: spaces, the line number, a tab, then the line. Everything \
after the tab is the file's content; the number and the tab are not part of the file.
- Only files can be read, not directories. To list a directory, run `ls` with the Bash tool.
- Images (PNG, JPEG, GIF, WebP) are shown to you as images: you see them, as the \
multimodal model you are (a large one scaled to 2000 pixels on its longer side). Offset and \
limit do not apply to them.
- PDF files (.pdf) are shown to you as documents (their text and their pages as images). A \
PDF of more than 10 pages must be read in parts with the pages parameter ("1-5", "3"), at \
most 20 pages a call.
- Jupyter notebooks (.ipynb) are shown whole: every cell with its outputs, and up to 10 of \
their PNG and JPEG plots as images after the cells.
- Other binary files are rejected.
- When several files may be useful, read them all in one response with parallel tool calls.
- An existing but empty file returns a warning instead of content.
- A file must be read before it can be changed with Edit or overwritten with Write.\
"""


class ReadInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    file_path: str = Field(description="The absolute path to the file to read")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based). Only provide if the file "
        "is too large to read at once",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="The number of lines to read. Only provide if the file is too large to read "
        "at once",
    )
    pages: str | None = Field(
        default=None,
        description='Page range for PDF files (e.g. "1-5", "3", "10-20"). Only applicable to '
        "PDF files. Maximum 20 pages per request.",
    )


class ReadRequest(ToolRequest):
    input: ReadInput


def format_numbered(lines: Iterable[str], first_line: int) -> str:
    """Lines in `cat -n` form: the number right-aligned in six columns, a tab, the line."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first_line))


def format_size(size: int) -> str:
    """A byte count the way people write it: `900 bytes`, `300KB`, `1.5MB`."""
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f}".removesuffix(".0") + unit
        value /= 1024
    return f"{value:.1f}".removesuffix(".0") + "GB"


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True)


def _not_a_file(path: Path, key: str, cwd: str) -> ToolOutput | None:
    """The error for a path that is not a regular file, or None."""
    if path.is_dir():
        return _error(
            f"{key} is a directory, not a file. To list a directory, run `ls` with the Bash tool."
        )
    if not path.exists():
        return _error(f"File does not exist. {key}\nNote: your current working directory is {cwd}.")
    if not path.is_file():
        return _not_regular(key)
    return None


def _not_regular(key: str) -> ToolOutput:
    return _error(f"{key} is not a regular file; only regular files can be read.")


def _too_big(path: Path, whole_file: bool) -> ToolOutput | None:
    """The error for a text file too big to read this way, or None."""
    size = path.stat().st_size
    if not whole_file and size > MAX_SLICE_FILE_BYTES:
        return _error(
            f"File content ({format_size(size)}) exceeds the maximum size Read handles even "
            "with offset and limit (1GB). Search it with Grep, or take the lines you need "
            "with Bash (sed -n '100,200p', head, tail)."
        )
    if whole_file and size > MAX_FILE_BYTES:
        return _error(
            f"File content ({format_size(size)}) exceeds maximum allowed size (256KB). Use "
            "offset and limit parameters to read specific portions of the file, or search for "
            "specific content instead of reading the whole file."
        )
    return None


def _binary(key: str) -> ToolOutput:
    return _error(
        f"This tool cannot read binary files. {key} appears to be binary; use Bash with a "
        "tool made for the format if you need to inspect it."
    )


def read_sync(req: ReadRequest) -> ToolOutput:
    """The Read tool without the activity wrapper (blocking; runs in a thread)."""
    inp, ctx = req.input, req.ctx
    key = normalize_path(ctx.cwd, inp.file_path)
    try:
        path = resolve_in_workspace(ctx, inp.file_path)
    except WorkspaceEscape as e:
        return _error(str(e))
    if (problem := _not_a_file(path, key, ctx.cwd)) is not None:
        return problem
    # Offset and limit count lines: an image or a notebook is always read whole.
    if inp.pages is not None and not is_pdf_name(path.name):
        return _error(f"The pages parameter applies only to PDF files; {key} is not one.")
    if is_pdf_name(path.name):
        return _read_pdf(path, key, inp.pages)
    if is_image_name(path.name):
        return _read_image(path, key)
    if path.suffix.lower() == ".ipynb":
        return _read_notebook(path, key)
    whole_file = inp.offset is None and inp.limit is None
    if (problem := _too_big(path, whole_file)) is not None:
        return problem
    start = max(inp.offset or 1, 1) - 1
    # The checks above read metadata only; the content comes from a descriptor opened with
    # no link followed, so a link swapped in after the check is refused, not read (R13).
    with os.fdopen(open_file(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return _not_regular(key)
        if looks_binary(f):
            return _binary(key)
        got = read_slice(f, start, inp.limit or MAX_LINES)
    stamps = {key: got.stamp}
    if got.total_lines == 0:
        return ToolOutput(
            content="<system-reminder>Warning: the file exists but the contents are empty."
            "</system-reminder>",
            stamps=stamps,
        )
    if start >= got.total_lines:
        return ToolOutput(
            content=f"<system-reminder>Warning: the file exists but is shorter than the provided "
            f"offset ({start + 1}). The file has {got.total_lines} lines.</system-reminder>",
            stamps=stamps,
        )
    content = format_numbered(got.lines, start + 1)
    return _too_many_tokens(content) or ToolOutput(content=content, stamps=stamps)


READ_LESS = (
    "Use offset and limit parameters to read specific portions of the file, or search for "
    "specific content instead of reading the whole file."
)


def _too_many_tokens(content: str, read_less: str = READ_LESS) -> ToolOutput | None:
    """The error for content over MAX_TOKENS, saying how to read less, or None.

    Counted on what the model would get, line numbers included (4 characters a token,
    rounded up): counted on the lines alone, 2000 lines of 45 characters passed, and the
    result's cap (MAX_TOOL_RESULT_CHARS, the same 25,000 tokens) cut lines from its middle."""
    tokens = -(-len(content) // 4)
    if tokens <= MAX_TOKENS:
        return None
    return _error(
        f"File content ({tokens} tokens) exceeds maximum allowed tokens ({MAX_TOKENS}). "
        + read_less
    )


@dataclass(frozen=True)
class WholeFile:
    """A kind of file Read takes whole, with no offset or limit."""

    what: str
    limit: int
    hint: str


IMAGE = WholeFile(
    "An image",
    MAX_IMAGE_FILE_BYTES,
    " (one that big is scaled down to what the model takes; this one is past that too). "
    "Ask for a smaller image.",
)
PDF = WholeFile(
    "A PDF", MAX_PDF_FILE_BYTES, ". Extract what you need with Bash (pdftotext, qpdf --pages)."
)
NOTEBOOK = WholeFile(
    "A notebook", MAX_NOTEBOOK_BYTES, ". Print the cells you need with Bash: jq '.cells[N]'."
)


def _read_whole(path: Path, key: str, kind: WholeFile) -> tuple[bytes, FileStamp] | ToolOutput:
    """The bytes of a file Read takes whole and its stamp, or the error."""
    with os.fdopen(open_file(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return _not_regular(key)
        data = f.read(kind.limit + 1)
    if len(data) > kind.limit:
        return _error(
            f"{key} is {max(len(data), st.st_size)} bytes. {kind.what} can be read up to "
            f"{kind.limit} bytes{kind.hint}"
        )
    stamp = FileStamp(sha256=file_digest(data), mtime_ns=st.st_mtime_ns, size=len(data))
    return data, stamp


def _read_image(path: Path, key: str) -> ToolOutput:
    """The image for the model to see; its bytes go to the blob store, never to history."""
    got = _read_whole(path, key, IMAGE)
    if isinstance(got, ToolOutput):
        return got
    data, stamp = got
    try:
        image = prepare_image(data, key)
    except NotAnImage as e:
        return _error(str(e))
    return ToolOutput(
        content=describe(key, image, len(data)),
        stamps={key: stamp},
        images=(_stored(image.data, image.media_type),),
    )


def _read_pdf(path: Path, key: str, pages: str | None) -> ToolOutput:
    """The PDF, or the pages asked for, as a document for the model; like an image, its bytes
    go to the blob store, and history gets a description."""
    got = _read_whole(path, key, PDF)
    if isinstance(got, ToolOutput):
        return got
    data, stamp = got
    try:
        pdf = prepare_pdf(data, key, pages)
    except NotReadable as e:
        return _error(str(e))
    document = _stored(pdf.data, PDF_MEDIA_TYPE)
    return ToolOutput(
        content=describe_pdf(key, pdf, len(data)), stamps={key: stamp}, images=(document,)
    )


def _stored(data: bytes, media_type: str) -> ImageRef:
    """The bytes the model is to see, put in the blob store, as the reference history keeps."""
    from activities.store import default_store  # the store is for activities, not workflows

    return ImageRef(ref=default_store().put(data), media_type=media_type)


def _read_notebook(path: Path, key: str) -> ToolOutput:
    got = _read_whole(path, key, NOTEBOOK)
    if isinstance(got, ToolOutput):
        return got
    data, stamp = got
    try:
        rendered = render_notebook(data, key)
    except NotANotebook as e:
        return _error(str(e))
    if not rendered.text:
        return ToolOutput(
            content="<system-reminder>Warning: the notebook exists but has no cells."
            "</system-reminder>",
            stamps={key: stamp},
        )
    images, shown, notes = [], [], []
    for n, raw in enumerate(rendered.images, 1):
        try:
            image = prepare_image(raw, f"image {n}")
            images.append(_stored(image.data, image.media_type))
            shown.append(str(n))
        except NotAnImage as e:
            notes.append(f"[{e}]")
    if notes:  # the images that follow are no longer simply 1, 2, 3...
        notes.append(f"[the images after the cells, in order: {', '.join(shown) or 'none'}]")
    content = "\n".join([rendered.text, *notes])
    # Offset and limit do not apply to a notebook: the way to less is fewer cells.
    fewer_cells = f"Print the cells you need with Bash: jq '.cells[N]' {shlex.quote(key)}."
    return _too_many_tokens(content, fewer_cells) or ToolOutput(
        content=content, stamps={key: stamp}, images=tuple(images)
    )


def _read_and_store(req: ReadRequest) -> ToolOutput:
    # One thread for both: the store syncs what it writes.
    return with_content_ref(read_sync(req))


@activity.defn(name="tool.read")
async def read_file(req: ReadRequest) -> ToolOutput:
    """Read a text file from the workspace; see DESCRIPTION for the model-facing contract."""
    try:
        return await run_blocking(_read_and_store, req)
    except OSError as e:  # no permission, a file where a directory should be: model-fixable
        return ToolOutput(
            content=f"Cannot read {req.input.file_path}: {e.strerror or e}", is_error=True
        )
