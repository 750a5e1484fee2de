"""The workspace boundary: no tool reads or writes outside it, symlinks included."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.base import ToolContext
from activities.tools.edit import EditInput, EditRequest, edit_file
from activities.tools.glob import GlobInput, GlobRequest, glob_files
from activities.tools.grep import GrepInput, GrepRequest, grep_files
from activities.tools.read import ReadInput, ReadRequest, read_file
from activities.tools.write import WriteInput, WriteRequest, write_file
from activities.workspace import WorkspaceEscape, atomic_write, resolve_in_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "inside.txt").write_text("inside\n")
    (root / "etc_link").symlink_to("/etc")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, reachable from it only through a symlink."""
    path = (tmp_path / "outside").resolve()
    path.mkdir()
    return path


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def ctx(root: Path, cwd: Path | None = None) -> ToolContext:
    return ToolContext(workspace_root=str(root), cwd=str(cwd or root))


def test_relative_and_absolute_paths_inside_resolve(ws: Path) -> None:
    assert resolve_in_workspace(ctx(ws, ws / "sub"), "../inside.txt") == ws / "inside.txt"
    assert resolve_in_workspace(ctx(ws), str(ws / "new" / "file")) == ws / "new" / "file"
    assert resolve_in_workspace(ctx(ws), "~/x") == ws / "~" / "x"  # `~` is not expanded


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "../etc_link/passwd", "../.."])
def test_paths_outside_raise_with_a_clear_message(ws: Path, path: str) -> None:
    with pytest.raises(WorkspaceEscape) as caught:
        resolve_in_workspace(ctx(ws, ws / "sub"), path)
    message = str(caught.value)
    assert f"is outside the workspace {ws}; tools may only touch files inside it." in message
    assert message.startswith("Path /")


def test_symlink_to_a_file_inside_is_allowed(ws: Path) -> None:
    (ws / "alias.txt").symlink_to(ws / "inside.txt")
    assert resolve_in_workspace(ctx(ws), "alias.txt") == ws / "inside.txt"


def test_dangling_symlink_pointing_outside_is_caught(ws: Path, outside: Path) -> None:
    (ws / "trap.txt").symlink_to(outside / "not-yet.txt")
    with pytest.raises(WorkspaceEscape):
        resolve_in_workspace(ctx(ws), "trap.txt")


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "../etc_link/passwd"])
async def test_read_outside_is_an_error(ws: Path, path: str) -> None:
    req = ReadRequest(ctx=ctx(ws, ws / "sub"), input=ReadInput(file_path=path))
    out = await ActivityEnvironment().run(read_file, req)
    assert out.is_error
    assert "outside the workspace" in out.content
    assert "root:" not in out.content
    assert out.stamps == {}


@pytest.fixture
def etc_target() -> Iterator[str]:
    """A name under /etc that a broken guard would create; removed whatever happens."""
    name = f"outlast-guard-{uuid.uuid4().hex}"
    yield name
    Path("/etc", name).unlink(missing_ok=True)


async def test_write_through_symlink_to_etc_touches_nothing(ws: Path, etc_target: str) -> None:
    req = WriteRequest(
        ctx=ctx(ws), input=WriteInput(file_path=f"etc_link/{etc_target}", content="x")
    )
    out = await ActivityEnvironment().run(write_file, req)
    assert out.is_error and "outside the workspace" in out.content
    assert etc_target not in names(Path("/etc"))


async def test_write_and_edit_through_symlinked_dir_leave_outside_unchanged(
    ws: Path, outside: Path
) -> None:
    (outside / "victim.txt").write_text("keep\n")
    (ws / "out_link").symlink_to(outside)
    write = WriteRequest(
        ctx=ctx(ws), input=WriteInput(file_path="out_link/new.txt", content="pwned")
    )
    out = await ActivityEnvironment().run(write_file, write)
    assert out.is_error
    edit = EditRequest(
        ctx=ctx(ws),
        input=EditInput(file_path="out_link/victim.txt", old_string="keep", new_string="lost"),
    )
    out = await ActivityEnvironment().run(edit_file, edit)
    assert out.is_error and "outside the workspace" in out.content
    assert names(outside) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "keep\n"


async def test_write_with_dotdot_is_an_error(ws: Path, outside: Path) -> None:
    req = WriteRequest(ctx=ctx(ws), input=WriteInput(file_path="../outside/x.txt", content="x"))
    out = await ActivityEnvironment().run(write_file, req)
    assert out.is_error
    assert names(outside) == []


async def test_glob_and_grep_paths_outside_are_errors(ws: Path) -> None:
    glob = GlobRequest(ctx=ctx(ws), input=GlobInput(pattern="*", path="/etc"))
    assert (await ActivityEnvironment().run(glob_files, glob)).is_error
    absolute = GlobRequest(ctx=ctx(ws), input=GlobInput(pattern="/etc/*.conf"))
    assert (await ActivityEnvironment().run(glob_files, absolute)).is_error
    grep = GrepRequest(ctx=ctx(ws), input=GrepInput(pattern="root", path="../.."))
    out = await ActivityEnvironment().run(grep_files, grep)
    assert out.is_error and "outside the workspace" in out.content


async def test_grep_does_not_follow_symlinks_out_of_the_workspace(ws: Path) -> None:
    req = GrepRequest(ctx=ctx(ws), input=GrepInput(pattern="root:", output_mode="content"))
    out = await ActivityEnvironment().run(grep_files, req)
    assert not out.is_error
    assert out.content == "No matches found"


def test_atomic_write_replaces_in_place_and_keeps_mode(ws: Path) -> None:
    path = ws / "script.sh"
    path.write_text("old")
    path.chmod(0o750)
    inode_before = path.stat().st_ino
    stamp = atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert path.stat().st_mode & 0o777 == 0o750
    assert path.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert stamp.size == 3 and stamp.mtime_ns == path.stat().st_mtime_ns
    assert not [p for p in os.listdir(ws) if p.endswith(".tmp")]


async def test_a_scratchpad_outside_the_workspace_is_usable_and_nothing_else(
    ws: Path, outside: Path
) -> None:
    """R63: workers share the coordinator's scratchpad; it widens the boundary by exactly
    that directory."""
    scratch = outside / "scratchpad"
    scratch.mkdir()
    shared = ToolContext(workspace_root=str(ws), cwd=str(ws), extra_roots=(str(scratch),))
    write = WriteRequest(
        input=WriteInput(file_path=str(scratch / "findings.md"), content="found it\n"), ctx=shared
    )
    assert not (await ActivityEnvironment().run(write_file, write)).is_error
    read = ReadRequest(input=ReadInput(file_path=str(scratch / "findings.md")), ctx=shared)
    assert "found it" in (await ActivityEnvironment().run(read_file, read)).content
    with pytest.raises(WorkspaceEscape):
        resolve_in_workspace(shared, str(outside / "elsewhere.txt"))
    with pytest.raises(WorkspaceEscape):
        resolve_in_workspace(ctx(ws), str(scratch / "findings.md"))
