"""An agent's background commands (Bash `run_in_background`, T4, R27): their contracts, the
table the agent keeps of them, and what its model reads about them.

Pure state and strings, no Temporal calls. The table rides in the agent's `ChildRegistry`,
so a continued run still knows its commands, and their ends queue beside its sub-agents'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from agents.config import BACKGROUND_OUTPUT_CAP
from agents.notifications import TaskNotification, format_task_notification
from workflows.contracts import ChildSummary, Contract

ShellStatus = Literal["running", "completed", "failed", "killed"]
DESCRIPTION_CHARS = 80
"""A command named by its text (no description given) is cut to this many characters."""
ENDED_SHELLS_KEPT = 64
"""Ended commands a continued run still knows by id (TaskOutput, TaskStop's "already ended",
the `tasks` query); older ones are left behind at a continue-as-new. The table rode whole in
every carry, so a long agent's carry grew with every command it had ever run."""


class ShellTaskInput(Contract):
    """`ShellTaskWorkflow`'s input: one command, where and as whom it runs, and whom to tell."""

    shell_id: str
    command: str
    description: str
    ctx: dict
    """The agent's `ToolContext` for the call, as JSON (the agent's sandbox and cwd)."""
    output_file: str
    host_queue: str
    parent_workflow_id: str
    tool_use_id: str
    timeout_ms: int | None = None
    heartbeat_timeout_s: float = 30.0
    parent_check_s: float = 120.0
    """How often it checks that its agent still runs (it stops itself once it does not)."""
    max_output_bytes: int = BACKGROUND_OUTPUT_CAP
    """`tools.background_output_max_bytes`: past this size of its output file it is killed."""


class ShellEnd(Contract):
    """How a background command ended: `ShellTaskWorkflow`'s result and its signal."""

    shell_id: str
    status: Literal["completed", "failed", "killed"]
    exit_code: int | None = None
    timed_out: bool = False
    timeout_ms: int | None = None
    error: str | None = None
    note: str = ""
    output_file: str = ""
    tool_use_id: str | None = None
    stop_reason: str = ""
    """Why its own run stopped it (its output outgrew the cap); TaskStop's and its agent's
    stops keep theirs on the task."""


class ShellTask(BaseModel):
    shell_id: str
    description: str
    workflow_id: str
    output_file: str
    tool_use_id: str
    status: ShellStatus = "running"
    exit_code: int | None = None
    notified: bool = False
    """Its end has been queued for the model (R37: once)."""
    stop_requested: bool = False
    stop_reason: str = ""
    """Why it was stopped, when not by TaskStop (its agent's idle wait ran out)."""

    def summary(self) -> ChildSummary:
        """As the `tasks` query lists it, beside the sub-agents."""
        return ChildSummary(
            agent_id=self.shell_id,
            name=None,
            agent_type="shell",
            description=self.description,
            workflow_id=self.workflow_id,
            status=self.status,
            mode="background",
            run_generation=1,
        )


class ShellTable(BaseModel):
    shells: dict[str, ShellTask] = Field(default_factory=dict)

    def new_id(self, getrandbits: Callable[[int], int]) -> str:
        """`b` and 8 hex digits (Claude Code names shell tasks `b…`, agents `a…`), drawn
        from the workflow's random, unique in this table."""
        while True:
            shell_id = f"b{getrandbits(32):08x}"
            if shell_id not in self.shells:
                return shell_id

    def add(self, task: ShellTask) -> None:
        self.shells[task.shell_id] = task

    def forget(self, shell_id: str) -> None:
        """A command that never started (its start was refused)."""
        self.shells = {k: v for k, v in self.shells.items() if k != shell_id}

    def find(self, target: str) -> ShellTask | None:
        return self.shells.get(target.strip())

    def carried(self) -> ShellTable:
        """The table a continued run starts with: every command still running or whose end
        the model has not been told, and the last `ENDED_SHELLS_KEPT` started of the rest.
        An id left behind is "not found"; its output file stays, for Read, unless a later
        command draws the same id (1 in 2^32 a draw) and writes its own there."""
        ended = [k for k, t in self.shells.items() if t.status != "running" and t.notified]
        left = set(ended[: max(0, len(ended) - ENDED_SHELLS_KEPT)])
        return ShellTable(shells={k: t for k, t in self.shells.items() if k not in left})

    def running(self) -> list[ShellTask]:
        return [t for t in self.shells.values() if t.status == "running"]

    def outstanding(self) -> bool:
        """A command whose end the model has not been told about yet."""
        return any(not t.notified for t in self.shells.values())

    def record_end(self, end: ShellEnd) -> str | None:
        """Note how a command ended; the notification to queue, or None if it was known
        already (the workflow's signal and the handle watcher both report) or unknown. A
        command stopped by TaskStop is reported stopped whatever it exited with."""
        task = self.shells.get(end.shell_id)
        if task is None or task.notified:
            return None
        if task.stop_requested:
            end = end.model_copy(update={"status": "killed"})
        task.status, task.exit_code, task.notified = end.status, end.exit_code, True
        return shell_notification_text(task, end)


