"""Bash: run a shell command in the workspace; nothing it starts outlives the call.

The command runs in its own process group (session), so a timeout, a cancellation or a normal
exit can kill everything it started, including `cmd &` children (bash_process.py), inside the
agent's sandbox (bash_sandbox.py); each run is recorded on the host for the retry and the kill
that may follow (bash_runs.py). This module holds the tool: its input, the run, its output.
The shell's working directory survives between calls through a file the wrapper writes on exit;
the workflow keeps it in its state and passes it back as `ctx.cwd`.
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator
from temporalio import activity

from activities.heartbeats import run_blocking
from activities.sandbox_tmp import drop_scratch_mountpoint
from activities.tools import bash_runs
from activities.tools.base import (
    KillRequest,
    ToolContext,
    ToolOutput,
    ToolRequest,
    encodable,
    no_nul,
    stored,
)
from activities.tools.bash_process import OutputCapped, run_command
from activities.tools.bash_sandbox import sandbox_argv
from activities.tools.process_groups import kill_group, kill_when_set_up
from activities.workspace import WorkspaceEscape, resolve_in_workspace, workspace_root

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
# Enough bytes to hold MAX_OUTPUT_CHARS of any UTF-8 text and to measure what is cut.
_OUTPUT_READ_BYTES = 8 * 1024 * 1024
FOREGROUND_OUTPUT_CAP = 64 * 1024 * 1024
"""A command whose output passes this is killed: the model reads only its first
MAX_OUTPUT_CHARS, and a program printing without end would fill the host's disk (or its
memory, where /tmp is tmpfs) before its timeout."""
DESCRIPTION = """\
Runs a bash command and returns its output. The working directory persists between calls; \
shell state (variables, functions, aliases) does not.

Before running a command:
- If it creates files or directories, check with `ls` first that the parent directory exists.
- Quote paths that contain spaces with double quotes, e.g. cd "path with spaces/file.txt".

Usage:
- command is required. timeout is optional, in milliseconds: 120000 (2 minutes) by default, \
at most 600000 (10 minutes).
- Give a short description (5-10 words) of what the command does.
- Output longer than 30000 characters is truncated.
- Do not use Bash for what the dedicated tools do better: Glob to find files (not find or ls), \
Grep to search contents (not grep or rg), Read to view files (not cat, head, tail), Edit to \
change files (not sed or awk), Write to create files (not echo or heredocs).
- Independent commands: make several Bash calls in one response. Dependent commands: chain \
them with && in one call. Do not separate commands with newlines.
- Keep the working directory stable: prefer absolute paths over cd.
- Git: never force-push, never skip hooks (--no-verify), never change git config; create new \
commits rather than amending, and only commit when the user asks.
- Commands never get interactive input; use non-interactive flags (e.g. git commit -m).
- Where run_in_background is offered, use it for commands that take long and whose output you \
do not need before your next step (builds, test suites, servers). It runs until it exits (or \
its own timeout, if you give one) or TaskStop stops it; a notification tells you when it has \
ended. Do not poll it with sleep: read its output file with Read when you need it. Your turn's \
end waits for your background commands to end: stop one that never does (a server) with \
TaskStop when you are done with it.\
"""


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    command: str = Field(description="The command to execute")

    @field_validator("command")
    @classmethod
    def _no_nul(cls, value: str) -> str:
        return no_nul(value)

    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
    )
    description: str | None = Field(
        default=None,
        description="Clear, concise description of what this command does in 5-10 words, in "
        "active voice.",
    )
    run_in_background: bool = Field(
        default=False,
        description="Set to true to run this command in the background: the call returns at "
        "once with the task's ID and output file, and you are notified when it ends.",
    )
    dangerouslyDisableSandbox: bool = Field(  # Claude Code's spelling, not snake_case
        default=False,
        description="Claude Code's switch to run a command without its sandbox. Accepted for "
        "compatibility but has no effect here: commands always run in the sandbox the worker "
        "gives this agent.",
    )


class BashRequest(ToolRequest):
    input: BashInput


NOT_RUN_KILLED = "Command not run: this agent is being killed"
BACKGROUND_REFUSED = (
    "run_in_background is not available to this agent (background tasks are disabled, or it "
    "is a teammate): run the command without it."
)


def wrap_command(command: str, cwd_file: str) -> str:
    """The script bash runs: the command, with `pwd -P` written to `cwd_file` on any exit."""
    on_exit = "pwd -P >| " + shlex.quote(cwd_file)
    # An EXIT trap also runs after `exit N` and after a syntax error later in the script.
    return f"trap {shlex.quote(on_exit)} EXIT\n{command}"


