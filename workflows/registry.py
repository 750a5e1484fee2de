"""A parent's table of its sub-agents and the exactly-once notification rule (R37, R43).

Pure state, no Temporal calls: every transition here is a plain unit test. The table is part
of the parent's carried state, so a continued run keeps deduplicating.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from agents.file_claims import ClaimTable
from agents.notifications import (
    TURN_LIMIT_NOTE,
    TaskNotification,
    UsageFigures,
    escape_xml,
    format_task_notification,
    killed_note,
    stop_note,
    summary_for,
    unread_note,
    with_note,
)
from agents.transcript import TranscriptRef
from workflows.contracts import AgentInput, AgentNotification, AgentUsage, ChildSummary
from workflows.shells import ShellEnd, ShellTable

TaskState = Literal["running", "completed", "failed", "killed"]


def figures(usage: AgentUsage) -> UsageFigures:
    return UsageFigures(
        total_tokens=usage.total_tokens, tool_uses=usage.tool_uses, duration_ms=usage.duration_ms
    )


def delivered_text(end: AgentNotification) -> str:
    """The child's answer as the parent sees it: with the handoff warning first, if any."""
    if end.handoff_warning:
        return f"{end.handoff_warning}\n\n{end.final_text}"
    return end.final_text


def ending_note(task: ChildTask, end: AgentNotification) -> str | None:
    """Why a child ended without finishing, when its status alone does not say: a person's
    stop or kill, or its turn limit; and, killed, the messages it never read."""
    note = _why_ended(task, end)
    if end.status == "killed" and end.unread_messages > 0:
        unread = unread_note(end.unread_messages)
        return f"{note} {unread}" if note else unread
    return note


def _why_ended(task: ChildTask, end: AgentNotification) -> str | None:
    if end.stopped:
        return stop_note(end.stop_reason)
    if end.status == "killed" and not task.stop_requested:
        return killed_note(end.stop_reason)
    if end.max_turns_reached:
        return TURN_LIMIT_NOTE
    return None


class ChildTask(BaseModel):
    agent_id: str
    name: str | None = None
    agent_type: str
    description: str
    workflow_id: str
    run_id: str | None = None
    tool_use_id: str | None = None
    status: TaskState = "running"
    mode: Literal["sync", "background"]
    run_generation: int = 1
    notified: list[int] = Field(default_factory=list)
    """Generations whose end the parent has already been told about (sync result or
    notification): the test-and-set of R37, per resume generation."""
    stop_requested: bool = False
    background_requested: bool = False
    background_hint: bool = False
    end: AgentNotification | None = None
    """How the current generation ended, once known."""
    spawn: AgentInput
    """The input it was started with, kept to resume it (R66)."""
    transcript: TranscriptRef | None = None
    read_state_ref: str | None = None
    """The ended generation's read-file stamps (a blob), handed to the run that resumes it."""

    def summary(self) -> ChildSummary:
        return ChildSummary(
            agent_id=self.agent_id,
            name=self.name,
            agent_type=self.agent_type,
            description=self.description,
            workflow_id=self.workflow_id,
            status=self.status,
            mode=self.mode,
            run_generation=self.run_generation,
            background_hint=self.background_hint,
            stopped=self.end is not None and self.end.stopped and not self.stop_requested,
        )


