"""A teammate's task-list tools, and the lead's spawning of a teammate, carried out against
its team's workflow (R69, T19).

A workflow cannot call another workflow's update, so a teammate's TaskCreate / TaskUpdate
and the lead's `Agent({name, ...})` run here, as activities with a Temporal client. The
update id is the caller's tool_use id: a retried activity gets the first call's outcome
instead of creating a second task (or member).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from temporalio import activity
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from agents.team_tasks import TeamTask, list_text, task_text


class TeamTaskCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    team_workflow_id: str
    op: Literal["create", "get", "list", "update"]
    args: dict[str, Any]
    """The tool's input, as the model gave it (validated)."""
    caller: str
    update_id: str


class AddMemberCall(BaseModel):
    """The lead's `Agent({name, ...})` call in a team, as the team's `add_member` update
    takes it (R69)."""

    model_config = ConfigDict(frozen=True)

    team_workflow_id: str
    spec: dict[str, Any]
    """The new member's `TeammateSpec`, as JSON."""
    caller: str
    update_id: str


class TeamTaskReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: bool
    text: str


def _refused(e: WorkflowUpdateFailedError | RPCError) -> TeamTaskReply:
    """Why the team did not do it: its refusal, or its end. Any other RPC error is raised
    again, for the activity's retry."""
    if isinstance(e, WorkflowUpdateFailedError):
        cause = e.cause
        return TeamTaskReply(ok=False, text=getattr(cause, "message", None) or str(cause))
    if e.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION):
        return TeamTaskReply(ok=False, text=f"The team has ended ({e.message}).")
    raise e


class TeamControl:
    def __init__(self, client: Client) -> None:
        self._client = client

    @activity.defn(name="team.task_op")
    async def task_op(self, call: TeamTaskCall) -> TeamTaskReply:
        handle = self._client.get_workflow_handle(call.team_workflow_id)
        try:
            if call.op in ("list", "get"):
                raw = await handle.query("task_list", result_type=list[TeamTask])
                tasks = {t.id: t for t in raw}
                if call.op == "list":
                    return TeamTaskReply(ok=True, text=list_text(tasks))
                task = tasks.get(str(call.args.get("taskId", "")))
                if task is None:
                    return TeamTaskReply(
                        ok=False, text=f"No task with ID {call.args.get('taskId')}"
                    )
                return TeamTaskReply(ok=True, text=task_text(task))
            name, key = (
                ("task_create", "task") if call.op == "create" else ("task_update", "update")
            )
            task = await handle.execute_update(
                name,
                {key: call.args, "caller": call.caller},
                id=call.update_id,
                result_type=TeamTask,
            )
        except (WorkflowUpdateFailedError, RPCError) as e:
            return _refused(e)
        verb = "Created" if call.op == "create" else "Updated"
        return TeamTaskReply(ok=True, text=f"{verb} task #{task.id}: {task_text(task)}")

    @activity.defn(name="team.add_member")
    async def add_member(self, call: AddMemberCall) -> TeamTaskReply:
        """Start a teammate through the team's `add_member` update: what the team answered,
        or why it refused (a name in use, the team ending, too many members working)."""
        handle = self._client.get_workflow_handle(call.team_workflow_id)
        try:
            text = await handle.execute_update(
                "add_member",
                {"spec": call.spec, "caller": call.caller},
                id=call.update_id,
                result_type=str,
            )
        except (WorkflowUpdateFailedError, RPCError) as e:
            return _refused(e)
        return TeamTaskReply(ok=True, text=text)
