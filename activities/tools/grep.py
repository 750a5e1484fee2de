"""Grep: ripgrep over the workspace, with Claude Code's output modes and pagination.

Also home of the ripgrep runner Glob shares: rg always gets an argument list (never a shell
string), runs under a timeout with heartbeats, and is killed if the activity is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from temporalio import activity

from activities.heartbeats import heartbeating, run_blocking
from activities.tools.base import (
    MAX_TOOL_RESULT_CHARS,
    ToolOutput,
    ToolRequest,
    no_nul,
    stored,
)
from activities.workspace import WorkspaceEscape, resolve_in_workspace

RG_TIMEOUT_S = 60.0
DEFAULT_HEAD_LIMIT = 250
VCS_DIRS = (".git", ".svn", ".hg", ".bzr")
# Minified files have megabyte-long lines; rg prints a placeholder for lines longer than this.
MAX_COLUMNS = 500
_STREAM_LIMIT = 16 * 1024 * 1024

DESCRIPTION = """\
A powerful search tool built on ripgrep.

Usage:
- ALWAYS use Grep for searching file contents. NEVER run `grep` or `rg` through the Bash tool: \
Grep is tuned for correct permissions and output.
- Full regex syntax is supported (e.g. "log.*Error", "function\\s+\\w+").
- Filter files with glob (e.g. "*.js", "**/*.tsx") or type (e.g. "js", "py", "rust"); type \
is more efficient than glob for standard file types.
- output_mode: "files_with_matches" lists matching files (the default), "content" shows the \
matching lines, "count" shows the number of matches per file.
- The pattern is ripgrep syntax, not grep: literal braces need escaping (use `interface\\{\\}` \
to find `interface{}` in Go code).
- Matching is within single lines by default. For patterns that span lines, such as \
`struct \\{[\\s\\S]*?field`, set multiline: true.
- head_limit caps the number of lines or entries returned (250 by default, 0 for no limit); \
offset skips entries first, for paging through large results.
- For open-ended searches that may take several rounds of globbing and grepping, use the Agent \
tool instead.\
"""


class GrepInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(
        description="The regular expression pattern to search for in file contents"
    )

    @field_validator("pattern", "glob", "type")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        return None if value is None else no_nul(value)

    path: str | None = Field(
        default=None,
        description="File or directory to search in (rg PATH). Defaults to current working "
        "directory.",
    )
    glob: str | None = Field(
        default=None,
        description='Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob',
    )
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="files_with_matches",
        description='Output mode: "content" shows matching lines (supports -A/-B/-C context, -n '
        'line numbers, head_limit), "files_with_matches" shows file paths (supports '
        'head_limit), "count" shows match counts (supports head_limit). Defaults to '
        '"files_with_matches".',
    )
    lines_before: int | None = Field(
        default=None,
        alias="-B",
        ge=0,
        description="Number of lines to show before each match (rg -B). Requires output_mode: "
        '"content", ignored otherwise.',
    )
    lines_after: int | None = Field(
        default=None,
        alias="-A",
        ge=0,
        description="Number of lines to show after each match (rg -A). Requires output_mode: "
        '"content", ignored otherwise.',
    )
    lines_around: int | None = Field(
        default=None,
        alias="-C",
        ge=0,
        description="Alias for context.",
    )
    context: int | None = Field(
        default=None,
        ge=0,
        description="Number of lines to show before and after each match (rg -C). Requires "
        'output_mode: "content", ignored otherwise.',
    )
    line_numbers: bool = Field(
        default=True,
        alias="-n",
        description='Show line numbers in output (rg -n). Requires output_mode: "content", '
        "ignored otherwise. Defaults to true.",
    )
    case_insensitive: bool = Field(
        default=False, alias="-i", description="Case insensitive search (rg -i)"
    )
    only_matching: bool = Field(
        default=False,
        alias="-o",
        description="Print only the matched parts of each line (rg -o). Requires output_mode: "
        '"content", ignored otherwise.',
    )
    type: str | None = Field(
        default=None,
        description="File type to search (rg --type). Common types: js, py, rust, go, java, etc. "
        "More efficient than glob for standard file types.",
    )
    head_limit: int = Field(
        default=DEFAULT_HEAD_LIMIT,
        ge=0,
        description='Limit output to the first N lines/entries, like "| head -N". Works across '
        "all output modes. Defaults to 250; pass 0 for no limit.",
    )
    offset: int = Field(
        default=0,
        ge=0,
        description='Skip the first N lines/entries before applying head_limit, like "| tail -n '
        '+N | head -N". Works across all output modes. Defaults to 0.',
    )
    multiline: bool = Field(
        default=False,
        description="Enable multiline mode where . matches newlines and patterns can span lines "
        "(rg -U --multiline-dotall). Default: false.",
    )


class GrepRequest(ToolRequest):
    input: GrepInput


def rg_binary() -> str:
    """The ripgrep executable: on PATH, else the one the `ripgrep` wheel put beside python."""
    found = shutil.which("rg") or str(Path(sys.executable).with_name("rg"))
    if not os.access(found, os.X_OK):
        # A worker without rg is misconfigured; raising lets another worker take the task.
        raise RuntimeError("ripgrep (rg) is not installed on this worker")
    return found


@dataclass(frozen=True)
class RgResult:
    returncode: int | None
    """None when rg was stopped: by the timeout or because enough lines were read."""
    lines: list[str]
    stderr: str
    timed_out: bool = False
    more: bool = False
    """More lines than `max_lines` were available."""


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def run_rg(
    args: Sequence[str],
    *,
    max_lines: int | None = None,
    max_chars: int | None = None,
    skip: int = 0,
    timeout_s: float = RG_TIMEOUT_S,
) -> RgResult:
    """Run rg and collect its stdout lines, stopping once `max_lines` are in hand, or once
    the lines after the first `skip` pass `max_chars` (more than a tool result can show:
    millions of lines held in memory for nothing)."""
    proc = await asyncio.create_subprocess_exec(
        rg_binary(),
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_STREAM_LIMIT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.create_task(proc.stderr.read())
    lines: list[str] = []
    more = timed_out = False
    try:
        async with asyncio.timeout(timeout_s), heartbeating():
            chars = 0
            async for raw in proc.stdout:
                if max_lines is not None and len(lines) >= max_lines:
                    more = True
                    break
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if max_chars is not None and len(lines) >= skip:
                    chars += len(line) + 1
                    if chars > max_chars:  # this line would not fit: the page ends before it
                        more = True
                        break
                lines.append(line)
            if not more:
                await proc.wait()
    except TimeoutError:
        timed_out = True
    finally:
        await _stop(proc)
        stderr = (await stderr_task).decode("utf-8", errors="replace")
    code = None if (more or timed_out) else proc.returncode
    return RgResult(code, lines, stderr.strip(), timed_out=timed_out, more=more)


def split_globs(glob: str | None) -> list[str]:
    """The glob field as rg --glob values: split on whitespace and on commas outside braces."""
    if not glob:
        return []
    out: list[str] = []
    for part in glob.split():
        if "{" in part and "}" in part:
            out.append(part)
        else:
            out.extend(p for p in part.split(",") if p)
    return out


def _mode_args(inp: GrepInput) -> list[str]:
    if inp.output_mode == "files_with_matches":
        return ["--files-with-matches"]
    # Sorted output keeps offset/head_limit pages stable from one call to the next.
    if inp.output_mode == "count":
        return ["--count-matches", "--with-filename", "--sort=path"]
    args = ["--sort=path", "--line-number" if inp.line_numbers else "--no-line-number"]
    if inp.only_matching:
        args.append("--only-matching")
    around = inp.lines_around if inp.lines_around is not None else inp.context
    if around is not None:
        args += ["--context", str(around)]
    else:
        if inp.lines_before is not None:
            args += ["--before-context", str(inp.lines_before)]
        if inp.lines_after is not None:
            args += ["--after-context", str(inp.lines_after)]
    return args


def rg_args(inp: GrepInput, target: Path) -> list[str]:
    """The full rg argument list for a Grep call searching `target`."""
    args = ["--no-config", "--hidden", "--color=never", f"--max-columns={MAX_COLUMNS}"]
    for vcs in VCS_DIRS:
        args += ["--glob", f"!{vcs}"]
    if inp.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if inp.case_insensitive:
        args.append("--ignore-case")
    if inp.type:
        args += ["--type", inp.type]
    for glob in split_globs(inp.glob):
        args += ["--glob", glob]
    return [*args, *_mode_args(inp), "--regexp", inp.pattern, "--", str(target)]


def page(
    items: list[str], head_limit: int, offset: int, more: bool = False
) -> tuple[list[str], str]:
    """One page of entries and the pagination note ("" when nothing was skipped or cut).

    `more` says entries exist beyond `items` (the caller stopped reading early).
    """
    rest = items[offset:]
    shown = rest[:head_limit] if head_limit else rest
    if len(shown) < len(rest) or more or offset:
        return (
            shown,
            f"\n\n[Showing results with pagination = limit: {head_limit}, offset: {offset}]",
        )
    return shown, ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def newest_first(paths: list[str]) -> list[str]:
    """Paths by modification time, newest first, then by path (blocking: stats every file)."""

    def key(p: str) -> tuple[int, str]:
        try:
            return (-os.stat(p).st_mtime_ns, p)
        except OSError:
            return (0, p)

    return sorted(paths, key=key)


def _count_of(line: str) -> int:
    """The count at the end of a `path:count` line; 0 for the rest of a file name that had a
    newline in it (rg prints the name as it is)."""
    count = line.rpartition(":")[2]
    return int(count) if count.isdigit() else 0


def format_counts(lines: list[str], inp: GrepInput) -> str:
    """Count mode: `path:count` per file, then the totals over every file that matched."""
    if not lines:
        return "No matches found"
    total = sum(_count_of(line) for line in lines)
    shown, note = page(lines, inp.head_limit, inp.offset)
    return (
        "\n".join(shown)
        + f"\n\nFound {_plural(total, 'total occurrence')} across {_plural(len(lines), 'file')}."
        + note
    )


async def _format(result: RgResult, inp: GrepInput) -> str:
    if inp.output_mode == "content":
        shown, note = page(result.lines, inp.head_limit, inp.offset, more=result.more)
        if result.more and not inp.head_limit and shown:
            # Cut at what a result can show: say where the next page starts.
            note = (
                f"\n\n[Showing {len(shown)} lines, as many as one result holds; continue "
                f"with offset: {inp.offset + len(shown)}]"
            )
        return "\n".join(shown) + note if shown else "No matches found"
    if inp.output_mode == "count":
        return format_counts(result.lines, inp)
    if not result.lines:
        return "No files found"
    ordered = await run_blocking(newest_first, result.lines)
    shown, note = page(ordered, inp.head_limit, inp.offset)
    return f"Found {_plural(len(shown), 'file')}\n" + "\n".join(shown) + note


async def _grep_files(req: GrepRequest) -> ToolOutput:
    """Search file contents with ripgrep; see DESCRIPTION for the model-facing contract."""
    inp, ctx = req.input, req.ctx
    try:
        target = resolve_in_workspace(ctx, inp.path or ctx.cwd)
    except WorkspaceEscape as e:
        return ToolOutput(content=str(e), is_error=True)
    try:
        exists = target.exists()
    except OSError as e:  # a name too long, a directory it may not enter
        return ToolOutput(
            content=f"Path {inp.path or ctx.cwd} cannot be searched: {e.strerror or e}.",
            is_error=True,
        )
    if not exists:
        return ToolOutput(content=f"Path does not exist: {inp.path or ctx.cwd}", is_error=True)
    # Content mode needs only the lines of the requested page, plus one to know there are more.
    wanted = (
        inp.offset + inp.head_limit if inp.output_mode == "content" and inp.head_limit else None
    )
    # Without a limit, no more than a result can show (the rest is paged).
    # Room kept for the note, so the result's own cap never cuts the page.
    budget = MAX_TOOL_RESULT_CHARS - 200 if inp.output_mode == "content" and not wanted else None
    result = await run_rg(rg_args(inp, target), max_lines=wanted, max_chars=budget, skip=inp.offset)
    if result.timed_out:
        return ToolOutput(
            content=f"Search timed out after {RG_TIMEOUT_S:.0f}s. Narrow it with path, glob or "
            "type.",
            is_error=True,
        )
    if result.returncode == 2 and not result.lines:
        return ToolOutput(content=f"rg failed: {result.stderr}", is_error=True)
    return ToolOutput(content=await _format(result, inp))


@activity.defn(name="tool.grep")
async def grep_files(req: GrepRequest) -> ToolOutput:
    """The activity: the tool's output, a long one also put in the blob store (see
    `ToolOutput.content_ref`)."""
    return await stored(await _grep_files(req))
