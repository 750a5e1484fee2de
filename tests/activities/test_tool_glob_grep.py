"""Glob and Grep (spec T5, T6) with the real rg binary on real git checkouts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.base import ToolContext, ToolOutput
from activities.tools.glob import (
    TRUNCATED_NOTE,
    GlobInput,
    GlobRequest,
    compile_glob,
    glob_files,
    split_pattern,
)
from activities.tools.grep import GrepInput, GrepRequest, grep_files, split_globs


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def put(root: Path, name: str, text: str = "", mtime: int | None = None) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def glob(
    root: Path, pattern: str, path: str | None = None, newest_first: bool = False
) -> ToolOutput:
    ctx = ToolContext(workspace_root=str(root), cwd=str(root))
    req = GlobRequest(
        ctx=ctx, input=GlobInput(pattern=pattern, path=path), newest_first=newest_first
    )
    return await ActivityEnvironment().run(glob_files, req)


async def grep(root: Path, **fields: object) -> ToolOutput:
    ctx = ToolContext(workspace_root=str(root), cwd=str(root))
    req = GrepRequest(ctx=ctx, input=GrepInput.model_validate(fields))
    return await ActivityEnvironment().run(grep_files, req)


# --- Glob ------------------------------------------------------------------------------------


async def test_glob_caps_at_100_oldest_first(ws: Path) -> None:
    # Names sort opposite to age, so only an mtime sort gives this order.
    for i in range(150):
        put(ws, f"src/f{i:03}.py", mtime=1_700_000_000 - i * 10)
    out = await glob(ws, "**/*.py")
    assert not out.is_error
    lines = out.content.split("\n")
    assert lines[-1] == TRUNCATED_NOTE
    expected = [str(ws / f"src/f{i:03}.py") for i in range(149, 49, -1)]
    assert lines[:-1] == expected


async def test_glob_sorts_newest_first_when_configured(ws: Path) -> None:
    """`tools.glob_sort: mtime_desc` (T5 makes the direction configurable); ties by path."""
    for i, name in enumerate(("old.py", "mid.py", "new.py")):
        put(ws, name, mtime=1_700_000_000 + i * 10)
    put(ws, "also_new.py", mtime=1_700_000_020)
    out = await glob(ws, "*.py", newest_first=True)
    names = ["also_new.py", "new.py", "mid.py", "old.py"]
    assert out.content.split("\n") == [str(ws / n) for n in names]


async def test_glob_ties_in_mtime_are_ordered_by_path(ws: Path) -> None:
    for name in ("b.txt", "a.txt", "c.txt"):
        put(ws, name, mtime=1_600_000_000)
    out = await glob(ws, "*.txt")
    assert out.content.split("\n") == [str(ws / n) for n in ("a.txt", "b.txt", "c.txt")]


async def test_glob_braces_and_case_insensitive(ws: Path) -> None:
    put(ws, "README.md", mtime=1)
    put(ws, "app.PY", mtime=2)
    put(ws, "notes.txt", mtime=3)
    braces = await glob(ws, "*.{py,md}")
    assert braces.content.split("\n") == [str(ws / "README.md"), str(ws / "app.PY")]
    upper = await glob(ws, "readme*")
    assert upper.content == str(ws / "README.md")


async def test_glob_lists_files_only_and_skips_vcs_and_ignored_dirs(ws: Path) -> None:
    put(ws, "keep/one.txt")
    put(ws, "node_modules/dep/index.js")
    put(ws, ".gitignore", "node_modules/\n")
    put(ws, ".hg/store.txt")
    out = await glob(ws, "**/*")
    listed = set(out.content.split("\n"))
    assert listed == {str(ws / "keep/one.txt"), str(ws / ".gitignore")}


async def test_glob_path_and_absolute_pattern(ws: Path) -> None:
    put(ws, "src/a.py")
    put(ws, "src/deep/b.py")
    put(ws, "top.py")
    scoped = await glob(ws, "*.py", path="src")
    assert set(scoped.content.split("\n")) == {str(ws / "src/a.py"), str(ws / "src/deep/b.py")}
    anchored = await glob(ws, f"{ws}/src/*.py")
    assert anchored.content == str(ws / "src/a.py")


async def test_glob_no_match_and_bad_path(ws: Path) -> None:
    assert (await glob(ws, "*.rs")).content == "No files found"
    missing = await glob(ws, "*", path="nope")
    assert missing.is_error and "does not exist" in missing.content
    put(ws, "file.txt")
    not_dir = await glob(ws, "*", path="file.txt")
    assert not_dir.is_error and "not a directory" in not_dir.content


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a/b/c.py", True),  # no slash: any depth
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "lib/src/a.py", False),  # a slash anchors
        ("src/*.py", "src/deep/a.py", False),
        ("**/*.py", "a.py", True),
        ("src/**/*.ts", "src/x/y/z.TS", True),
        ("*.{ts,tsx}", "app.tsx", True),
        ("{a,b{c,d}}.txt", "bd.txt", True),
        ("[!a]x", "ax", False),
        ("/top.py", "sub/top.py", False),
    ],
)
def test_compile_glob(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).match(path)) is matches


async def test_glob_skips_nested_git_dirs_and_rejects_unbalanced_braces(ws: Path) -> None:
    put(ws, "vendor/lib/.git/config.txt")
    put(ws, "vendor/lib/code.txt")
    assert (await glob(ws, "**/*.txt")).content == str(ws / "vendor/lib/code.txt")
    bad = await glob(ws, "*.{py")
    assert bad.is_error and "unbalanced braces" in bad.content


@pytest.mark.parametrize("pattern", ["[z-a]", "[!]", "[^]"])
async def test_glob_bad_brackets_are_a_tool_error(ws: Path, pattern: str) -> None:
    # re.error is no ValueError: it failed the activity.
    bad = await glob(ws, pattern)
    assert bad.is_error and bad.content.startswith(f"Invalid glob pattern {pattern!r}"), bad


async def test_glob_and_grep_on_a_name_too_long_are_tool_errors(ws: Path) -> None:
    name = "a" * 300
    assert (await glob(ws, "*", path=name)).content == (
        f"Path {name} cannot be searched: File name too long."
    )
    assert (await grep(ws, pattern="x", path=name)).content == (
        f"Path {name} cannot be searched: File name too long."
    )


def test_split_pattern() -> None:
    assert split_pattern("src/**/*.ts") == (None, "src/**/*.ts")
    assert split_pattern("/repo/src/**/*.ts") == ("/repo/src", "/**/*.ts")
    assert split_pattern("/repo/a.py") == ("/repo", "/a.py")


# --- Grep ------------------------------------------------------------------------------------


async def test_grep_default_lists_matching_files_newest_first(ws: Path) -> None:
    put(ws, "old.py", "needle\n", mtime=1_000)
    put(ws, "new.py", "needle here\n", mtime=2_000)
    put(ws, "other.py", "hay\n")
    put(ws, ".git/needle.txt", "needle\n")
    out = await grep(ws, pattern="needle")
    assert not out.is_error
    assert out.content == f"Found 2 files\n{ws / 'new.py'}\n{ws / 'old.py'}"


async def test_grep_content_with_context(ws: Path) -> None:
    put(ws, "a.txt", "one\ntwo\nthree\nfour\nfive\n")
    out = await grep(ws, pattern="three", output_mode="content", **{"-C": 1})
    path = ws / "a.txt"
    assert out.content == f"{path}-2-two\n{path}:3:three\n{path}-4-four"
    no_numbers = await grep(ws, pattern="three", output_mode="content", **{"-n": False})
    assert no_numbers.content == f"{path}:three"


async def test_grep_head_limit_and_offset_page_through_hits(ws: Path) -> None:
    put(ws, "hits.txt", "".join(f"hit{i}\n" for i in range(1, 6)))
    out = await grep(ws, pattern="hit", output_mode="content", head_limit=2, offset=1)
    lines = out.content.split("\n")
    assert [line.rsplit(":", 1)[1] for line in lines[:2]] == ["hit2", "hit3"]
    assert lines[2:] == ["", "[Showing results with pagination = limit: 2, offset: 1]"]
    everything = await grep(ws, pattern="hit", output_mode="content", head_limit=0)
    assert len(everything.content.split("\n")) == 5


async def test_grep_count_mode(ws: Path) -> None:
    put(ws, "a.txt", "x x\nx\n")
    put(ws, "b.txt", "x\n")
    out = await grep(ws, pattern="x", output_mode="count")
    assert out.content == (
        f"{ws / 'a.txt'}:3\n{ws / 'b.txt'}:1\n\nFound 4 total occurrences across 2 files."
    )


async def test_grep_count_mode_with_a_newline_in_a_file_name(ws: Path) -> None:
    put(ws, "x\nfoo", "hit\nhit\n")
    out = await grep(ws, pattern="hit", output_mode="count")
    assert not out.is_error
    assert "Found 2 total occurrences" in out.content, out.content


async def test_grep_case_insensitive_flag(ws: Path) -> None:
    put(ws, "a.txt", "Hello World\n")
    assert (await grep(ws, pattern="hello")).content == "No files found"
    out = await grep(ws, pattern="hello", **{"-i": True})
    assert out.content == f"Found 1 file\n{ws / 'a.txt'}"


async def test_grep_type_and_glob_filters(ws: Path) -> None:
    put(ws, "a.py", "token\n")
    put(ws, "b.js", "token\n")
    put(ws, "c.ts", "token\n")
    by_type = await grep(ws, pattern="token", type="py")
    assert by_type.content == f"Found 1 file\n{ws / 'a.py'}"
    by_glob = await grep(ws, pattern="token", glob="*.{js,ts}", output_mode="count")
    assert by_glob.content.startswith(f"{ws / 'b.js'}:1\n{ws / 'c.ts'}:1\n")


async def test_grep_multiline(ws: Path) -> None:
    put(ws, "s.go", "type T struct {\n    name string\n}\n")
    single = await grep(ws, pattern=r"struct \{.*name", output_mode="content")
    assert single.content == "No matches found"
    multi = await grep(ws, pattern=r"struct \{.*name", output_mode="content", multiline=True)
    assert "1:type T struct {" in multi.content and "2:    name string" in multi.content


async def test_grep_only_matching_and_leading_dash_pattern(ws: Path) -> None:
    put(ws, "a.txt", "value --flag=1 end\n")
    out = await grep(ws, pattern="--flag=\\d", output_mode="content", **{"-o": True})
    assert out.content == f"{ws / 'a.txt'}:1:--flag=1"


async def test_grep_bad_regex_is_an_error(ws: Path) -> None:
    put(ws, "a.txt", "x\n")
    out = await grep(ws, pattern="(unclosed")
    assert out.is_error
    assert "regex parse error" in out.content


async def test_grep_unknown_type_and_missing_path_are_errors(ws: Path) -> None:
    put(ws, "a.txt", "x\n")
    assert (await grep(ws, pattern="x", type="nosuchlang")).is_error
    missing = await grep(ws, pattern="x", path="nope")
    assert missing.is_error and "does not exist" in missing.content


def test_split_globs() -> None:
    assert split_globs("*.js,*.ts *.{md,txt}") == ["*.js", "*.ts", "*.{md,txt}"]
    assert split_globs(None) == []


async def test_grep_without_a_limit_reads_no_more_than_a_result_shows(ws: Path) -> None:
    """`head_limit: 0` in content mode on a large tree: rg's output is read only as far as a
    tool result can show, and the result says there is more (every line was held in memory,
    for a result cut to 100,000 characters anyway)."""
    (ws / "big.txt").write_text(("hit " + "x" * 95 + "\n") * 50_000)
    out = await grep(ws, pattern="hit", output_mode="content", head_limit=0)
    assert not out.is_error
    shown, note = out.content.split("\n\n[Showing ")
    assert 98_000 <= len(shown) <= 100_000 and len(out.content) <= 100_000, len(out.content)
    n = len(shown.splitlines())
    assert note == f"{n} lines, as many as one result holds; continue with offset: {n}]"
    assert "narrow" not in out.content  # not cut by the result's own cap
    later = await grep(ws, pattern="hit", output_mode="content", head_limit=0, offset=49_990)
    assert len(later.content.split("\n\n[Showing")[0].splitlines()) == 10
