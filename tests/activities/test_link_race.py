"""Reliability row 13, the race: a link swapped into a path between the boundary check and the
open. Another process flips the path between a real entry and a link to outside as fast as it
can (truly in parallel: a thread would mostly wait for the GIL), while Read, Write and Edit loop
on it. The outside canary must never be read, changed or joined by a new file."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.base import ToolContext
from activities.tools.edit import EditInput, EditRequest, edit_file
from activities.tools.read import ReadInput, ReadRequest, read_file
from activities.tools.write import WriteInput, WriteRequest, write_file
from tests.activities.test_tool_bash import snapshot

pytestmark = pytest.mark.reliability

ROUNDS = 500
CANARY = "OUTSIDE-CANARY\n"

# Swaps `target` with a link to `outside` and back, atomically (renameat2 RENAME_EXCHANGE),
# so the path always exists: either the real entry or the link.
FLIPPER = r"""
import ctypes, os, sys
target, outside = sys.argv[1:3]
link = target + ".link"
os.symlink(outside, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
while True:
    if libc.renameat2(AT_FDCWD, target.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE):
        raise OSError(ctypes.get_errno(), "renameat2")
"""


def flipping(target: Path, outside: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", FLIPPER, str(target), str(outside)])
    deadline = time.monotonic() + 5
    while not (target.is_symlink() or time.monotonic() > deadline):
        time.sleep(0.001)  # wait until it is really flipping
    assert proc.poll() is None, "the flipper died"
    return proc


def stop(proc: subprocess.Popen) -> None:
    assert proc.poll() is None, "the flipper died during the loop"
    proc.kill()
    proc.wait()


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    (outside / "canary.txt").write_text(CANARY)
    return ws, outside


async def run(activity, request):
    return await ActivityEnvironment().run(activity, request)


def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace_root=str(ws), cwd=str(ws))


def outcome(content: str, is_error: bool) -> str:
    assert "OUTSIDE-CANARY" not in content, "the outside file was read"
    if not is_error:
        return "ok"
    return "swapped" if "symbolic link appeared" in content else "refused"


async def test_a_file_flipping_to_a_link_is_never_read_or_written_through(
    places: tuple[Path, Path],
) -> None:
    ws, outside = places
    (ws / "x").write_text("inside\n")
    before = snapshot(outside)
    seen: Counter[str] = Counter()
    proc = flipping(ws / "x", outside / "canary.txt")
    try:
        for i in range(ROUNDS):
            read = await run(read_file, ReadRequest(ctx=ctx(ws), input=ReadInput(file_path="x")))
            seen["read " + outcome(read.content, read.is_error)] += 1
            write = await run(
                write_file,
                WriteRequest(ctx=ctx(ws), input=WriteInput(file_path="x", content=f"w{i}\n")),
            )
            seen["write " + outcome(write.content, write.is_error)] += 1
            edit = await run(
                edit_file,
                EditRequest(
                    ctx=ctx(ws),
                    input=EditInput(file_path="x", old_string="inside", new_string="edited"),
                ),
            )
            seen["edit " + outcome(edit.content, edit.is_error)] += 1
    finally:
        stop(proc)
    assert snapshot(outside) == before, seen
    # Both states were met: some calls went through and some were turned away.
    assert seen["read ok"] and (seen["read refused"] + seen["read swapped"]), seen


async def test_a_directory_flipping_to_a_link_gets_no_file_outside(
    places: tuple[Path, Path],
) -> None:
    ws, outside = places
    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("inside\n")
    before = snapshot(outside)
    seen: Counter[str] = Counter()
    proc = flipping(ws / "sub", outside)
    try:
        for i in range(ROUNDS):
            write = await run(
                write_file,
                WriteRequest(
                    ctx=ctx(ws), input=WriteInput(file_path=f"sub/new{i}.txt", content="new\n")
                ),
            )
            seen["write " + outcome(write.content, write.is_error)] += 1
            read = await run(
                read_file, ReadRequest(ctx=ctx(ws), input=ReadInput(file_path="sub/f.txt"))
            )
            seen["read " + outcome(read.content, read.is_error)] += 1
    finally:
        stop(proc)
    assert snapshot(outside) == before, seen
    assert seen["write ok"], seen