class ChildRegistry(BaseModel):
    tasks: dict[str, ChildTask] = Field(default_factory=dict)
    names: dict[str, str] = Field(default_factory=dict)
    """name -> agent id; the latest spawn with a name wins (R20)."""
    queue: list[str] = Field(default_factory=list)
    """Formatted `<task-notification>` texts waiting for the next turn boundary."""
    claims: ClaimTable = Field(default_factory=ClaimTable)
    """A coordinator's workers' declared files, and spawns waiting for them (R59)."""
    shells: ShellTable = Field(default_factory=ShellTable)
    """Its background commands (Bash `run_in_background`); their ends queue here too."""

    def add(self, task: ChildTask) -> None:
        self.tasks[task.agent_id] = task
        if task.name:
            self.names[task.name] = task.agent_id

    def find(self, target: str) -> ChildTask | None:
        target = target.strip()
        if target in self.tasks:
            return self.tasks[target]
        agent_id = self.names.get(target)
        return self.tasks.get(agent_id) if agent_id else None

    def running(self) -> list[ChildTask]:
        return [t for t in self.tasks.values() if t.status == "running"]

    def carried(self) -> ChildRegistry:
        """What a continue-as-new hands on: all of it but the oldest ended commands
        (`ShellTable.carried`). A sub-agent's record stays whole: SendMessage resumes a
        completed one from it (R66)."""
        return self.model_copy(update={"shells": self.shells.carried()})

    def outstanding(self) -> bool:
        """A background child or command whose end the parent has not been told about yet."""
        return self.shells.outstanding() or any(
            t.mode == "background" and t.run_generation not in t.notified
            for t in self.tasks.values()
        )

    def record_shell_end(self, end: ShellEnd) -> bool:
        """Note how a background command ended; True if that queued a notification."""
        text = self.shells.record_end(end)
        if text is not None:
            self.queue.append(text)
        return text is not None

    def record_end(self, end: AgentNotification) -> bool:
        """Note how a child's run ended; True if that queued a notification.

        Idempotent: a duplicate (retried signal, the handle watcher and the signal both
        reporting, a stale generation) changes nothing. A child stopped by TaskStop is
        reported `killed` even if it happened to finish on its own meanwhile (R37). An end
        that `continues` makes the parent wait for the next generation once this one's end
        has reached it (queued here, or delivered as the sync result: `mark_delivered`).
        """
        task = self.tasks.get(end.agent_id)
        if task is None:
            return False
        queued = self._record(task, end)
        generation = end.run_generation
        if end.continues and generation == task.run_generation and generation in task.notified:
            _next_generation(task)
        return queued

    def _record(self, task: ChildTask, end: AgentNotification) -> bool:
        if end.run_generation in task.notified:
            return False
        if end.run_generation < task.run_generation:
            # An older run's end that crossed a resume: still owed to the parent, once.
            task.notified.append(end.run_generation)
            if end.stopped:
                end = end.model_copy(update={"status": "killed"})
            self.queue.append(notification_text(task, end))
            return True
        if end.run_generation == task.run_generation and task.end is not None:
            return False
        if end.run_generation > task.run_generation:
            # The child resumed itself for mail that arrived as it was ending.
            task.run_generation, task.mode, task.stop_requested = (
                end.run_generation,
                "background",
                False,
            )
        status = "killed" if task.stop_requested or end.stopped else end.status
        task.end = end.model_copy(update={"status": status})
        if end.run_id is not None:
            task.run_id = end.run_id  # a resume waits for this run to close
        task.status = status
        task.transcript, task.read_state_ref = end.transcript, end.read_state_ref
        if task.mode == "sync":
            return False
        task.notified.append(task.run_generation)
        self.queue.append(notification_text(task, task.end))
        _forget_text(task)
        return True

    def mark_delivered(self, task: ChildTask) -> None:
        """The end went back as the sync tool result: no notification for it (R37)."""
        if task.run_generation not in task.notified:
            task.notified.append(task.run_generation)
        _forget_text(task)
        if task.end is not None and task.end.continues:
            _next_generation(task)

    def queued_for(self, task_id: str) -> str | None:
        """The notification of `task_id` waiting for the next turn, if any."""
        mark = f"<task-id>{escape_xml(task_id)}</task-id>"
        return next((text for text in reversed(self.queue) if mark in text), None)

    def take(self, text: str) -> None:
        """`text` off the queue: TaskOutput gave the model what it says (R37: a result that
        went back as a tool result is not notified again)."""
        self.queue = [t for t in self.queue if t != text]

    def drain(self) -> list[str]:
        queued, self.queue = self.queue, []
        return queued


def _next_generation(task: ChildTask) -> None:
    """The child goes on as its next generation to answer mail that came in as it ended: the
    parent is owed that generation's end as a notification (R37), so it waits for it. The
    transcript stays the last one known (the ended generation's) until the next end brings
    its own: a resume or a failure report of a generation that never reports uses it."""
    task.run_generation += 1
    task.mode, task.status, task.end, task.stop_requested = "background", "running", None, False


def _forget_text(task: ChildTask) -> None:
    """A delivered answer is in the parent's conversation already; the table, which every
    continue-as-new carries, keeps only its status and usage."""
    if task.end is not None and task.end.final_text:
        task.end = task.end.model_copy(update={"final_text": ""})


def notification_text(task: ChildTask, end: AgentNotification) -> str:
    said = delivered_text(end) if end.final_text or end.handoff_warning else ""
    result = with_note(ending_note(task, end), said)
    return format_task_notification(
        TaskNotification(
            task_id=task.agent_id,
            tool_use_id=end.tool_use_id or task.tool_use_id,
            status=end.status,
            summary=summary_for(end.status, task.description, end.error),
            output_file=end.output_file,
            result=result or None,
            usage=figures(end.usage),
            worktree_path=end.worktree_path,
            worktree_branch=end.worktree_branch,
        )
    )
