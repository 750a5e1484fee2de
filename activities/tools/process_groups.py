"""Killing a command's process group: everything it started, and nothing else.

A Bash command runs in a session of its own; its process group id is its leader's pid, and
the leader's start time tells that pid from a later process that reuses it.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

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
"""Kills under way for callers that were cancelled meanwhile (asyncio keeps weak references)."""


def kill_in_background(pgid: int) -> asyncio.Task[None]:
    """`kill_when_set_up` as a task of its own, which no cancel of the caller stops."""
    kill = asyncio.ensure_future(kill_when_set_up(pgid))
    _KILLS.add(kill)
    kill.add_done_callback(_KILLS.discard)
    return kill


async def kill_even_if_cancelled(pgid: int) -> None:
    """`kill_when_set_up`, carried through even if the caller is cancelled again while it
    waits: a cleanup that waits for the sandbox's set-up must not be stopped before it
    sends anything."""
    await asyncio.shield(kill_in_background(pgid))
