"""A resumed agent finds the sub-agents of its earlier runs again (R66 after a resume).

A resume starts the agent's next run without the registry of its sub-agents (the run's
state, which only a continue-as-new carries). When a SendMessage names none it knows, a
resumed run looks the name up among the sub-agents its earlier runs spawned
(`activities/earlier_agents.py`) and takes the one it finds into its registry: a running
one gets the message, an ended one is resumed with it, as any sub-agent of its own.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.earlier_agents import EarlierAgent, EarlierAgents, EarlierRequest

from workflows.contracts import AgentInput
from workflows.registry import ChildTask
from workflows.resumed import resumed_from
from workflows.subagents import SubAgents

EARLIER_CHILDREN = "earlier-children"
"""Patch id: a resumed agent's SendMessage to a sub-agent of an earlier run finds it (an
activity), where it was refused as unknown."""

FIND_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    # A worker of an earlier release has no such activity: the message is refused, as before.
    "schedule_to_close_timeout": timedelta(minutes=2),
    "retry_policy": RetryPolicy(maximum_attempts=3),
}


async def earlier_child(agents: SubAgents, target: str) -> ChildTask | None:
    """The sub-agent an earlier run of this agent spawned as `target` (a name or an agent
    id), now in the registry; None if this run is no resumed one or none is found."""
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
        workflow.logger.warning("could not look %r up among earlier sub-agents: %s", target, e)
        return None
    if found is None:
        return None
    task = registered(found)
    agents.registry.add(task)
    return task


def registered(found: EarlierAgent) -> ChildTask:
    """`found` as this run's record of a background sub-agent: ended (so SendMessage resumes
    it, from the conversation it ended with) or running (its end, signalled to this
    workflow id, is taken as any sub-agent's)."""
    spawn = AgentInput.model_validate(found.spawn)
    resumed = resumed_from(found.end, spawn) if found.end is not None else None
    generation = resumed.run_generation if resumed else spawn.run_generation
    if resumed is not None:
        spawn = spawn.model_copy(
            update={
                "permission_mode": resumed.permission_mode or spawn.permission_mode,
                "plan_file": resumed.plan_file or spawn.plan_file,
            }
        )
    running = found.status == "running"
    return ChildTask(
        agent_id=spawn.lineage.agent_id or (resumed.agent_id if resumed else ""),
        name=spawn.name,
        agent_type=spawn.agent_type,
        description=spawn.description,
        workflow_id=found.workflow_id,
        run_id=found.run_id,
        status="running" if running else found.status,  # type: ignore[arg-type]
        mode="background",
        run_generation=generation,
        # Its end was told to the run that waited for it, not to this one.
        notified=[] if running else [generation],
        spawn=spawn,
        # None: it ended before a model call answered, and there is nothing to go on from.
        transcript=resumed.transcript if resumed and resumed.transcript.head else None,
        read_state_ref=resumed.read_state_ref if resumed else None,
    )
