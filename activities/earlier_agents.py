"""A resumed agent's sub-agents of its earlier runs, found again by name or id (R66, R61).

A run keeps its sub-agents in its state (`ChildRegistry`), which a continue-as-new carries
and a resume (a new run of the ended agent's id) starts without. The conversation it goes
on from names its workers, yet a SendMessage to one was refused ("No agent named ..."), and
a resumed coordinator told to "continue the same worker" (R61) had to spawn a fresh one,
without the worker's context. The workers' workflows are still there, under `<agent's
workflow id>/<name or agent id>`: this finds the latest the name was given to, and reads
from its last run what resuming it needs, as `outlast resume` does for a top-level agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict
from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError

from activities.run_history import RunEnd, run_end

TARGET_RE = re.compile(r"^[\w.@:+-]{1,200}$")
"""Names and agent ids a visibility query can hold as they are: anything else (a quote, a
space) names no sub-agent this could find."""

AGENT_ID = SearchAttributeKey.for_keyword("AgentId")
"""`workflows.search_attributes.AGENT_ID`, which this module may not import."""

ENDED_AS = {
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.CANCELED: "killed",
}
"""How a closed run's Temporal status reads as a sub-agent's state; any other is `failed`."""

STILL_CLOSING = "SubAgentClosing"
"""The error type of a lookup that found the sub-agent still being stopped."""
CLOSING_WAIT_S = 30.0
"""How long a lookup waits for a sub-agent being stopped to close (its kill reaches its tools
at once; its end takes a few activities). Within the activity's 60 s."""


class EarlierRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    parent_workflow_id: str
    target: str
    """What the SendMessage was addressed to: a name or an agent id."""


class EarlierAgent(BaseModel):
    """A sub-agent an earlier run of the parent spawned, as its latest run stands."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    run_id: str
    status: str
    """`running`, or how its latest run ended: `completed`, `killed` or `failed`."""
    spawn: dict
    """Its latest run's start input (an AgentInput, as JSON: activities import no
    workflows)."""
    end: RunEnd | None = None
    """What a closed run left (`workflows.resumed.resumed_from`); None for a running one."""


def closing(desc: WorkflowExecutionDescription) -> bool:
    """Whether `desc` is a running run whose cancel was requested (it is ending)."""
    running = desc.status == WorkflowExecutionStatus.RUNNING
    return running and desc.raw_description.workflow_extended_info.cancel_requested


def quoted(text: str) -> str:
    """`text` as a string in a visibility query."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sub_agents_query(parent_workflow_id: str, condition: str) -> str:
    """The visibility query for the agents `parent_workflow_id`'s runs spawned that meet
    `condition` (their descendants too: `direct_child` keeps the children)."""
    prefix = quoted(f"{parent_workflow_id}/")
    return f"WorkflowType = 'AgentWorkflow' AND WorkflowId STARTS_WITH {prefix} AND {condition}"


def direct_child(parent_workflow_id: str, workflow_id: str) -> str | None:
    """What `workflow_id` adds to its parent's id (`<parent>/<name>`), if it is a direct
    child of `parent_workflow_id`; None for another's, or a sub-agent's sub-agent."""
    prefix = f"{parent_workflow_id}/"
    tail = workflow_id[len(prefix) :] if workflow_id.startswith(prefix) else ""
    return tail if tail and "/" not in tail else None


class EarlierAgents:
    def __init__(self, client: Client) -> None:
        self._client = client

    @activity.defn(name="agents.find_earlier")
    async def find_earlier(self, req: EarlierRequest) -> EarlierAgent | None:
        """The latest direct sub-agent of the parent's runs named (or with the id)
        `req.target`, as its latest run stands; None if there is none."""
        target = req.target.strip()
        if not TARGET_RE.match(target):
            return None
        # By agent: a name reused gets the earlier agent's workflow id in a resumed run
        # (its registry did not know the name), so one id may hold runs of two agents.
        first: dict[str, datetime] = {}
        last: dict[str, tuple[datetime, str, str]] = {}
        named = f"(AgentName = {quoted(target)} OR AgentId = {quoted(target)})"
        query = sub_agents_query(req.parent_workflow_id, named)
        async for run in self._client.list_workflows(query, limit=1000):
            if direct_child(req.parent_workflow_id, run.id) is None:
                continue
            agent = run.typed_search_attributes.get(AGENT_ID) or run.id
            first[agent] = min(first.get(agent, run.start_time), run.start_time)
            if agent not in last or run.start_time > last[agent][0]:
                last[agent] = (run.start_time, run.id, run.run_id)
        if not first:
            return None
        # R20: the latest spawn under a name wins; a resumed run is the same spawn.
        _, workflow_id, run_id = last[max(first, key=lambda a: first[a])]
        return await self._run(workflow_id, run_id)

    async def _run(self, workflow_id: str, run_id: str) -> EarlierAgent:
        run = self._client.get_workflow_handle(workflow_id, run_id=run_id)
        desc = await run.describe()
        if closing(desc):
            # Its kill is under way (its parent's stop or kill, `outlast kill`): it reads no
            # mail any more, and a message queued to it was lost while the tool said it was
            # queued. Closed, it is resumed with the message, as any ended sub-agent.
            desc = await self._closed(run)
        found = {
            "workflow_id": workflow_id,
            "run_id": desc.run_id,
            "spawn": await self._started_input(run),
        }
        if desc.status == WorkflowExecutionStatus.RUNNING:
            return EarlierAgent(**found, status="running")
        status = ENDED_AS.get(desc.status, "failed")  # type: ignore[arg-type]
        return EarlierAgent(**found, status=status, end=await run_end(self._client, desc))

    async def _closed(self, run: WorkflowHandle) -> WorkflowExecutionDescription:
        """`run`'s description once it has closed; refused if it has not in CLOSING_WAIT_S."""
        # Long-polled; however it ends (a kill is a failure to `result`), or if the poll
        # fails, the describe says where it stands.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(run.result(follow_runs=False), CLOSING_WAIT_S)
        desc = await run.describe()
        if desc.status == WorkflowExecutionStatus.RUNNING:
            raise ApplicationError(
                f"{run.id} is being stopped and has not ended in {CLOSING_WAIT_S:.0f} s; once "
                "it has, a message to it continues it",
                type=STILL_CLOSING,
                non_retryable=True,
            )
        return desc

    async def _started_input(self, handle: WorkflowHandle) -> dict:
        async for event in handle.fetch_history_events():
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            (started,) = await self._client.data_converter.decode(payloads, [dict])
            return started
        raise ApplicationError(f"{handle.id} has no history", non_retryable=True)
