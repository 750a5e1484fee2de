"""Bash with `run_in_background`: a command that runs as a task of its own (T4, R27).

The agent's workflow starts a `ShellTaskWorkflow` for it, which runs `tool.bash_background`
on the workspace's host and tells the agent when the command has ended. Its output goes to a
file the agent can Read meanwhile (`tool.bash_launch` makes it, so the launch result can name
it). Like a foreground command, it runs in the agent's sandbox and in a process group of its
own, recorded on the host: a retry after a lost worker kills what the first attempt left, and
a stop kills the whole group at once (`tool.bash_kill`, with the shell workflow's ids).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.heartbeats import run_blocking
from activities.store import state_dir
from activities.tools import bash_runs
from activities.tools.base import ToolContext
from activities.tools.bash import (
    MAX_OUTPUT_CHARS,
    NotRun,
    clear_earlier_attempt,
    run_recorded,
    start_dir,
)
from activities.tools.bash_process import OutputCapped
from agents.config import BACKGROUND_OUTPUT_CAP

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ShellLaunchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    owner: str
    """The workflow id of the agent that launches it (its output files share a directory)."""
    shell_id: str


def size_text(n: int) -> str:
    """`5GB`, `64MB`, `1536KB` or `1000 bytes`: as Claude Code names its cap."""
    for unit, size in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n} bytes"


def capped_text(max_bytes: int) -> str:
    return f"its output file exceeded {size_text(max_bytes)}"


class ShellRunRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    command: str
    ctx: ToolContext
    output_file: str
    timeout_ms: int | None = None
    """The command's own timeout, if the model gave one; none by default."""
    max_output_bytes: int = BACKGROUND_OUTPUT_CAP
    """Past this size of its output file the command is killed."""


class ShellOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    exit_code: int | None = None
    """As bash reports it (128 + n for a signal); None when it did not run or timed out."""
    timed_out: bool = False
    error: str | None = None
    """Why it did not run (its sandbox refused it, its agent was being killed)."""
    note: str = ""
    """Said of a retried run: the command had already started once."""
    output_capped: bool = False
    """It was killed: its output file had grown past `max_output_bytes`."""


class OutputRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    output_file: str
    max_chars: int = MAX_OUTPUT_CHARS


def output_dir(owner: str) -> Path:
    """`<state>/tasks/<owner>/`: a readable name, and a hash so two ids never share one."""
    digest = hashlib.sha256(owner.encode()).hexdigest()[:12]
    readable = _UNSAFE.sub("-", owner).strip("-")[-60:] or "agent"
    return state_dir() / "tasks" / f"{readable}-{digest}"


OUTPUT_TTL_S = 7 * 24 * 3600.0
"""How long an output file is kept after its last write: its agent and anyone looking into
what it did have had it long enough."""


def _prune(tasks: Path) -> None:
    cutoff = time.time() - OUTPUT_TTL_S
    for path in tasks.glob("*/*.output"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            continue  # gone meanwhile


def _launch(req: ShellLaunchRequest) -> str:
    directory = output_dir(req.owner)
    if directory.is_symlink():
        # Its agent reads whatever this names: never somewhere a link made it point.
        directory.unlink()
    directory.mkdir(parents=True, exist_ok=True)
    _prune(directory.parent)
    path = directory / f"{_UNSAFE.sub('-', req.shell_id)}.output"
    path.touch()  # readable at once, before the command has written anything
    return str(path)


@activity.defn(name="tool.bash_launch")
async def launch_shell(req: ShellLaunchRequest) -> str:
    """Make the background command's output file on this host; its path."""
    return await run_blocking(_launch, req)


def _append(output: Path, text: str) -> None:
    # Best effort: a full disk (what a runaway writer leads to) must not fail the activity,
    # whose retry would run the command again.
    with contextlib.suppress(OSError), output.open("a", encoding="utf-8") as f:
        f.write(text)


def _fresh_output(output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.is_symlink():
        # Written by the worker, outside any sandbox: never through a link someone put there.
        output.unlink()


@activity.defn(name="tool.bash_background")
async def run_background(req: ShellRunRequest) -> ShellOutcome:
    """Run the command until it exits, times out or is cancelled; its output goes to
    `req.output_file` (rewritten from the start by a retry, whose note says so)."""
    async with bash_runs.attempt():
        return await _run_background(req)


async def _run_background(req: ShellRunRequest) -> ShellOutcome:
    note = await clear_earlier_attempt()
    if lost := bash_runs.crash_reruns_spent():
        return ShellOutcome(error=lost)  # the re-run note would say it ran again
    cwd, _ = start_dir(req.ctx)
    timeout_s = req.timeout_ms / 1000 if req.timeout_ms else None
    output = Path(req.output_file)
    await run_blocking(_fresh_output, output)
    # A scratch directory that will not go (a file the command left that cannot be removed)
    # must not fail the activity after the command ran: the retry would run it again.
    with tempfile.TemporaryDirectory(prefix="outlast-bash-", ignore_cleanup_errors=True) as scratch:
        try:
            status = await run_recorded(
                req.ctx, req.command, scratch, cwd, output, timeout_s, req.max_output_bytes
            )
        except OutputCapped:
            # Said at the end of the file too, where a Read of its last lines looks.
            line = f"\nBackground command killed: {capped_text(req.max_output_bytes)}\n"
            await run_blocking(_append, output, line)
            return ShellOutcome(output_capped=True, note=note)
    if isinstance(status, NotRun):
        return ShellOutcome(error=status.reason, note=note)
    if status is None:
        return ShellOutcome(timed_out=True, note=note)
    return ShellOutcome(exit_code=128 - status if status < 0 else status, note=note)


def tail_of(path: Path, max_chars: int) -> str:
    """The last `max_chars` characters of a text file, with how much came before."""
    with path.open("rb") as f:
        size = f.seek(0, 2)
        start = max(0, size - max_chars * 4)  # enough bytes for max_chars of any UTF-8
        f.seek(start)
        text = f.read().decode("utf-8", errors="replace")
    if start == 0 and len(text) <= max_chars:
        return text.rstrip("\n")
    cut = text[-max_chars:]
    return f"[... earlier output cut: the file is {size} bytes ...]\n{cut.rstrip(chr(10))}"


@activity.defn(name="tool.task_output")
async def read_task_output(req: OutputRequest) -> str:
    """The end of a background command's output file (the latest output matters most)."""
    try:
        return await run_blocking(tail_of, Path(req.output_file), req.max_chars)
    except FileNotFoundError:
        return "(its output file is gone)"


BACKGROUND_ACTIVITIES = [launch_shell, run_background, read_task_output]
