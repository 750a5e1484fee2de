"""Run one of an agent's start or end steps on the workspace's host: inside the workflow task
where this worker is that host, else as a regular activity on the host queue
(activities/host_steps.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.host_steps import (
        HOST_STEPS,
        HostStepResult,
        local_step_name,
    )
    from activities.local_tools import HostLocalRequest

from agents.config import OutlastConfig

LOCAL_HOST_STEPS_PATCH = "local-host-steps"
"""Rendering the prompt, the handoff check and the transcript export run as local activities
on the workspace's host (issue 9)."""

LOCAL_STEP_TIMEOUT = timedelta(seconds=30)
"""Longer than this, the step is run again as a regular activity."""

T = TypeVar("T")


async def run_host_step(
    config: OutlastConfig,
    name: str,
    request: BaseModel,
    *,
    host_queue: str,
    result_type: type[T],
    **options: Any,
) -> T:
    """The step's result. A local attempt that fails for any reason but cancellation falls
    back to the regular activity, which has the step's own retries and error handling."""
    if name not in HOST_STEPS:
        # An unregistered local activity fails the workflow task on every attempt.
        raise ValueError(f"{name} is not a host step")
    if config.tools.local_tools and versions.patched(LOCAL_HOST_STEPS_PATCH):
        try:
            local: HostStepResult = await workflow.execute_local_activity(
                local_step_name(name),
                HostLocalRequest(
                    host_queue=host_queue, request=request.model_dump(mode="json", by_alias=True)
                ),
                result_type=HostStepResult,
                start_to_close_timeout=LOCAL_STEP_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=1),
                summary=options.get("summary"),
            )
            if local.here:
                return TypeAdapter(result_type).validate_python(local.result)
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            workflow.logger.warning("%s did not run here (%s); on the host queue", name, e.cause)
        except ValidationError as e:
            workflow.logger.warning("%s answered here with %s; on the host queue", name, e)
    return await workflow.execute_activity(
        name, request, task_queue=host_queue, result_type=result_type, **options
    )
