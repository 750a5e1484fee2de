"""A Bash command's process: started in a session of its own with its output going to a
file, waited for (with a timeout and an optional cap on the output file's size), and killed
with everything it started, however the wait ends.

A file rather than a pipe: a backgrounded child holding the pipe open would otherwise keep the
read waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from activities.heartbeats import heartbeating
from activities.tools.process_groups import kill_even_if_cancelled, spawn_in_own_session

_SECRET_PREFIXES = ("ANTHROPIC_",)
_SECRET_SUFFIXES = (
    "_API_KEY",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_SECRET_ACCESS_KEY",
    "_PASSWORD",
)


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """The worker's environment minus its secrets, set up for a shell nobody can type into."""
    out = {
        name: value
        for name, value in env.items()
        if not name.upper().startswith(_SECRET_PREFIXES)
        and not name.upper().endswith(_SECRET_SUFFIXES)
    }
    out["GIT_TERMINAL_PROMPT"] = "0"  # a credential prompt would hang until the timeout
    out["PAGER"] = "cat"  # likewise `less` waiting for a keypress
    out["GIT_EDITOR"] = "true"  # and `git commit` without -m opening an editor
    return out


SIZE_CHECK_S = 1.0
"""How often a command with an output cap has its output file's size looked at (a stat)."""


class OutputCapped(Exception):
    """The command was killed: its output file had grown past its cap."""


async def _outgrows(output: Path, max_bytes: int) -> None:
    """Returns once `output` is larger than `max_bytes`."""
    while True:
        await asyncio.sleep(SIZE_CHECK_S)
        # A file that cannot be looked at now (gone, a stale mount) is looked at again.
        with contextlib.suppress(OSError):
            # One stat of a local file a second: cheaper inline than a thread hop.
            if output.stat().st_size > max_bytes:  # noqa: ASYNC240
                return


async def _exit_or_cap(proc: asyncio.subprocess.Process, output: Path, max_bytes: int) -> None:
    exited = asyncio.ensure_future(proc.wait())
    capped = asyncio.ensure_future(_outgrows(output, max_bytes))
    try:
        await asyncio.wait({exited, capped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        exited.cancel()
        capped.cancel()
    if not exited.done() or exited.cancelled():
        raise OutputCapped


async def run_command(
    argv: list[str],
    cwd: Path,
    output: Path,
    timeout_s: float | None,
    on_start: Callable[[int], None] = lambda pgid: None,
    max_output_bytes: int | None = None,
) -> int | None:
    """Run `argv` in its own process group; its exit status, or None if it timed out
    (`timeout_s`; None: never). With `max_output_bytes`, `OutputCapped` once `output` grows
    past it.

    Whatever the outcome, cancellation included, no process of the group survives (after a
    second cancel, the kill goes on by itself; a worker waits for it before it exits).
    `on_start` gets the group's id as soon as it exists.
    """
    with output.open("wb") as out:
        proc = await spawn_in_own_session(argv, cwd, out, child_env(os.environ))
    try:
        on_start(proc.pid)
        async with asyncio.timeout(timeout_s), heartbeating():
            if max_output_bytes is None:
                await proc.wait()
            else:
                await _exit_or_cap(proc, output, max_output_bytes)
    except TimeoutError:
        return None
    finally:
        # Runs on cancellation too (the CancelledError propagates after it), and after a
        # normal exit to reap `cmd &` leftovers that would otherwise outlive the call. A
        # timeout or cancel in the sandbox's first milliseconds waits for its set-up, or the
        # command would go on running outside the group.
        await kill_even_if_cancelled(proc.pid)
        await proc.wait()
    return proc.returncode
