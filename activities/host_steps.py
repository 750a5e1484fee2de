"""An agent's short start and end steps as local activities on the workspace's host.

Every agent renders its prompt before its first turn, and a sub-agent's answer is checked for
a handoff and its transcript exported when it ends: three regular activities on the host
queue, a third of a five-turn child's server round trips (issue 9). They touch only the
workspace and the store, are short (a few git commands at most) and are safe to run again, so,
as Read, Glob
and Grep (activities/local_tools.py), they run inside the workflow task when its worker
serves the workspace's host queue; a worker on another host answers "not here" and the
workflow runs the step as a regular activity on the host queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.context import RenderContextInput, render_context
from activities.definitions import LoadDefinitionsInput, definition_names
from activities.handoff import HandoffInput, classify_handoff
from activities.local_tools import HostLocalRequest
from activities.transcript_export import ExportInput, export_transcript

HOST_STEPS: dict[str, tuple[Callable[..., Any], type[BaseModel]]] = {
    "prompt.render_context": (render_context, RenderContextInput),
    "classifier.classify_handoff": (classify_handoff, HandoffInput),
    "transcript.export": (export_transcript, ExportInput),
    "agents.definition_names": (definition_names, LoadDefinitionsInput),
}
"""Regular activity name: its function and request model."""


def local_step_name(name: str) -> str:
    return f"{name}.local"


class HostStepResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    here: bool
    """False: this worker is not the workspace's host; run the regular activity instead."""
    result: Any = None
    """The regular activity's result, as JSON."""


def host_step_activities(host_queue: str, host_activities: list) -> list:
    """The local-activity versions of HOST_STEPS, registered on the main-queue worker (where
    local activities run) of a worker whose host queue is `host_queue` and serves
    `host_activities`. A step the host worker does not serve with the function here answers
    "not here" as well, so the workflow runs whatever the host queue serves under the step's
    name. Each is registered either way: the SDK fails the workflow task that schedules an
    unregistered local activity, over and over."""
    return [
        _bound(name, host_queue if fn in host_activities else None)
        for name, (fn, _) in HOST_STEPS.items()
    ]


def _bound(name: str, host_queue: str | None):
    fn, request_model = HOST_STEPS[name]

    @activity.defn(name=local_step_name(name))
    async def run_here(req: HostLocalRequest) -> HostStepResult:
        if host_queue is None or req.host_queue != host_queue:
            return HostStepResult(here=False)
        result = await fn(request_model.model_validate(req.request))
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json")
        return HostStepResult(here=True, result=result)

    return run_here
