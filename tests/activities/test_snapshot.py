"""A verifier's workspace snapshot whose activity is cancelled mid-copy stops copying: the
copy runs in a thread that a cancel does not stop by itself, and a large checkout would go on
filling the disk for nothing."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import shutil
import threading
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.snapshot import SnapshotRequest, remove_snapshot_at, snapshot, snapshot_path
from tests.conftest import make_git_repo


async def test_a_cancelled_snapshot_stops_copying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    files = {f"src/{d}/f{i}.txt": "x\n" for d in range(4) for i in range(50)}
    root = make_git_repo(tmp_path / "repo", files)
    copy2, calls = shutil.copy2, itertools.count(1)
    at_the_tenth, go_on = threading.Event(), threading.Event()

    def held_at_the_tenth(src: str, dst: str) -> object:
        if next(calls) == 10:  # the file in flight when the cancel comes
            at_the_tenth.set()
            go_on.wait(60)
        return copy2(src, dst)

    monkeypatch.setattr(shutil, "copy2", held_at_the_tenth)
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id="verify-cancelled")
    name = "verify-cancelled/verify-1"
    copying = asyncio.create_task(env.run(snapshot, SnapshotRequest(root=str(root), name=name)))
    dest = snapshot_path(name)

    def copied() -> int:
        return sum(1 for _ in dest.rglob("f*.txt"))

    deadline = time.monotonic() + 60
    while not at_the_tenth.is_set() and not copying.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert at_the_tenth.is_set(), copying
    env.cancel()
    with pytest.raises(asyncio.CancelledError):
        await copying
    go_on.set()
    while copied() < 10 and time.monotonic() < deadline:  # the file in flight lands
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)  # where it went on, the 190 other files
    try:
        assert copied() == 10
    finally:
        remove_snapshot_at(dest)
