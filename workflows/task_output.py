"""`TaskOutput` as the workflow carries it out (T11): a background task's output, after
waiting for its end if asked to. Not offered to sub-agents (R30), nor where no background task
can be started."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from agents.control_tools import TaskOutputInput, format_task_output
from agents.messages import ToolResultBlock
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.tools.bash_background import OutputRequest, read_task_output

from workflows.registry import ChildRegistry, ChildTask
from workflows.turns import ValidCall, error_result

TASK_OUTPUT = "task-output"
"""Patch id: `TaskOutput` is carried out (before it, the tool did not exist: a call of it was
answered as an unknown tool)."""
TAKES_NOTICE = "task-output-takes-notice"
"""Patch id: a TaskOutput that gives a task's end takes its notification off the queue (R37:
the model had it twice, as the tool result and as the notification in the same request, a
background agent's whole answer included)."""
STOP_ENDS_WAIT = "task-output-stop"
"""Patch id: `outlast stop` ends a blocking wait (before it, the agent's last turn waited out
the call's timeout, up to 10 minutes, for a task that had not ended)."""
READ_OPTIONS = {
    # Bounded as a whole: a host that is gone must not hold the agent's turn.
    "schedule_to_close_timeout": timedelta(minutes=2),
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}


async def task_output(
    registry: ChildRegistry,
    host_queue: str,
    stop_requested: Callable[[], bool],
    call: ValidCall,
) -> ToolResultBlock:
    inp: TaskOutputInput = call.input  # type: ignore[assignment]
    if not versions.patched(TASK_OUTPUT):
        return error_result(call.block, f"No such tool available: {call.block.name}")
    target = inp.task_id.strip()
    shell = registry.shells.find(target)
    task = registry.find(target) if shell is None else None
    if shell is None and task is None:
        return error_result(call.block, f"No task found with ID: {target}")
    entry = shell or task
    if inp.block and inp.timeout > 0 and entry.status == "running":
        try:
            # Asked only when a stop comes during the wait, so no other call records a marker.
            await workflow.wait_condition(
                lambda: (
                    entry.status != "running"
                    or (stop_requested() and versions.patched(STOP_ENDS_WAIT))
                ),
                timeout=timedelta(milliseconds=inp.timeout),
                timeout_summary=f"TaskOutput waits for {target}",
            )
        except TimeoutError:
            pass
    retrieval = "success" if entry.status != "running" else "timeout" if inp.block else "not_ready"
    # As they were when `retrieval` was decided: a command that ends while its output is read
    # would be shown as ended with its output from before the end.
    status, exit_code = entry.status, shell.exit_code if shell is not None else None
    own_id = shell.shell_id if shell is not None else task.agent_id if task is not None else ""
    queued = registry.queued_for(own_id)
    # Asked only where a notification waits, so no other call records the patch.
    takes = retrieval == "success" and queued is not None and versions.patched(TAKES_NOTICE)
    taken = queued if takes else None
    if shell is None:
        assert task is not None
        if taken is not None:
            registry.take(taken)
        text = format_task_output(
            task.agent_id,
            "local_agent",
            task.status,
            _agent_output(task, queued),
            None,
            retrieval,
        )
        return ToolResultBlock(tool_use_id=call.block.id, content=text)
    try:
        output: str = await workflow.execute_activity(
            read_task_output,
            OutputRequest(output_file=shell.output_file),
            task_queue=host_queue,
            summary=f"output of {shell.shell_id}",
            **READ_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return error_result(call.block, f"Its output could not be read: {e.cause or e}")
    text = format_task_output(shell.shell_id, "local_bash", status, output, exit_code, retrieval)
    if taken is not None:
        # Taken once the output is read (a failed read leaves the end to its notification),
        # and said here: only the notification says a timeout, a stop's reason, a rerun.
        registry.take(taken)
        text = f"{text}\n\n{taken}"
    return ToolResultBlock(tool_use_id=call.block.id, content=text)


def _agent_output(task: ChildTask, queued: str | None) -> str:
    """A finished agent's result: its notification, while it waits for the next turn (the
    table keeps no text once one is queued), else where it went."""
    if task.status == "running":
        return ""
    if task.end is not None and task.end.final_text:
        return task.end.final_text
    if queued is not None:
        return queued
    return "(its result was delivered in its <task-notification>)"
