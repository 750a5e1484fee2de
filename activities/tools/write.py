"""Write: create a file or overwrite one the agent has read and nobody has changed since."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities.beneath import read_bytes
from activities.tools.base import FileStamp, ToolOutput, ToolRequest
from activities.tools.read import format_numbered
from activities.tools.write_ledger import WriteLedger, run_writing
from activities.workspace import (
    WorkspaceEscape,
    atomic_write,
    is_digest_of,
    resolve_for_write,
    stamp_of_bytes,
)
from agents.paths import normalize_path

SNIPPET_CONTEXT_LINES = 4
SNIPPET_MAX_LINES = 50

NOT_READ = "File has not been read yet. Read it first before writing to it."
MODIFIED = (
    "File has been modified since read, either by the user or by a linter. Read it again "
    "before attempting to write it."
)

DESCRIPTION = """\
Writes a file to the local filesystem, replacing the file if it already exists.

Usage:
- file_path must be an absolute path, not a relative one. Missing parent directories are \
created.
- To overwrite an existing file you must have read it with the Read tool first in this \
conversation, and it must not have changed since; otherwise the write fails and you need to \
read it again.
- Prefer editing existing files with the Edit tool; use Write for new files or complete \
rewrites.
- Never create documentation files (*.md, README) unless the user explicitly asks for them.
- Only use emojis if the user explicitly asks for them.\
"""


class WriteInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    file_path: str = Field(
        description="The absolute path to the file to write (must be absolute, not relative)"
    )
    content: str = Field(description="The content to write to the file")


class WriteRequest(ToolRequest):
    input: WriteInput


def unchanged_since_read(read_stamp: FileStamp | None, current: bytes) -> str | None:
    """Why an existing file may not be overwritten, or None if the agent's read is current."""
    if read_stamp is None:
        return NOT_READ
    if not is_digest_of(read_stamp.sha256, current):
        return MODIFIED
    return None


def split_lines(text: str) -> list[str]:
    """Lines as Read numbers them: no line endings, no phantom line after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def changed_line_span(old: str, new: str) -> tuple[int, int]:
    """First and last 0-based line of `new` that differ from `old` (common prefix and suffix)."""
    a, b = split_lines(old), split_lines(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, max(head, len(b) - tail - 1)


def snippet(text: str, first: int, last: int) -> str:
    """Lines `first`..`last` (0-based) of `text` with some context, numbered like Read."""
    lines = split_lines(text)
    lo = max(0, first - SNIPPET_CONTEXT_LINES)
    hi = min(len(lines), last + SNIPPET_CONTEXT_LINES + 1, lo + SNIPPET_MAX_LINES)
    return format_numbered(lines[lo:hi], lo + 1)


def updated_message(key: str, old: str, new: str) -> str:
    """Claude Code's confirmation for a changed file, with a snippet around the change."""
    first, last = changed_line_span(old, new)
    return (
        f"The file {key} has been updated. Here's the result of running `cat -n` on a snippet "
        f"of the edited file:\n{snippet(new, first, last)}"
    )


CRLF_KEPT = (
    "Its lines end in CRLF, as the file's did; to change its line endings, use Bash "
    "(e.g. `sed -i 's/\\r$//' FILE`)."
)


def uses_crlf(raw: bytes) -> bool:
    """Every line ends in CRLF. A file that mixes endings is edited as it is."""
    lf = raw.count(b"\n")
    return lf > 0 and raw.count(b"\r\n") == lf


def on_disk(content: str, current: bytes) -> bytes:
    """What Write puts over `current`: `content`, its lines ending in CRLF where every line
    of the file did and the model wrote none (it writes `\n`: a Windows file came out LF
    throughout, where Edit kept its CRLF; a user test, 2026-12-07)."""
    if "\r" not in content and uses_crlf(current):
        content = content.replace("\n", "\r\n")
    return content.encode("utf-8")


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True)


def create_file(
    key: str, path: Path, data: bytes, ledger: WriteLedger | None, exists: str
) -> ToolOutput:
    """Write or Edit making a new file. `exists`: the error if a file was made at `path` since
    the caller looked (unless it is an earlier attempt's write of `data`, still running)."""
    created = f"File created successfully at: {key}"
    if ledger:
        ledger.note(data, created)
    try:
        stamp = atomic_write(path, data, create=True)
    except FileExistsError:
        current, st = read_bytes(path)
        if ledger and ledger.answer(current) is not None:
            return ToolOutput(content=created, stamps={key: stamp_of_bytes(current, st)})
        return _error(exists)
    return ToolOutput(content=created, stamps={key: stamp})


def write_sync(req: WriteRequest, ledger: WriteLedger | None = None) -> ToolOutput:
    """The Write tool without the activity wrapper (blocking; runs in a thread). `ledger`:
    where the activity notes its write, and a retry of it finds that it was made."""
    inp, ctx = req.input, req.ctx
    key = normalize_path(ctx.cwd, inp.file_path)
    try:
        path = resolve_for_write(ctx, inp.file_path)
    except WorkspaceEscape as e:
        return _error(str(e))
    if path.is_dir():
        return _error(f"{key} is a directory; Write needs a file path.")
    data = inp.content.encode("utf-8")
    if not path.exists():
        return create_file(key, path, data, ledger, exists=NOT_READ)
    current, st = read_bytes(path)
    if ledger and (done := ledger.answer(current)) is not None:
        return ToolOutput(content=done, stamps={key: stamp_of_bytes(current, st)})
    data = on_disk(inp.content, current)
    if current != data and (problem := unchanged_since_read(ctx.read_stamp, current)):
        return _error(problem)
    content = updated_message(key, current.decode("utf-8", errors="replace"), inp.content)
    if data != inp.content.encode("utf-8"):
        # Said, or a model asked to convert the file to LF would take it as done.
        content += f"\n{CRLF_KEPT}"
    if current == data:
        # Already the requested content (a retry with no ledger, or a write of what the file
        # holds): writing it again changes nothing.
        stamp = stamp_of_bytes(current, st)
    else:
        if ledger:
            ledger.note(data, content)
        stamp = atomic_write(path, data)
    return ToolOutput(content=content, stamps={key: stamp})


@activity.defn(name="tool.write")
async def write_file(req: WriteRequest) -> ToolOutput:
    """Create or overwrite a file in the workspace; see DESCRIPTION for the model contract."""
    return await run_writing(write_sync, req, "write", req.input.file_path)
