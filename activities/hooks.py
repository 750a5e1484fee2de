"""The `hooks.run_command` activity: one sub-agent hook command (spec R100, agents/hooks.py).

It runs on the workspace's host, in the agent's working directory, as the worker's user and
outside the tools' sandbox (a hook is the person's own command, as in Claude Code), with the
event's JSON on stdin and `CLAUDE_PROJECT_DIR` set. Its environment is the one Bash commands
get: the worker's secrets are left out. A timeout kills its whole process group and is a
result, not an error: only a lost worker makes Temporal run a hook again.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel
from temporalio import activity

from activities.heartbeats import heartbeating
from activities.tools.bash_process import child_env
from activities.tools.process_groups import kill_even_if_cancelled
from agents.hooks import OUTPUT_CAP, HookRun


class HookRunInput(BaseModel):
    command: str
    cwd: str
    stdin: dict[str, Any]
    """The event's JSON, as the hook reads it on stdin."""
    timeout_s: float
    project_dir: str
    """`CLAUDE_PROJECT_DIR`: the workspace's root."""


def _read_capped(path: Path) -> str:
    with path.open("rb") as f:
        raw = f.read(OUTPUT_CAP + 1)
    text = raw[:OUTPUT_CAP].decode("utf-8", errors="replace")
    return text + "\n[output cut]" if len(raw) > OUTPUT_CAP else text


def _open(tmp: str, stdin: str) -> tuple[BinaryIO, BinaryIO, BinaryIO]:
    """The command's stdin (holding `stdin`), stdout and stderr files, in `tmp`."""
    Path(tmp, "stdin").write_text(stdin)
    return (
        Path(tmp, "stdin").open("rb"),
        Path(tmp, "stdout").open("wb"),
        Path(tmp, "stderr").open("wb"),
    )


@activity.defn(name="hooks.run_command")
async def run_hook_command(inp: HookRunInput) -> HookRun:
    """Run one hook command to its end or its timeout; how it went."""
    if not await asyncio.to_thread(Path(inp.cwd).is_dir):
        return HookRun(error=f"its working directory {inp.cwd} does not exist")
    env = {**child_env(os.environ), "CLAUDE_PROJECT_DIR": inp.project_dir}
    with tempfile.TemporaryDirectory(prefix="outlast-hook-", ignore_cleanup_errors=True) as tmp:
        files = await asyncio.to_thread(_open, tmp, json.dumps(inp.stdin))
        with files[0] as i, files[1] as o, files[2] as e:
            try:
                proc = await asyncio.create_subprocess_exec(
                    "/bin/sh",
                    "-c",
                    inp.command,
                    cwd=inp.cwd,
                    env=env,
                    stdin=i,
                    stdout=o,
                    stderr=e,
                    start_new_session=True,
                )
            except OSError as exc:
                return HookRun(error=f"could not start: {exc}")
        timed_out = False
        try:
            async with asyncio.timeout(inp.timeout_s), heartbeating():
                await proc.wait()
        except TimeoutError:
            timed_out = True
        finally:
            # Whatever it left running in the background goes with it, a cancel included.
            await kill_even_if_cancelled(proc.pid)
            await proc.wait()
        stdout, stderr = await asyncio.to_thread(
            lambda: (_read_capped(Path(tmp, "stdout")), _read_capped(Path(tmp, "stderr")))
        )
        return HookRun(
            exit_code=None if timed_out else proc.returncode,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
        )
