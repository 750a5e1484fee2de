"""Edit: exact string replacement in a file the agent has read.

Idempotent under retries: an attempt that wrote the file and then lost its result is retried
against a file that no longer matches the agent's read stamp. If undoing the edit gives back
exactly the content the agent read, the edit is already applied and the retry succeeds.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities.beneath import read_bytes
from activities.tools.base import FileStamp, ToolOutput, ToolRequest
from activities.tools.write import MODIFIED, NOT_READ, create_file, snippet, uses_crlf
from activities.tools.write_ledger import WriteLedger, run_writing
from activities.workspace import (
    WorkspaceEscape,
    atomic_write,
    is_digest_of,
    resolve_for_write,
    stamp_of_bytes,
)
from agents.paths import normalize_path

# Undoing a short new_string that occurs very often would hash the file once per occurrence.
ALREADY_EXISTS = "Cannot create new file - file already exists."
MAX_UNDO_CANDIDATES = 200

NO_CHANGES = "No changes to make: old_string and new_string are exactly the same."

DESCRIPTION = """\
Performs an exact string replacement in a file.

Usage:
- You must use the Read tool on the file at least once in this conversation before editing \
it; editing a file you have not read, or one that changed since you read it, fails.
- file_path must be an absolute path, not a relative one.
- When copying text from Read output, keep the indentation (tabs and spaces) exactly as it \
appears after the line-number prefix. The prefix (spaces, line number, tab) is not part of the \
file: never include any of it in old_string or new_string.
- The edit fails if old_string is not found, or if it occurs more than once and replace_all \
is false. Either include more surrounding lines to make old_string unique, or set replace_all \
to replace every occurrence (useful for renaming a variable throughout a file).
- new_string must differ from old_string.
- An empty old_string on a file that does not exist yet creates it with new_string.
- Prefer editing existing files over creating new ones. Only use emojis if the user asks.\
"""


class EditInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(
        description="The text to replace it with (must be different from old_string)"
    )
    replace_all: bool = Field(
        default=False, description="Replace all occurrences of old_string (default false)"
    )


class EditRequest(ToolRequest):
    input: EditInput


_STRAIGHTEN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalize_quotes(text: str) -> str:
    """Curly quotes made straight; one character for one, so offsets carry over."""
    return text.translate(_STRAIGHTEN)


def find_actual_string(text: str, old: str) -> str | None:
    """`old` as it is spelled in `text`: exactly, with the file's curly quotes, or (a file
    that mixes line endings) with the file's CRs at the ends of its lines."""
    if old in text:
        return old
    at = normalize_quotes(text).find(normalize_quotes(old))
    if at >= 0:
        return text[at : at + len(old)]
    if "\r\n" not in text or "\n" not in old:
        return None
    # Read shows lines without their CR, so the model's multi-line string has none.
    lines = [re.escape(normalize_quotes(line)) for line in old.replace("\r\n", "\n").split("\n")]
    found = re.search("\r?\n".join(lines), normalize_quotes(text))
    return None if found is None else text[found.start() : found.end()]


def with_line_endings(new: str, actual_old: str) -> str:
    """`new` ending its lines as the text it replaces does, where that text ends them all in
    CRLF (a file that mixes endings keeps each part's own)."""
    if "\n" not in actual_old or actual_old.count("\r\n") != actual_old.count("\n"):
        return new
    return new.replace("\r\n", "\n").replace("\n", "\r\n")


def _curl(text: str, straight: str, left: str, right: str) -> str:
    out = []
    for i, ch in enumerate(text):
        prev = text[i - 1] if i else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch != straight:
            out.append(ch)
        elif straight == "'" and prev.isalpha() and nxt.isalpha():
            out.append(right)  # an apostrophe, as in "don't"
        elif not prev or prev.isspace() or prev in "([{\u2014\u2013":
            out.append(left)
        else:
            out.append(right)
    return "".join(out)


def preserve_quote_style(old: str, actual_old: str, new: str) -> str:
    """`new` with curly quotes where the file had curly quotes in place of `old`'s straight ones.

    The model types straight quotes; keeping the file's typography is what a person would do.
    """
    if old == actual_old:
        return new
    if "\u201c" in actual_old or "\u201d" in actual_old:
        new = _curl(new, '"', "\u201c", "\u201d")
    if "\u2018" in actual_old or "\u2019" in actual_old:
        new = _curl(new, "'", "\u2018", "\u2019")
    return new


@dataclass(frozen=True)
class Applied:
    """An edit applied in memory: the new text and where its first replacement starts."""

    text: str
    at: int
    inserted: str
    write: bool = True
    """False when the file already holds this result (a retried attempt)."""


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> Applied | str:
    """Replace `old` with `new` in `text` under the uniqueness rule.

    Returns:
        The result, or the model-facing error message when the edit cannot be made.
    """
    actual_old = find_actual_string(text, old)
    if actual_old is None:
        return f"String to replace not found in file.\nString: {old}"
    count = text.count(actual_old)
    if count > 1 and not replace_all:
        return (
            f"Found {count} matches of the string to replace, but replace_all is false. To "
            "replace all occurrences, set replace_all to true. To replace only one occurrence, "
            f"please provide more context to uniquely identify the instance.\nString: {old}"
        )
    actual_new = with_line_endings(preserve_quote_style(old, actual_old, new), actual_old)
    replaced = text.replace(actual_old, actual_new, -1 if replace_all else 1)
    return Applied(text=replaced, at=text.index(actual_old), inserted=actual_new)


def _occurrences(text: str, sub: str) -> list[int]:
    found, at = [], text.find(sub)
    while at >= 0 and len(found) < MAX_UNDO_CANDIDATES:
        found.append(at)
        at = text.find(sub, at + 1)
    return found


