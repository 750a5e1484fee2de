"""A resumed agent finds the sub-agents of its earlier runs again (R66 after a resume).

A resume starts the agent's next run without the registry of its sub-agents (the run's
state, which only a continue-as-new carries). When a SendMessage names none it knows, a
resumed run looks the name up among the sub-agents its earlier runs spawned
(`activities/earlier_agents.py`) and takes the one it finds into its registry: a running
one gets the message, an ended one is resumed with it, as any sub-agent of its own.
"""

from __future__ import annotations

import typing
from datetime import timedelta

from pydantic import ValidationError
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from workflows import versions

# The activity's types, one copy outside the sandbox (as every activity reference here).
with workflow.unsafe.imports_passed_through():
    from activities.earlier_agents import (
        STILL_CLOSING,
        EarlierAgent,
        EarlierAgents,
        EarlierRequest,
    )

from workflows.contracts import AgentInput, AgentResult
from workflows.registry import ChildTask, TaskState
from workflows.resumed import resumed_from
from workflows.subagents import SubAgents

EARLIER_CHILDREN = "earlier-children"
"""Patch id: a resumed agent's SendMessage to a sub-agent of an earlier run finds it (an
activity), where it was refused as unknown."""

ENDED_STATES = frozenset(typing.get_args(TaskState))
"""A sub-agent's states; an AgentResult's status outside them (`rejected`) reads `failed`."""

FIND_OPTIONS = {
    # Reads the run's history (a long one takes a while) and visibility.
    "start_to_close_timeout": timedelta(seconds=60),
    # Retried till then: a worker of an earlier release has no such activity mid-deploy.
    "schedule_to_close_timeout": timedelta(minutes=3),
    "retry_policy": RetryPolicy(maximum_interval=timedelta(seconds=10)),
}


async def earlier_child(agents: SubAgents, target: str) -> ChildTask | str | None:
    """The sub-agent an earlier run of this agent spawned as `target` (a name or an agent
    id), now in the registry; None if this run is no resumed one or none is found; why, if
    the lookup failed (not "no such agent": the model would spawn a fresh one instead)."""
    ctx = agents.ctx
    assert ctx is not None
    # Asked only by a resumed run's SendMessage to a name it does not know, so no other
    # agent records a marker.
    if not ctx.resumed or ctx.team is not None or not versions.patched(EARLIER_CHILDREN):
        return None
    try:
        found: EarlierAgent | None = await workflow.execute_activity_method(
            EarlierAgents.find_earlier,
            EarlierRequest(parent_workflow_id=ctx.workflow_id, target=target),
            **FIND_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        if isinstance(e.cause, ApplicationError) and e.cause.type == STILL_CLOSING:
            # Found, not lost: "could not be looked up; try again" had the model retry at
            # once, into another wait (a review, 2026-12-07). A tool result's text only.
            return (
                f"'{target}', an agent of an earlier run, is still being stopped; send the "
                "message again in a while: once it has ended, the message continues it."
            )
        workflow.logger.warning("could not look %r up among earlier sub-agents: %s", target, e)
        return (
            f"'{target}' is not an agent of this run, and the agents of your earlier runs "
            f"could not be looked up ({e.cause or e}); try again."
        )
    if found is None:
        return None
    try:
        task = registered(found)
    except ValidationError as e:  # another release's input: refused, not a stuck task
        workflow.logger.warning("earlier sub-agent %s unreadable: %s", found.workflow_id, e)
        return f"'{target}', an agent of an earlier run, could not be read: {e.errors()[0]}"
    agents.registry.add(task)
    return task


def registered(found: EarlierAgent) -> ChildTask:
    """`found` as this run's record of a background sub-agent: ended (so SendMessage resumes
    it, from the conversation it ended with) or running (its end, signalled to this
    workflow id, is taken as any sub-agent's)."""
    started = AgentInput.model_validate(found.spawn)
    resumed = resumed_from(found.end, started) if found.end is not None else None
    generation = resumed.run_generation if resumed else started.run_generation
    # Its continue-as-new's state is no start of a resume (`Resumed.applied_to` drops it too),
    # and it would be carried in this agent's registry for good.
    spawn = started.model_copy(update={"carry": None})
    if resumed is not None:
        spawn = spawn.model_copy(
            update={
                "permission_mode": resumed.permission_mode or spawn.permission_mode,
                "plan_file": resumed.plan_file or spawn.plan_file,
            }
        )
    status = found.status
    if found.end is not None and found.end.result is not None:
        status = AgentResult.model_validate(found.end.result).status  # the agent's own word
    return ChildTask(
        agent_id=spawn.lineage.agent_id or (resumed.agent_id if resumed else ""),
        name=spawn.name,
        agent_type=spawn.agent_type,
        description=spawn.description,
        workflow_id=found.workflow_id,
        run_id=found.run_id,
        status=status if status in ENDED_STATES else "failed",  # type: ignore[arg-type]
        mode="background",
        run_generation=generation,
        # Its end was told to the run that waited for it, not to this one.
        notified=[] if status == "running" else [generation],
        spawn=spawn,
        # None: it ended before a model call answered, and there is nothing to go on from.
        transcript=resumed.transcript if resumed and resumed.transcript.head else None,
        read_state_ref=resumed.read_state_ref if resumed else None,
    )
