"""Read, Glob and Grep as local activities, when the workflow's worker is the workspace's host.

A regular tool activity costs a trip through the server's matching service for the tool and
another workflow task after it (about half of a turn's time, issue 9). These three tools only
read, finish in milliseconds and are safe to run again, which is all a local activity needs:
it runs inside the workflow task, and its result is recorded in a marker, so a crash just
runs it again. They still must run where the workspace is, and the workflow task may be on
any worker of the main queue: each worker builds these activities bound to its own host
queue, and one on another host answers "not here", after which the workflow runs the tool
as a regular activity on the host queue (as it does for every other tool).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.tools import TOOLS
from activities.tools.base import ToolOutput

LOCAL_TOOLS = ("Read", "Glob", "Grep")
"""Tools that may run as local activities: read-only, quick, idempotent, no processes left."""


def local_activity_name(tool: str) -> str:
    return f"tool.{tool.lower()}.local"


class HostLocalRequest(BaseModel):
    """A regular host activity's request, to run as a local activity where this is the host
    (the tools here, an agent's start and end steps in activities/host_steps.py)."""

    model_config = ConfigDict(frozen=True)

    host_queue: str
    """The workspace's host queue: it runs only on a worker that serves it."""
    request: dict[str, Any]
    """The regular activity's own request (for a tool, `<Name>Request`), as JSON."""


class LocalToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    output: ToolOutput | None
    """None: this worker is not the workspace's host; run the tool as a regular activity."""


def local_tool_activities(host_queue: str) -> list:
    """The local-activity versions of LOCAL_TOOLS for a worker whose host queue is
    `host_queue` (registered on its main-queue worker, where local activities run)."""
    return [_bound(TOOLS[name].name, host_queue) for name in LOCAL_TOOLS]


def _bound(tool: str, host_queue: str):
    spec = TOOLS[tool]

    @activity.defn(name=local_activity_name(tool))
    async def run_here(req: HostLocalRequest) -> LocalToolResult:
        if req.host_queue != host_queue:
            return LocalToolResult(output=None)
        return LocalToolResult(output=await spec.activity(spec.request_model(**req.request)))

    return run_here