def truncate_output(raw: bytes, more: bool) -> str:
    """At most MAX_OUTPUT_CHARS of the output, with how much was cut.

    Args:
        raw: The start of the output file.
        more: The file holds more bytes than `raw`.
    """
    text = raw.decode("utf-8", errors="replace").rstrip("\n")
    if len(text) <= MAX_OUTPUT_CHARS and not more:
        return text
    cut = len(text) - MAX_OUTPUT_CHARS
    amount = f"more than {cut}" if more else str(cut)
    return f"{text[:MAX_OUTPUT_CHARS]}\n\n... [output truncated: {amount} characters cut] ..."


def read_head(path: Path) -> tuple[bytes, bool]:
    """The first _OUTPUT_READ_BYTES of a file, and whether there is more."""
    with path.open("rb") as f:
        return f.read(_OUTPUT_READ_BYTES), bool(f.read(1))


def start_dir(ctx: ToolContext) -> tuple[Path, str]:
    """Where the command starts, and a note if that had to be the workspace root instead."""
    try:
        cwd = resolve_in_workspace(ctx, ctx.cwd)
    except WorkspaceEscape:
        cwd = None
    if cwd is not None and cwd.is_dir():
        return cwd, ""
    return workspace_root(ctx), f"Shell cwd was reset to {ctx.workspace_root}"


def next_cwd(cwd_file: Path, ctx: ToolContext, started_in: Path) -> tuple[str | None, str]:
    """The shell's cwd after the command if it moved (None if not), and a note if it was reset."""
    try:
        # Bytes first: a directory name that is not UTF-8 must not fail a command that ran.
        reported = cwd_file.read_bytes().decode(errors="surrogateescape").strip()
    except FileNotFoundError:  # killed before the EXIT trap ran
        return None, ""
    if not reported or Path(reported) == started_in:
        return None, ""
    if encodable(reported) != reported:
        # A result cannot carry the name (nor could the next call's request).
        return None, f"Shell cwd stays {started_in}: the directory's name is not UTF-8"
    if not Path(reported).is_relative_to(workspace_root(ctx)):
        return ctx.workspace_root, f"Shell cwd was reset to {ctx.workspace_root}"
    return reported, ""


CAPPED = "capped"
"""`run_recorded`'s outcome for a command killed for its output's size."""


def exit_code(status: int) -> int:
    """The exit code as bash reports it: 128 + the signal for a command a signal killed."""
    return 128 - status if status < 0 else status


def _compose(output: str, status: int | str | None, timeout_ms: int, note: str) -> ToolOutput:
    if status == CAPPED:
        size = FOREGROUND_OUTPUT_CAP // (1024 * 1024)
        head, is_error = f"Command killed: its output passed {size} MB (its start below)", True
    elif status is None:
        head, is_error = f"Command timed out after {timeout_ms}ms", True
    elif status != 0:
        assert isinstance(status, int)
        head, is_error = f"Exit code {exit_code(status)}", True
    else:
        head, is_error = "", False
    content = "\n".join(part for part in (head, output, note) if part)
    return ToolOutput(content=content or "(no output)", is_error=is_error)


async def clear_earlier_attempt() -> str:
    """On a retry, kill what the earlier attempt of this activity left running on this host,
    and the note that tells the model the command ran before ("" on a first attempt)."""
    if activity.info().attempt == 1:
        return ""
    # Whatever the record says, the model hears that the command ran before: an attempt
    # may also have finished and died before reporting.
    state, found = bash_runs.previous_run()
    if state == "finished":  # `found`: its exit status; nothing of it runs
        code = "none: it timed out" if found is None else str(exit_code(found))
        note = bash_runs.RERUN_UNREPORTED_NOTE.format(code=code)
    else:
        if found is not None:  # the process group it left running
            await kill_group(found)
        if state in ("running", "ended"):
            # Its worker died under it: its scratch directory was never cleaned up.
            await asyncio.to_thread(bash_runs.remove_scratch)
        note = {
            "running": bash_runs.RERUN_NOTE,
            "ended": bash_runs.RERUN_ENDED_NOTE,
        }.get(state, bash_runs.RERUN_ELSEWHERE_NOTE)
    # After graceful stops too (a rolling deploy) it may have started more than once.
    earlier = activity.info().attempt - 1
    return note if earlier == 1 else bash_runs.rerun_after(earlier)


@dataclass(frozen=True)
class NotRun:
    """Why a command did not start: a sandbox refusal, or its run being killed."""

    reason: str
    killed: bool = False


