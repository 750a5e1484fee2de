"""Glob: find files by name pattern, oldest first.

rg lists the candidate files (`rg --files --hidden`): it is fast and skips what .gitignore
excludes (node_modules, .venv, build output), which would otherwise drown the results. The
pattern is matched here rather than with `rg --iglob`, because rg lets a glob that matches a
directory (`**/*` matches `node_modules`) override the ignore rules; and Python 3.11's pathlib
has neither braces nor case-insensitive matching. Pattern semantics follow gitignore, as in rg:
a pattern without a slash (`*.py`) matches file names at any depth, one with a slash is
anchored at the search directory, `**` spans directories and `{a,b}` alternates.
"""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator
from temporalio import activity

from activities.heartbeats import run_blocking
from activities.tools.base import ToolOutput, ToolRequest, no_nul, stored
from activities.tools.grep import VCS_DIRS, run_rg
from activities.workspace import WorkspaceEscape, resolve_in_workspace

MAX_RESULTS = 100
TRUNCATED_NOTE = "(Results are truncated. Consider using a more specific path or pattern.)"
_GLOB_CHARS = frozenset("*?[{")

DESCRIPTION = """\
Fast file pattern matching that works with any codebase size.

Usage:
- Supports glob patterns like "**/*.js" or "src/**/*.ts"; braces ("*.{ts,tsx}") work too. \
Matching is case-insensitive, and a pattern without a slash matches file names at any depth. \
Directories that .gitignore excludes are skipped.
- Returns matching file paths (files only, not directories) sorted by modification time, \
oldest first, at most 100 of them.
- Use this tool when you need to find files by name.
- For an open-ended search that may take several rounds of globbing and grepping, use the \
Agent tool instead.
- You can call several tools in one response; it is often better to run a few potentially \
useful searches at once.\
"""


class GlobInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pattern: str = Field(description="The glob pattern to match files against")

    @field_validator("pattern")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        return no_nul(value)

    path: str | None = Field(
        default=None,
        description="The directory to search in. If not specified, the current working "
        "directory will be used. IMPORTANT: Omit this field to use the default directory. DO "
        'NOT enter "undefined" or "null" - simply omit it for the default behavior. Must be a '
        "valid directory path if provided.",
    )


class GlobRequest(ToolRequest):
    input: GlobInput
    newest_first: bool = False
    """`tools.glob_sort: mtime_desc` (spec T5 fixes oldest first as the default)."""


def split_pattern(pattern: str) -> tuple[str | None, str]:
    """An absolute pattern as (directory to search, pattern relative to it).

    rg matches globs against paths relative to the directory it searches, so the literal
    leading directories of `/repo/src/**/*.py` become the search root. The rest keeps a leading
    slash, which anchors it there: `/repo/*.py` means top-level files only, as written.
    """
    if not pattern.startswith("/"):
        return None, pattern.removeprefix("./")
    parts = pattern.split("/")
    first_glob = next(
        (i for i, part in enumerate(parts) if _GLOB_CHARS & set(part)), len(parts) - 1
    )
    return "/".join(parts[:first_glob]) or "/", "/" + "/".join(parts[first_glob:])


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    """The regex for the `[...]` class starting at `i`, and the index after it."""
    end = pattern.find("]", i + 2)  # a `]` right after `[` (or `[!`) is a member
    if end < 0:
        return re.escape("["), i + 1
    body = pattern[i + 1 : end].replace("\\", "\\\\")
    if body.startswith("!"):
        body = "^" + body[1:]
    return f"[{body}]", end + 1


def _translate(pattern: str) -> str:
    out: list[str] = []
    depth = i = 0
    while i < len(pattern):
        c = pattern[i]
        step = 1
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            step = 3
        elif pattern.startswith("**", i):
            out.append(".*")
            step = 2
        elif c in "*?":
            out.append("[^/]*" if c == "*" else "[^/]")
        elif c == "[":
            part, next_i = _char_class(pattern, i)
            out.append(part)
            step = next_i - i
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            step = 2
        else:
            out.append(re.escape(c))
        i += step
    if depth:
        raise ValueError("unbalanced braces")
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A case-insensitive regex for `pattern`, matched against paths relative to the search dir.

    Raises:
        ValueError: The pattern's braces are unbalanced, or a bracket expression is not one
            (`[z-a]`, `[!]`).
    """
    anchored = "/" in pattern.rstrip("/")
    body = _translate(pattern.strip("/"))
    try:
        return re.compile(
            ("" if anchored else "(?:.*/)?") + body + r"\Z", re.IGNORECASE | re.DOTALL
        )
    except re.error as e:  # not a ValueError: it would fail the activity
        raise ValueError(f"bad bracket expression ({e.msg})") from None


def matching(paths: list[str], root: str, pattern: re.Pattern[str]) -> list[str]:
    """The absolute `paths` (as rg prints them under `root`) whose relative form matches."""
    prefix = root.rstrip("/") + "/"
    return [p for p in paths if pattern.match(p.removeprefix(prefix))]


def by_mtime(paths: list[str], newest_first: bool = False) -> list[str]:
    """Paths by modification time, oldest (or newest) first, ties by path (blocking: stats
    every file)."""

    def key(p: str) -> tuple[int, str]:
        try:
            mtime = os.stat(p).st_mtime_ns
        except OSError:  # deleted since rg listed it
            mtime = 0
        return (-mtime if newest_first else mtime, p)

    return sorted(paths, key=key)


def format_paths(paths: list[str]) -> str:
    """The result the model sees: one path per line, capped at MAX_RESULTS."""
    if not paths:
        return "No files found"
    shown = "\n".join(paths[:MAX_RESULTS])
    return f"{shown}\n{TRUNCATED_NOTE}" if len(paths) > MAX_RESULTS else shown


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True)


async def _glob_files(req: GlobRequest) -> ToolOutput:
    """List workspace files matching a glob; see DESCRIPTION for the model-facing contract."""
    inp, ctx = req.input, req.ctx
    base, pattern = split_pattern(inp.pattern)
    where = base or inp.path or ctx.cwd
    try:
        root = resolve_in_workspace(ctx, where)
        regex = compile_glob(pattern)
    except WorkspaceEscape as e:
        return _error(str(e))
    except ValueError as e:
        return _error(f"Invalid glob pattern {inp.pattern!r}: {e}")
    try:
        is_dir, exists = root.is_dir(), root.exists()
    except OSError as e:  # a name too long, a directory it may not enter
        return _error(f"Path {where} cannot be searched: {e.strerror or e}.")
    if not is_dir:
        state = "is not a directory" if exists else "does not exist"
        return _error(f"Path {where} {state}; Glob's path must be an existing directory.")
    excludes = [arg for vcs in VCS_DIRS for arg in ("--glob", f"!{vcs}")]
    result = await run_rg(["--no-config", "--files", "--hidden", *excludes, "--", str(root)])
    if result.timed_out:
        return _error("Glob timed out. Use a more specific path or pattern.")
    if result.returncode == 2 and not result.lines:
        return _error(f"Listing {root} failed: {result.stderr}")
    # In a thread: a pattern that makes the regex backtrack must not stall the worker's loop
    # (heartbeats, every other activity on it).
    found = await run_blocking(matching, result.lines, str(root), regex)
    ordered = await run_blocking(by_mtime, found, req.newest_first)
    return ToolOutput(content=format_paths(ordered))


@activity.defn(name="tool.glob")
async def glob_files(req: GlobRequest) -> ToolOutput:
    """The activity: the tool's output, a long one also put in the blob store (see
    `ToolOutput.content_ref`)."""
    return await stored(await _glob_files(req))
