"""How a parent learns that a sub-agent's run ended when the sub-agent's own notification
is not what tells it: from the child workflow handle (its result or failure), or, for a child
that cannot report any more (terminated, or started by an earlier run of the parent), from
Temporal's own view of the child's workflow. And how an ending parent waits for the children
it started to close (`settle_children`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ChildWorkflowError, is_cancelled_exception

from agents.notifications import cap_result
from agents.transcript import TranscriptRef
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.resume import AgentControl, AgentRunState

from workflows.contracts import AgentNotification, AgentResult, AgentUsage
from workflows.registry import ChildRegistry, ChildTask
from workflows.shells import ShellEnd


def end_from_result(task: ChildTask, generation: int, result: AgentResult) -> AgentNotification:
    return AgentNotification(
        agent_id=task.agent_id,
        run_generation=generation,
        status=result.status,
        agent_type=result.agent_type,
        description=task.description,
        final_text=cap_result(result.final_text),
        usage=result.usage,
        transcript=result.transcript,
        worktree_path=result.worktree_path,
        worktree_branch=result.worktree_branch,
        handoff_warning=result.handoff_warning,
        error=result.error,
        output_file=result.output_file,
        read_state_ref=result.read_state_ref,
        permission_mode=result.permission_mode,
        plan_file=result.plan_file,
        run_id=result.run_id,
        stopped=result.stopped,
        stop_reason=result.stop_reason,
        max_turns_reached=result.max_turns_reached,
    )


def end_from_failure(task: ChildTask, generation: int, error: BaseException) -> AgentNotification:
    cause = error.cause if isinstance(error, ChildWorkflowError) else error
    message = getattr(cause, "message", None) or str(cause)
    return AgentNotification(
        agent_id=task.agent_id,
        run_generation=generation,
        status="killed" if is_cancelled_exception(error) else "failed",
        description=task.description,
        error=message,
        transcript=last_transcript(task),
        read_state_ref=last_read_state(task),
    )


def last_transcript(task: ChildTask) -> TranscriptRef:
    """For an end the child never reported: the conversation last known, its own or the one
    its run resumed."""
    return task.transcript or task.spawn.resume_from or TranscriptRef()


def last_read_state(task: ChildTask) -> str | None:
    """The stamps that go with `last_transcript`'s conversation."""
    return task.read_state_ref if task.transcript else task.spawn.read_state_ref


async def end_from_handle(task: ChildTask, generation: int, handle) -> AgentNotification:
    try:
        return end_from_result(task, generation, await handle)
    except ChildWorkflowError as e:
        return end_from_failure(task, generation, e)


def watch_child(registry: ChildRegistry, task: ChildTask, handle) -> None:
    """Fallback for a child of this run whose own notification never comes."""
    generation = task.run_generation

    async def watch() -> None:
        registry.record_end(await end_from_handle(task, generation, handle))

    asyncio.create_task(watch())


SETTLES_CHILDREN = "settles-children"
"""Patch: an agent about to end waits for the sub-agents it started to close (issue 9's
late-mail race)."""
CLOSE_WAIT = timedelta(seconds=60)
"""How long an ending agent waits for a sub-agent in its last steps: they take one or two
workflow tasks; a child stuck there does not hold its parent's end for longer."""
CLOSE_WAIT_SUMMARY = "waiting for sub-agents to close"
"""The wait's timer, as the Web UI shows it."""


async def settle_children(
    open_children: Callable[[], bool],
    ready: Callable[[], bool],
    outstanding: Callable[[], bool],
    wait_for_input: Callable[[], Awaitable[None]],
    on_wait: Callable[[], None],
) -> bool:
    """At an agent's end of turn with nothing outstanding: True if, while it waited for the
    sub-agents it started to close, something came that needs another turn (`ready`: input or
    a stop).

    A child that told its end can still get mail before it closes; it then says another end
    follows (`continues`) and goes on to answer. Ending before that word arrives loses the
    answer, which the child's signal to its closed parent can no longer deliver. Not covered:
    children this run holds no handle of (started by an earlier run of the parent, or resumed
    through the resume activity); their word can still come too late.
    """
    if ready() or not open_children() or not versions.patched(SETTLES_CHILDREN):
        return False
    on_wait()
    while not ready():
        if outstanding():
            await wait_for_input()  # the promised generation's end, as any background end
            continue
        if not open_children():
            return False
        try:
            await workflow.wait_condition(
                lambda: ready() or outstanding() or not open_children(),
                timeout=CLOSE_WAIT,
                timeout_summary=CLOSE_WAIT_SUMMARY,
            )
        except TimeoutError:
            return False
    return True


async def describe_runs(workflow_ids: list[str]) -> list[AgentRunState]:
    """How the current run of each workflow id stands, from Temporal's own view."""
    return await workflow.execute_activity_method(
        AgentControl.describe_agents,
        workflow_ids,
        start_to_close_timeout=timedelta(seconds=60),
        retry_policy=RetryPolicy(maximum_attempts=3),
    )


def spent(state: AgentRunState) -> AgentUsage:
    """What a run that ended without a result had spent, as `describe_runs` read it; nothing
    when it could not."""
    return AgentUsage.model_validate(state.usage) if state.usage else AgentUsage()


LIVENESS_BACKOFF = "liveness-backoff"
"""Patch id: a wait's liveness checks come further apart while every child still runs. At a
fixed two minutes, each check's ~11 events filled a waiting agent's history to Temporal's
limit in about six days, and the wait does not continue as new."""
LIVENESS_CHECK_MAX_S = 900.0
"""The longest a wait goes between checks: how late, at worst, an agent learns of a child
that closed without telling it (terminated, say)."""


def liveness_interval(base_s: float, checks: int) -> float:
    """Seconds to the next check, after `checks` in this wait found nothing closed: doubling
    from the configured `base_s` up to LIVENESS_CHECK_MAX_S (never below `base_s`)."""
    return max(base_s, min(base_s * 2 ** min(checks, 32), LIVENESS_CHECK_MAX_S))


async def check_liveness(registry: ChildRegistry) -> None:
    """Record the end of any background child or command whose run closed without telling
    us."""
    await _check_shells(registry)
    waiting = [
        t
        for t in registry.tasks.values()
        if t.mode == "background" and t.status == "running" and t.run_generation not in t.notified
    ]
    if not waiting:
        return
    states = await describe_runs([t.workflow_id for t in waiting])
    for task, state in zip(waiting, states, strict=True):
        if state.status == "RUNNING":
            continue
        if state.result is not None:
            result = AgentResult.model_validate(state.result)
            end = end_from_result(task, task.run_generation, result)
        else:
            end = AgentNotification(
                agent_id=task.agent_id,
                run_generation=task.run_generation,
                status="killed" if state.status == "CANCELED" else "failed",
                description=task.description,
                error=state.error,
                usage=spent(state),
                transcript=last_transcript(task),
                read_state_ref=last_read_state(task),
            )
        registry.record_end(end)


async def _check_shells(registry: ChildRegistry) -> None:
    waiting = [t for t in registry.shells.running() if not t.notified]
    if not waiting:
        return
    states = await describe_runs([t.workflow_id for t in waiting])
    for task, state in zip(waiting, states, strict=True):
        if state.status == "RUNNING":
            continue
        if state.result is not None:
            end = ShellEnd.model_validate(state.result)
        else:
            end = ShellEnd(
                shell_id=task.shell_id,
                status="killed" if state.status == "CANCELED" else "failed",
                error=None if state.status == "CANCELED" else state.error or state.status,
                output_file=task.output_file,
                tool_use_id=task.tool_use_id,
            )
        registry.record_shell_end(end)