async def run_recorded(
    ctx: ToolContext,
    script: str,
    scratch: str,
    cwd: Path,
    output: Path,
    timeout_s: float | None,
    max_output_bytes: int | None = None,
) -> int | None | NotRun:
    """Run `script` in the agent's sandbox, recorded on the host (`bash_runs`) for the
    retry and the kill that may follow: its exit status, None if it timed out (`timeout_s`;
    None: never), or why it did not run (`OutputCapped` as `run_command` raises it)."""
    late_kills: list[asyncio.Task[None]] = []

    def started(pgid: int) -> None:
        bash_runs.remember(pgid, scratch)
        # A kill that came since the check before the start found no record of it to kill.
        if bash_runs.kill_requested():
            late_kills.append(asyncio.create_task(kill_when_set_up(pgid)))

    # In a thread: a worker's first writer call probes bubblewrap, a subprocess that may
    # take seconds, and the event loop also carries this worker's workflows and heartbeats.
    argv = await run_blocking(sandbox_argv, ctx, script, scratch, cwd)
    if isinstance(argv, str):
        return NotRun(argv)
    if bash_runs.kill_requested():
        # A worker took this call just before its run was killed: nothing starts. An
        # earlier attempt's leftovers were killed by then; its record goes with them.
        bash_runs.forget()
        return NotRun(NOT_RUN_KILLED, killed=True)
    try:
        status = await run_command(
            argv, cwd, output, timeout_s, on_start=started, max_output_bytes=max_output_bytes
        )
    except OutputCapped:
        bash_runs.forget()  # killed and reaped: nothing is left for a retry to kill
        raise
    finally:
        for kill in late_kills:
            kill.cancel()  # run_command has killed the group and reaped it either way
        # Collected, so that a kill that failed (the same failure run_command's own kill
        # met) is not logged as an exception nobody retrieved.
        await asyncio.gather(*late_kills, return_exceptions=True)
        if ctx.sandbox == "none":  # a cancelled call's too
            drop_scratch_mountpoint(str(workspace_root(ctx)), scratch)
    # Kept when the run is cut short (a worker shutting down cancels it): the retry on
    # another worker then knows the command already ran in part. Kept, marked finished, when
    # it ran to its end: the result may yet not reach the server.
    bash_runs.finished(status)
    return status


async def _run_bash(req: BashRequest) -> ToolOutput:
    """Run a shell command in the workspace; see DESCRIPTION for the model-facing contract."""
    inp, ctx = req.input, req.ctx
    if inp.run_in_background:
        return ToolOutput(content=BACKGROUND_REFUSED, is_error=True)
    rerun_note = await clear_earlier_attempt()
    if lost := bash_runs.crash_reruns_spent():
        return ToolOutput(content=lost, is_error=True)
    cwd, start_note = start_dir(ctx)
    timeout_ms = inp.timeout or DEFAULT_TIMEOUT_MS
    # A cleanup that fails (files the command left unremovable) must not fail the activity
    # once the command has run: its retry would run the command again.
    with tempfile.TemporaryDirectory(prefix="outlast-bash-", ignore_cleanup_errors=True) as scratch:
        cwd_file, output = Path(scratch, "cwd"), Path(scratch, "output")
        script = wrap_command(inp.command, str(cwd_file))
        try:
            status = await run_recorded(
                ctx,
                script,
                scratch,
                cwd,
                output,
                timeout_ms / 1000,
                max_output_bytes=FOREGROUND_OUTPUT_CAP,
            )
        except OutputCapped:
            status = CAPPED
        if isinstance(status, NotRun):
            note = bash_runs.NOT_RUN_RERUN_NOTE if rerun_note and status.killed else ""
            content = "\n".join(part for part in (status.reason, note) if part)
            return ToolOutput(content=content, is_error=True)
        raw, more = read_head(output)
        new_cwd, cwd_note = next_cwd(cwd_file, ctx, cwd)
    notes = (start_note, cwd_note, rerun_note)
    note = "\n".join(dict.fromkeys(n for n in notes if n))  # each note once
    result = _compose(truncate_output(raw, more), status, timeout_ms, note)
    if new_cwd is None and start_note:
        new_cwd = ctx.workspace_root
    return result.model_copy(update={"cwd": new_cwd})


@activity.defn(name="tool.bash")
async def run_bash(req: BashRequest) -> ToolOutput:
    """The activity: the tool's output, a long one also put in the blob store (see
    `ToolOutput.content_ref`)."""
    async with bash_runs.attempt():
        return await stored(await _run_bash(req))


@activity.defn(name="tool.bash_kill")
async def kill_bash_runs(req: KillRequest) -> int:
    """Kill the commands a workflow run's Bash calls have running on this host; how many.

    A cancel reaches a running activity only in the response to its next heartbeat, so a
    workflow that is being killed sends this too, on the host queue, and the command stops at
    once; the Bash activity then ends with it. Tools heartbeat only every few seconds (each
    heartbeat is a server request and a billed action), and a kill need not wait for one. A
    command that had not recorded its process group yet kills itself once it has
    (`bash_runs.mark_killed`).
    """
    bash_runs.mark_killed(req.workflow_id, req.run_id)
    pgids = bash_runs.running_for(req.workflow_id, req.run_id)
    await asyncio.gather(*(kill_when_set_up(pgid) for pgid in pgids))
    return len(pgids)