def already_applied(text: str, inp: EditInput, read_sha256: str, crlf: bool) -> int | None:
    """Where the edit sits if undoing it restores the content the agent read, else None.

    A pure deletion (empty new_string) cannot be undone without knowing where it was; such a
    retry reports the file as modified, and the model reads it again.
    """
    old, new = inp.old_string, inp.new_string
    if not new:
        return None
    if inp.replace_all:
        candidates = [(text.find(new), text.replace(new, old))]
    else:
        candidates = [(i, text[:i] + old + text[i + len(new) :]) for i in _occurrences(text, new)]
    for at, undone in candidates:
        if at >= 0 and is_digest_of(read_sha256, _to_disk(undone, crlf)):
            return at
    return None


def _to_disk(text: str, crlf: bool) -> bytes:
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True)


def _updated(key: str, inp: EditInput, text: str, at: int, inserted: str) -> str:
    if inp.replace_all:
        return (
            f"The file {key} has been updated. All occurrences of '{inp.old_string}' were "
            f"successfully replaced with '{inp.new_string}'."
        )
    first = text.count("\n", 0, at)
    spanned = inserted.count("\n") - inserted.endswith("\n")
    body = snippet(text, first, first + max(spanned, 0))
    return (
        f"The file {key} has been updated. Here's the result of running `cat -n` on a snippet "
        f"of the edited file:\n{body}"
    )


def _create(key: str, path: Path, inp: EditInput, ledger: WriteLedger | None) -> ToolOutput:
    data = inp.new_string.encode("utf-8")
    return create_file(key, path, data, ledger, exists=ALREADY_EXISTS)


def plan_edit(
    work: str, raw: bytes, crlf: bool, inp: EditInput, read_stamp: FileStamp | None
) -> Applied | str:
    """Decide what an Edit of an existing file does.

    Args:
        work: The file's text, with CRLF turned into LF when `crlf`.
        raw: The file's bytes, which the read stamp's hash covers.
        crlf: The file's lines end in CRLF; `work` gets them back when written.
        inp: The edit.
        read_stamp: The agent's stamp of the file, if it has read it.

    Returns:
        The edit to write (or, with `write=False`, one found already applied), or the
        model-facing error message.
    """
    if inp.old_string == "" and work.strip():
        if work == inp.new_string:  # a retried creation
            return Applied(text=work, at=0, inserted=work, write=False)
        return ALREADY_EXISTS
    if read_stamp is None:
        return NOT_READ
    if not is_digest_of(read_stamp.sha256, raw):
        at = already_applied(work, inp, read_stamp.sha256, crlf)
        if at is None:
            return MODIFIED
        return Applied(text=work, at=at, inserted=inp.new_string, write=False)
    if inp.old_string == "":
        return Applied(text=inp.new_string, at=0, inserted=inp.new_string)
    return apply_edit(work, inp.old_string, inp.new_string, inp.replace_all)


def edit_sync(req: EditRequest, ledger: WriteLedger | None = None) -> ToolOutput:
    """The Edit tool without the activity wrapper (blocking; runs in a thread). `ledger`:
    where the activity notes its write, and a retry of it finds that it was made."""
    inp, ctx = req.input, req.ctx
    if inp.old_string == inp.new_string:
        return _error(NO_CHANGES)
    key = normalize_path(ctx.cwd, inp.file_path)
    if key.endswith(".ipynb"):
        # Read shows a notebook's cells, not its JSON: a string from that view would break it.
        return _error("File is a Jupyter Notebook. Use the NotebookEdit to edit this file.")
    try:
        path = resolve_for_write(ctx, inp.file_path)
    except WorkspaceEscape as e:
        return _error(str(e))
    if path.is_dir():
        return _error(f"{key} is a directory; Edit needs a file path.")
    if not path.exists():
        if inp.old_string == "":
            return _create(key, path, inp, ledger)
        return _error(f"File does not exist. {key}")
    raw, st = read_bytes(path)
    if ledger and (done := ledger.answer(raw)) is not None:
        return ToolOutput(content=done, stamps={key: stamp_of_bytes(raw, st)})
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # UTF-32's too
            return _error(
                f"{key} is UTF-16 or UTF-32 text (it starts with a byte order mark); Edit "
                "changes UTF-8 files only. Convert it with Bash (iconv) if it may be UTF-8."
            )
        return _error(f"{key} is not UTF-8 text; Edit only changes text files.")
    # Read shows lines without their CR, so the model's strings never contain one; the edit
    # works on LF text and the file keeps its CRLF endings.
    crlf = uses_crlf(raw)
    work = text.replace("\r\n", "\n") if crlf else text
    if crlf and inp.old_string:
        # A model that writes CRLF itself would match nothing, or put "\r\r\n" on disk.
        inp = inp.model_copy(
            update={
                "old_string": inp.old_string.replace("\r\n", "\n"),
                "new_string": inp.new_string.replace("\r\n", "\n"),
            }
        )
    plan = plan_edit(work, raw, crlf, inp, ctx.read_stamp)
    if isinstance(plan, str):
        return _error(plan)
    content = _updated(key, inp, plan.text, plan.at, plan.inserted)
    if plan.write:
        data = _to_disk(plan.text, crlf)
        if ledger:
            ledger.note(data, content)
        stamp = atomic_write(path, data)
    else:
        stamp = stamp_of_bytes(raw, st)
    return ToolOutput(content=content, stamps={key: stamp})


@activity.defn(name="tool.edit")
async def edit_file(req: EditRequest) -> ToolOutput:
    """Replace a string in a workspace file; see DESCRIPTION for the model-facing contract."""
    return await run_writing(edit_sync, req, "edit", req.input.file_path)