def shell_description(description: str | None, command: str) -> str:
    """What names the command to the model and in the Web UI: the model's description (meant
    to be 5-10 words; it rides in every notification, summary and carried shell record, so
    one of any length is cut like a command), else the command on one line, cut."""
    one_line = " ".join((description or "").split()) or " ".join(command.split())
    if len(one_line) <= DESCRIPTION_CHARS:
        return one_line
    return one_line[: DESCRIPTION_CHARS - 3] + "..."


def launch_text(shell_id: str, output_file: str, can_stop: bool, wait_s: float) -> str:
    """The immediate tool result (Claude Code's wording, and how to get the result)."""
    stop = "TaskStop stops it; " if can_stop else ""
    return (
        f"Command running in background with ID: {shell_id}. Output is being written to: "
        f"{output_file}\nYou will be notified when it ends. Do not sleep or poll for it; "
        f"Read the output file when you need it. {stop}if it is still running {wait_s:g} s "
        "after your turn has ended, it is stopped."
    )


def end_summary(description: str, end: ShellEnd) -> str:
    name = f'Background command "{description}"'
    if end.status == "killed":
        return f"{name} was stopped"
    if end.error:
        return f"{name} did not run: {end.error}"
    if end.timed_out:
        return f"{name} timed out after {end.timeout_ms}ms"
    if end.status == "completed":
        return f"{name} completed (exit code {end.exit_code})"
    return f"{name} failed with exit code {end.exit_code}"


def person_kill_note(reason: str = "") -> str:
    """A person's kill of the command, not the agent's TaskStop: the agent could not tell
    them apart (a user test, 2026-12-07)."""
    said = f"; reason: {' '.join(reason.split())}" if reason.strip() else ""
    return f"killed by the user (`outlast kill` or the Web UI{said}), not by a TaskStop of yours"


def stop_reason(task: ShellTask, end: ShellEnd) -> str:
    if end.status != "killed":
        return ""
    if task.stop_requested or task.stop_reason:
        # The agent's own stop (TaskStop, its idle wait): its reason, else its run's.
        return task.stop_reason or end.stop_reason
    # Its own run's (its output outgrew the cap), a person's kill's, or that kill's without
    # a reason: nothing of the agent's stopped it.
    return end.stop_reason or person_kill_note()


def shell_notification_text(task: ShellTask, end: ShellEnd) -> str:
    notification = format_task_notification(
        TaskNotification(
            task_id=task.shell_id,
            tool_use_id=end.tool_use_id or task.tool_use_id,
            status=end.status,
            summary=end_summary(task.description, end)
            + (f": {reason}" if (reason := stop_reason(task, end)) else ""),
            output_file=task.output_file,
        )
    )
    parts = [notification, f"Read the output file to retrieve the result: {task.output_file}"]
    if end.note:
        parts.append(end.note)
    return "\n".join(parts)


def status_of(exit_code: int | None, timed_out: bool, error: str | None) -> ShellStatus:
    """A command's end from its outcome: completed only with exit code 0."""
    if error is None and not timed_out and exit_code == 0:
        return "completed"
    return "failed"
