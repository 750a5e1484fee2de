"""Transcript operations a workflow needs done (repair, append) and resuming a finished
agent (R66).

Both are activities because they do I/O: the transcript lives in the store, and starting a
run of a workflow that is not your child takes a Temporal client. Signal-with-start makes
"signal it if it runs, else start it" one atomic step, closing the race with an agent that
ends just as the message is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities import transcripts
from activities.result_refs import resolve_refs
from activities.run_history import run_end
from activities.store import default_store
from activities.tools.base import ImageRef
from agents.messages import Message
from agents.transcript import TranscriptRef
from agents.transcript_repair import repair_transcript


@activity.defn(name="transcript.repair")
async def repair(ref: TranscriptRef) -> TranscriptRef:
    """`ref` itself when it is valid to continue, else a repaired copy."""
    # Off the event loop: a cold chain is read blob by blob, and a repair writes (synced).
    return await asyncio.to_thread(_repair, ref)


def _repair(ref: TranscriptRef) -> TranscriptRef:
    store = default_store()
    messages = transcripts.load(store, ref)
    fixed = repair_transcript(messages)
    if list(messages) == fixed:
        return ref
    return transcripts.append(store, TranscriptRef(), fixed)


class AppendInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    transcript: TranscriptRef = TranscriptRef()
    messages: list[Message]
    images: dict[str, tuple[ImageRef, ...]] = Field(default_factory=dict)
    """tool_use_id -> the images that result shows (as a model request's `append_images`)."""


@activity.defn(name="transcript.append")
async def append(req: AppendInput) -> TranscriptRef:
    """Extend a conversation in the store; content-addressed, so a retry writes the same node.

    Lets a workflow hand several children one shared prefix by reference instead of putting
    a copy of it in each child's input, and an agent that ends before its next model call
    keep its last tool results in its conversation.
    """

    def write() -> TranscriptRef:
        store = default_store()
        filled = [resolve_refs(m, {}, store, req.images) for m in req.messages]
        return transcripts.append(store, req.transcript, filled)

    return await asyncio.to_thread(write)


CLOSING_WAIT_S = 15.0
"""How long a resume waits for the ended run it follows to close (it closes right after telling
its parent; the resume activity has 30 s)."""


class ResumeRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    workflow_id: str
    task_queue: str
    input: dict
    """The AgentInput of the new run, as JSON (this module may not import workflows)."""
    message: dict
    """The `send_message` payload that resumes it."""
    known_run_id: str | None = None


class ResumeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    started: bool
    """False when the agent was still running and simply got the message."""


CLOSE_WATCH_HEARTBEAT_S = 240.0
"""How often `await_closed` heartbeats while the runs it watches go on (its heartbeat timeout
is longer: workflows.team_carry)."""


class AgentRunState(BaseModel):
    """How the current run of an agent's workflow id stands."""

    model_config = ConfigDict(frozen=True)

    workflow_id: str
    status: str
    """RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, TIMED_OUT, or NOT_FOUND."""
    result: dict | None = None
    """A COMPLETED run's result (an AgentResult, as JSON)."""
    error: str | None = None
    usage: dict | None = None
    """What an agent's run that ended without a result (failed, killed, terminated) had
    spent, from its `status` query (an AgentUsage, as JSON; this module may not import
    workflows); None for any other run, or if the query failed."""


SPENT_QUERY_TIMEOUT = timedelta(seconds=5)
"""How long the `status` query of an ended run may take: the worker replays its history to
answer, and no worker may be there to."""


AGENT_TYPES = ("AgentWorkflow", "CoordinatorWorkflow")
"""The workflow types with a `status` query that reports usage."""


async def _spent(handle: WorkflowHandle) -> dict | None:
    """An ended agent's usage, from its `status` query; None if it cannot be read (no worker
    answers in time, or the query fails on replay)."""
    try:
        status = await handle.query("status", rpc_timeout=SPENT_QUERY_TIMEOUT)
    except (RPCError, WorkflowQueryFailedError) as e:
        activity.logger.warning("no usage for ended run %s: %s", handle.id, e)
        return None
    usage = status.get("usage") if isinstance(status, dict) else None
    return usage if isinstance(usage, dict) else None


class AgentControl:
    """Activities that need a Temporal client; the worker builds one per process."""

    def __init__(self, client: Client) -> None:
        self._client = client

    @activity.defn(name="agents.describe_agents")
    async def describe_agents(self, workflow_ids: list[str]) -> list[AgentRunState]:
        """Where each agent stands, for a parent that has waited long for their notices.

        A child that could not signal its end (terminated by an operator, or failed in a way
        that skipped its own reporting) would otherwise keep its parent waiting forever.
        """
        return list(await asyncio.gather(*map(self._describe, workflow_ids)))

    async def _describe(self, workflow_id: str) -> AgentRunState:
        handle = self._client.get_workflow_handle(workflow_id)
        try:
            desc = await handle.describe()
        except RPCError as e:
            if e.status == RPCStatusCode.NOT_FOUND:
                return AgentRunState(workflow_id=workflow_id, status="NOT_FOUND", error=str(e))
            raise
        name = desc.status.name if desc.status else "UNKNOWN"
        if name == "COMPLETED":
            result = await handle.result(follow_runs=False)
            return AgentRunState(workflow_id=workflow_id, status=name, result=result)
        if name == "RUNNING":
            return AgentRunState(workflow_id=workflow_id, status=name)
        error = f"the agent's workflow ended {name.lower()}"
        usage = None
        if desc.workflow_type in AGENT_TYPES:
            # The run described: a resume under the same id since would answer for itself.
            run = self._client.get_workflow_handle(workflow_id, run_id=desc.run_id)
            usage = await _spent(run)
        return AgentRunState(workflow_id=workflow_id, status=name, error=error, usage=usage)

    @activity.defn(name="agents.await_closed")
    async def await_closed(self, workflow_ids: list[str]) -> list[AgentRunState]:
        """Wait until the run of one of `workflow_ids` closes, then where each stands (as
        `describe_agents`). A team that continued as new has no child handle on the members
        an earlier run started: one terminated was learned of at the next liveness check,
        minutes later, while the team showed it working. Long-polls each run's end and
        heartbeats every CLOSE_WATCH_HEARTBEAT_S (each heartbeat is a billed action)."""
        waits = [asyncio.create_task(self._closed(w)) for w in workflow_ids]
        try:
            while True:
                done, _ = await asyncio.wait(
                    waits, timeout=CLOSE_WATCH_HEARTBEAT_S, return_when=asyncio.FIRST_COMPLETED
                )
                activity.heartbeat()
                if not done:
                    continue
                states = await self.describe_agents(workflow_ids)
                if any(s.status != "RUNNING" for s in states):
                    return states
                # A long poll that failed (the server away): wait on, not around in a loop.
                for i, task in enumerate(waits):
                    if task in done:
                        waits[i] = asyncio.create_task(self._closed(workflow_ids[i], delay_s=5.0))
        finally:
            for task in waits:
                task.cancel()

    async def _closed(self, workflow_id: str, delay_s: float = 0.0) -> None:
        """Returns once the run of `workflow_id` (followed through continue-as-new) has
        closed, however it ended, or its long poll failed."""
        await asyncio.sleep(delay_s)
        with contextlib.suppress(Exception):
            await self._client.get_workflow_handle(workflow_id).result(follow_runs=True)

    @activity.defn(name="agents.resume_agent")
    async def resume_agent(self, req: ResumeRequest) -> ResumeResult:
        before = await self._closed_run(req)
        message = req.message
        if before is not None and before == req.known_run_id:
            message = await self._after_unread(req.workflow_id, before, message)
        parent = (req.input.get("parent") or {}).get("workflow_id")
        handle = await self._client.start_workflow(
            "AgentWorkflow",
            req.input,
            id=req.workflow_id,
            task_queue=req.task_queue,
            start_signal="send_message",
            start_signal_args=[message],
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            # No child of its parent's in Temporal's terms: the reaper finds its parent here
            # (`outlast.orphans`) should the parent be terminated.
            memo={"parent_workflow_id": parent} if parent else None,
        )
        run_id = handle.result_run_id or ""
        # Against the run the parent knows: on a retry, the run an earlier attempt started is
        # running, and it is a new run all the same.
        return ResumeResult(run_id=run_id, started=run_id != (req.known_run_id or before))

    async def _after_unread(self, workflow_id: str, run_id: str, message: dict) -> dict:
        """`message` with the mail the ended run never read before it, as `outlast resume`
        sends a top-level agent's: a completed run stopped with mail waiting ends and counts
        it unread (someone's `outlast send` after its stop, a message that crossed it), a
        killed one had mail that came after its last model call, and a resume with only the
        new message lost it for good (`run_history.RunEnd.unanswered`)."""
        desc = await self._client.get_workflow_handle(workflow_id, run_id=run_id).describe()
        if desc.status == WorkflowExecutionStatus.RUNNING:
            return message
        unread = (await run_end(self._client, desc)).unanswered
        if not unread or not isinstance(message.get("text"), str):
            return message
        return {**message, "text": "\n\n".join([*unread, message["text"]])}

    async def _closed_run(self, req: ResumeRequest) -> str | None:
        """The agent's current run once it has closed, if it is the run the parent knows.

        The parent resumes an agent whose end it has: that run is closing, and a message
        signalled to it now would land in a run that reads no more mail (a killed one never
        does; the message was lost while the tool said it was queued). So it is waited for,
        at most CLOSING_WAIT_S an attempt, and the message starts the next run. A run the
        parent does not know (one this activity started on an earlier attempt) is not waited
        for.

        Raises:
            ApplicationError: retryable; the run has not closed by the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLOSING_WAIT_S
        handle = self._client.get_workflow_handle(req.workflow_id)
        while True:
            try:
                desc = await handle.describe()
            except RPCError as e:
                if e.status == RPCStatusCode.NOT_FOUND:
                    return None
                raise
            closing = desc.status == WorkflowExecutionStatus.RUNNING
            if not closing or desc.run_id != req.known_run_id:
                return desc.run_id
            if loop.time() >= deadline:
                # Retried (a busy worker may be slow to close it): the message must not go to
                # a run that reads no more mail.
                raise ApplicationError(f"run {desc.run_id} has ended but not closed yet")
            await asyncio.sleep(0.05)
