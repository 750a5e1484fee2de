"""Starting a command in a process group of its own, and killing that group: everything
it started, and nothing else.

A Bash command runs in a session of its own; its process group id is its leader's pid, and
the leader's start time tells that pid from a later process that reuses it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, BinaryIO

KILL_GRACE_S = 0.5
SET_UP_S = 0.2
"""How long a command's sandbox gets to set itself up before a kill is sent to it: bubblewrap
signalled in its first few milliseconds dies and leaves the sandboxed command running, out of
its process group (measured: 1-5 ms after the start, not from 8 ms on)."""


def leader_start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks); None if no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def leader_age_s(pid: int) -> float | None:
    """Seconds since the process started; None if no such process."""
    start = leader_start_time(pid)
    try:
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return None if start is None else uptime - int(start) / os.sysconf("SC_CLK_TCK")


def signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return signal_group(pgid, 0)
    # killpg(pgid, 0) also succeeds for zombies, and orphans reparented to an init that is
    # slow to reap (common in containers) would then cost every kill the full grace period.
    for entry in proc.iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


async def kill_group(pgid: int) -> None:
    """SIGTERM the process group, then SIGKILL whatever survives the grace period."""
    if not signal_group(pgid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_GRACE_S
    while loop.time() < deadline:
        await asyncio.sleep(0.02)
        if not group_alive(pgid):
            return
    signal_group(pgid, signal.SIGKILL)


async def kill_when_set_up(pgid: int) -> None:
    """`kill_group`, once the group's leader is SET_UP_S old."""
    age = leader_age_s(pgid)
    if age is not None and age < SET_UP_S:
        await asyncio.sleep(SET_UP_S - age)
    await kill_group(pgid)


_KILLS: set[asyncio.Task[None]] = set()
"""Kills under way as tasks of their own (asyncio keeps only weak references to tasks);
`settle_kills` waits for them before a worker's event loop closes."""


async def _carried_through(kill: Coroutine[Any, Any, None]) -> None:
    """Run `kill` as a task of its own, which a cancel of the caller does not stop: a kill
    that waits for a sandbox's set-up must not be stopped before it sends anything."""
    task = asyncio.ensure_future(kill)
    _KILLS.add(task)
    task.add_done_callback(_KILLS.discard)
    await asyncio.shield(task)


async def kill_even_if_cancelled(pgid: int) -> None:
    """`kill_when_set_up`, carried through even if the caller is cancelled meanwhile."""
    await _carried_through(kill_when_set_up(pgid))


async def kill_once_started(spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """Kill what `spawn` is starting, once it has started and set up; carried through even
    if the caller is cancelled meanwhile."""

    async def kill() -> None:
        try:
            proc = await spawn
        except Exception:  # noqa: BLE001 - it started nothing, so there is nothing to kill
            return
        await kill_when_set_up(proc.pid)
        await proc.wait()

    await _carried_through(kill())


async def spawn_in_own_session(
    argv: list[str], cwd: Path, out: BinaryIO, env: Mapping[str, str]
) -> asyncio.subprocess.Process:
    """`argv` started in a session (and process group) of its own, its output to `out`. A
    cancel while it starts does not stop the start: asyncio would SIGKILL the process at
    once, in the sandbox's first milliseconds, and leave the command running outside its
    group; it is killed once set up instead."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        await kill_once_started(spawn)
        raise


async def settle_kills(within: float) -> None:
    """Wait, at most `within` seconds, for the kills still under way: a loop that closes
    first cancels them and leaves their commands running."""
    if _KILLS:
        await asyncio.wait(set(_KILLS), timeout=within)
