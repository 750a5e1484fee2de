"""`SendMessage` and `TaskStop`: talking to and stopping agents (spec T9, T10, R64-R67).

Like `Agent`, both are carried out by the workflow; only their contracts live here.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

SEND_MESSAGE_TOOL = "SendMessage"
TASK_STOP_TOOL = "TaskStop"
TASK_STOP_ALIASES = ("KillShell",)
TASK_OUTPUT_TOOL = "TaskOutput"
TASK_OUTPUT_ALIASES = ("AgentOutputTool", "BashOutputTool")
TASK_OUTPUT_MAX_WAIT_MS = 600_000


class SendMessageInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    to: str = Field(description="The recipient: an agent's name or its agent ID.")
    message: str | dict[str, Any] = Field(
        description="The message to send: text, or a structured message as an object (such "
        'as {"type": "plan_approval_response", "request_id": ..., "approve": true}), which '
        "is sent as its JSON."
    )
    summary: str | None = Field(
        default=None, description="A 5-10 word preview of the message, shown in the UI."
    )

    @model_validator(mode="after")
    def _not_empty(self) -> SendMessageInput:
        if not self.to.strip() or not self.text.strip() or self.message == {}:
            raise ValueError("to and message must not be empty")
        return self

    @property
    def text(self) -> str:
        """The message as the recipient gets it (T9: an object travels as its JSON)."""
        if isinstance(self.message, str):
            return self.message
        return json.dumps(self.message, ensure_ascii=False)


class TaskStopInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str | None = Field(
        default=None, description="The ID (or name) of the background task to stop."
    )
    shell_id: str | None = Field(default=None, description="Deprecated: use task_id.")

    @model_validator(mode="after")
    def _one_id(self) -> TaskStopInput:
        if not (self.task_id or self.shell_id):
            raise ValueError("task_id is required")
        return self

    @property
    def target(self) -> str:
        return (self.task_id or self.shell_id or "").strip()


class TaskOutputInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The ID of the background task (agent or command).")
    block: bool = Field(default=True, description="Wait for the task to end before answering.")
    timeout: int = Field(
        default=30_000,
        ge=0,
        le=TASK_OUTPUT_MAX_WAIT_MS,
        description="With block: the longest to wait, in milliseconds (max 600000).",
    )

    @model_validator(mode="after")
    def _an_id(self) -> TaskOutputInput:
        if not self.task_id.strip():
            raise ValueError("task_id must not be empty")
        return self


def format_task_output(
    task_id: str,
    task_type: str,
    status: str,
    output: str,
    exit_code: int | None = None,
    retrieval: str = "success",
) -> str:
    """TaskOutput's answer: what the task is, how it stands, and its output so far.
    `retrieval`: `success` (it has ended), `timeout` (waited, still running) or `not_ready`
    (not waited for, still running)."""
    parts = [
        f"<retrieval_status>{retrieval}</retrieval_status>",
        f"<task_id>{task_id}</task_id>",
        f"<task_type>{task_type}</task_type>",
        f"<status>{status}</status>",
    ]
    if exit_code is not None:
        parts.append(f"<exit_code>{exit_code}</exit_code>")
    parts.append(f"<output>\n{output}\n</output>" if output else "<output>(none yet)</output>")
    return "\n".join(parts)


SEND_MESSAGE_DESCRIPTION = """\
Send a message to another agent. Use it to continue an agent you launched earlier, by its \
name or agent ID: an agent that is still running receives the message at its next turn; an \
agent that has finished or was stopped is resumed with its whole earlier conversation, and \
you are notified when it finishes again. Plain text you write is never seen by other agents; \
this tool is the only way to reach them."""

TASK_STOP_DESCRIPTION = """\
Stop a running background agent by its agent ID (or name), or a background Bash command by \
its ID. Use it when an agent is going the wrong way or is no longer needed, or a command (a \
server, a watcher) has done its job. Its notification will say it was stopped; a stopped \
agent can be continued later with SendMessage."""

TASK_OUTPUT_DESCRIPTION = """\
Get the output of a background task: a background Bash command (its latest output, up to \
30000 characters) or a background agent (its result, once it has finished). With block (the \
default) it waits until the task ends or `timeout` milliseconds pass; with block: false it \
answers at once. You are notified when a task ends anyway: use this to check progress or to \
wait for a result you need before going on, never in a loop."""
