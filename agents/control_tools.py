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
