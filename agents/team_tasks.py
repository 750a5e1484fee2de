"""A team's shared task list (spec R69, T19): the tools' inputs and the state machine.

Pure. The list lives in the `TeamWorkflow`; its updates call `create_task` and
`update_task`, which either return the new task or raise `TaskRuleError` with a message the
calling model can act on. Claims are locked: a task in progress belongs to its owner until
the owner lets go of it or completes it.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TaskStatus = Literal["pending", "in_progress", "completed"]

TASK_CREATE_TOOL = "TaskCreate"
TASK_GET_TOOL = "TaskGet"
TASK_LIST_TOOL = "TaskList"
TASK_UPDATE_TOOL = "TaskUpdate"
TEAM_TOOLS = [TASK_CREATE_TOOL, TASK_GET_TOOL, TASK_LIST_TOOL, TASK_UPDATE_TOOL]


class TaskRuleError(ValueError):
    """A task operation the list's rules refuse; the message says why."""


class TeamTask(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    subject: str
    description: str = ""
    active_form: str | None = None
    status: TaskStatus = "pending"
    owner: str | None = None
    blocked_by: list[str] = Field(default_factory=list)
    created_by: str = ""


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskCreateInput(_Input):
    subject: str = Field(description="A short imperative title, e.g. 'Fix the login test'.")
    description: str = Field(description="What needs doing, and what done looks like.")
    activeForm: str | None = Field(  # noqa: N815 - the tool's wire name
        default=None, description="Present-continuous form shown while it runs."
    )

    @model_validator(mode="after")
    def _not_empty(self) -> TaskCreateInput:
        if not self.subject.strip():
            raise ValueError("subject must not be empty")
        return self


class TaskGetInput(_Input):
    taskId: str = Field(description="The task's ID.")  # noqa: N815


class TaskListInput(_Input):
    pass


class TaskUpdateInput(_Input):
    taskId: str = Field(description="The task's ID.")  # noqa: N815
    status: TaskStatus | None = Field(
        default=None, description="pending, in_progress (you are working on it) or completed."
    )
    owner: str | None = Field(
        default=None,
        description="Who works on it: your own name to claim it, or '' to let go of it.",
    )
    subject: str | None = Field(default=None, description="A new title.")
    description: str | None = Field(default=None, description="A new description.")
    activeForm: str | None = Field(default=None, description="A new progress label.")  # noqa: N815
    addBlockedBy: list[str] = Field(  # noqa: N815
        default_factory=list, description="IDs of tasks that must be completed before this one."
    )


TEAM_TOOL_INPUTS: dict[str, type[BaseModel]] = {
    TASK_CREATE_TOOL: TaskCreateInput,
    TASK_GET_TOOL: TaskGetInput,
    TASK_LIST_TOOL: TaskListInput,
    TASK_UPDATE_TOOL: TaskUpdateInput,
}

TEAM_TOOL_DESCRIPTIONS = {
    TASK_CREATE_TOOL: "Add a task to the team's shared task list. Returns the new task's ID.",
    TASK_GET_TOOL: "Show one task of the team's task list in full.",
    TASK_LIST_TOOL: "List the team's tasks with their status, owner and blockers.",
    TASK_UPDATE_TOOL: (
        "Change a task: claim it (owner = your name, status in_progress), mark it completed, "
        "or edit it. A task in progress that another teammate owns cannot be claimed."
    ),
}


def next_task_id(tasks: dict[str, TeamTask]) -> str:
    return str(max((int(t) for t in tasks if t.isdigit()), default=0) + 1)


def create_task(tasks: dict[str, TeamTask], inp: TaskCreateInput, caller: str) -> TeamTask:
    return TeamTask(
        id=next_task_id(tasks),
        subject=inp.subject.strip(),
        description=inp.description,
        active_form=inp.activeForm,
        created_by=caller,
    )


def update_task(
    tasks: dict[str, TeamTask],
    inp: TaskUpdateInput,
    caller: str,
    *,
    released: Collection[str] = (),
    check_lock: bool = True,
) -> TeamTask:
    """The task after `caller` applies `inp`, or TaskRuleError.

    A task in progress is locked to its owner (`check_lock`), unless the owner is among
    `released` (the members that have ended: one that ended holding a task, killed, shut
    down or out of turns, would keep it from everyone for good)."""
    task = tasks.get(inp.taskId)
    if task is None:
        known = ", ".join(sorted(tasks, key=_id_order)) or "none"
        raise TaskRuleError(f"No task with ID {inp.taskId}. Existing IDs: {known}")
    owner = task.owner if inp.owner is None else (inp.owner.strip() or None)
    status = inp.status or task.status
    if status == "in_progress" and owner is None:
        owner = caller  # starting work on an unowned task claims it
    held_by_other = (
        check_lock
        and task.status == "in_progress"
        and task.owner not in (None, caller)
        and task.owner not in released
    )
    if held_by_other and (owner != task.owner or status != task.status):
        raise TaskRuleError(
            f"Task {task.id} is in progress and owned by {task.owner}; only they can change "
            "its owner or status. Pick another task, or message them."
        )
    blocked_by = [*task.blocked_by, *(b for b in inp.addBlockedBy if b not in task.blocked_by)]
    missing = [b for b in blocked_by if b not in tasks or b == task.id]
    if missing:
        raise TaskRuleError(f"Task {task.id} cannot be blocked by {', '.join(missing)}")
    if status == "in_progress" and task.status != "in_progress":
        open_blockers = [b for b in blocked_by if tasks[b].status != "completed"]
        if open_blockers:
            raise TaskRuleError(
                f"Task {task.id} is blocked by unfinished tasks {', '.join(open_blockers)}"
            )
    return task.model_copy(
        update={
            "owner": owner,
            "status": status,
            "subject": inp.subject if inp.subject is not None else task.subject,
            "description": inp.description if inp.description is not None else task.description,
            "active_form": inp.activeForm if inp.activeForm is not None else task.active_form,
            "blocked_by": blocked_by,
        }
    )


def _id_order(task_id: str) -> tuple[int, str]:
    return (int(task_id), "") if task_id.isdigit() else (1 << 62, task_id)


def sorted_tasks(tasks: dict[str, TeamTask]) -> list[TeamTask]:
    return [tasks[k] for k in sorted(tasks, key=_id_order)]


def task_text(task: TeamTask) -> str:
    """One task as a tool result shows it."""
    return json.dumps(task.model_dump(exclude_none=True), ensure_ascii=False)


def list_text(tasks: dict[str, TeamTask]) -> str:
    if not tasks:
        return "The task list is empty."
    lines = []
    for t in sorted_tasks(tasks):
        owner = f" (owner: {t.owner})" if t.owner else ""
        blocked = f" [blocked by {', '.join(t.blocked_by)}]" if t.blocked_by else ""
        lines.append(f"#{t.id} [{t.status}] {t.subject}{owner}{blocked}")
    return "\n".join(lines)
