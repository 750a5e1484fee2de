"""What waits on a person: plans for approval, questions for answers, pipeline stages for a
decision, across every running agent and pipeline (`outlast waiting`). Without it a person
with many tasks had to `show` each to find the one stuck on them (a user test, 2026-12-06).

Read by queries, so only workflows a worker answers for are seen; the ones that did not
answer in time are counted, not guessed at."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta

from pydantic import BaseModel
from temporalio.client import Client, WorkflowQueryFailedError
from temporalio.service import RPCError

from outlast.question_view import plain
from workflows.contracts import PendingPlan, PendingQuestion
from workflows.pattern_contracts import PipelineView

RUNNING = (
    'ExecutionStatus = "Running" AND WorkflowType IN '
    '("AgentWorkflow", "CoordinatorWorkflow", "PipelineWorkflow")'
)
ASKED_AT_ONCE = 16
"""Queries in flight at once: each may replay a workflow its worker does not hold."""


class Waiting(BaseModel):
    workflow_id: str
    kind: str
    """`plan`, `question` or `stage`."""
    what: str
    """One line: the plan's first line, the first question, the stage and attempt."""
    command: str
    """The command that answers it (approves it, for a plan or a stage)."""
    other: str = ""
    """The command that decides the other way (a rejection), if there is one."""
    read: str = ""
    """The command that shows what is to be decided, where the item does not."""
    since: datetime | None = None


class WaitingList(BaseModel):
    waiting: list[Waiting]
    unanswered: list[str]
    """Running workflows whose worker did not answer in time (none runs, or it is busy)."""


async def waiting_on_people(client: Client, within_s: float = 5.0, limit: int = 500) -> WaitingList:
    """Everything running that waits on a person, oldest first."""
    rows = []
    async for w in client.list_workflows(RUNNING, limit=limit):
        rows.append((w.id, w.run_id, w.workflow_type))
    gate = asyncio.Semaphore(ASKED_AT_ONCE)
    deadline = asyncio.get_running_loop().time() + within_s

    async def ask(workflow_id: str, run_id: str | None, kind: str) -> list[Waiting] | None:
        async with gate:
            left = deadline - asyncio.get_running_loop().time()
            if left < 0.1:
                return None
            handle = client.get_workflow_handle(workflow_id, run_id=run_id)
            try:
                if kind == "PipelineWorkflow":
                    view = await handle.query(
                        "pipeline", result_type=PipelineView, rpc_timeout=timedelta(seconds=left)
                    )
                    found = stage_waits(workflow_id, view)
                    if found and view.awaiting_approval:
                        # Since its stage's agent ended: `since` was null for a stage (a
                        # user test, 2026-12-07).
                        attempt = view.awaiting_attempt or 1
                        agent = stage_agent(workflow_id, view.awaiting_approval, attempt)
                        left = max(deadline - asyncio.get_running_loop().time(), 0.1)
                        with contextlib.suppress(RPCError):
                            ended = await client.get_workflow_handle(agent).describe(
                                rpc_timeout=timedelta(seconds=left)
                            )
                            found[0].since = ended.close_time
                    return found
                plan, question = await asyncio.gather(
                    handle.query(
                        "plan", result_type=_PlanOnly, rpc_timeout=timedelta(seconds=left)
                    ),
                    handle.query(
                        "question",
                        result_type=PendingQuestion | None,
                        rpc_timeout=timedelta(seconds=left),
                    ),
                )
            except (RPCError, WorkflowQueryFailedError):
                return None
            return agent_waits(workflow_id, plan.pending, question)

    answers = await asyncio.gather(*(ask(*row) for row in rows))
    waiting = [w for found in answers if found for w in found]
    unanswered = [row[0] for row, found in zip(rows, answers, strict=True) if found is None]
    far_past = datetime.min.replace(tzinfo=None)
    waiting.sort(key=lambda w: w.since.replace(tzinfo=None) if w.since else far_past)
    return WaitingList(waiting=waiting, unanswered=unanswered)


class _PlanOnly(BaseModel):
    """The `plan` query's answer, read for its pending plan only."""

    pending: PendingPlan | None = None


def agent_waits(
    workflow_id: str, plan: PendingPlan | None, question: PendingQuestion | None
) -> list[Waiting]:
    """A plan waits on a person only when the person approves it (a sub-agent's waits for
    its parent, a teammate's for its lead)."""
    found = []
    if plan is not None and plan.approver == "the user":
        found.append(
            Waiting(
                workflow_id=workflow_id,
                kind="plan",
                what=f"{plan.request_id}: {plain(first_line(plan.plan))[:100]}",
                command=f"outlast approve {workflow_id}",
                other=f"outlast reject {workflow_id} --feedback '...'",
                read=f"{plan.plan_file} (or `outlast attach {workflow_id}`)",
                since=plan.requested_at,
            )
        )
    if question is not None and question.questions:
        asked = question.questions[0].question
        more = len(question.questions) - 1
        found.append(
            Waiting(
                workflow_id=workflow_id,
                kind="question",
                what=plain(asked)[:100] + (f" (and {more} more)" if more else ""),
                command=f"outlast answer {workflow_id}",
                since=question.asked_at,
            )
        )
    return found


def first_line(plan: str) -> str:
    """What a plan says first: its first line that is not a heading ("# Plan" says nothing),
    else its first line."""
    lines = [line.strip() for line in plan.splitlines() if line.strip()]
    said = next((line for line in lines if not line.startswith("#")), None)
    return said or (lines[0] if lines else "(empty plan)")


def stage_agent(workflow_id: str, stage: str, attempt: int) -> str:
    """The workflow id of a pipeline stage's agent (as workflows/pipeline.py names it)."""
    return f"{workflow_id}/{stage}" + (f"-{attempt}" if attempt > 1 else "")


def stage_waits(workflow_id: str, view: PipelineView) -> list[Waiting]:
    """A stage waiting for a decision; its output is read with `outlast transcript` on the
    stage's agent (`<pipeline>/<stage>`, `-<attempt>` from the second attempt on)."""
    if not view.awaiting_approval:
        return []
    stage, attempt = view.awaiting_approval, view.awaiting_attempt or 1
    agent = stage_agent(workflow_id, stage, attempt)
    decided = f"{workflow_id} {stage} --attempt {attempt}"
    return [
        Waiting(
            workflow_id=workflow_id,
            kind="stage",
            what=f"{stage}, attempt {attempt}",
            command=f"outlast approve {decided}",
            other=f"outlast reject {decided} --feedback '...' (add --rerun to run it again)",
            read=f"outlast transcript {agent}",
        )
    ]


def waiting_lines(found: WaitingList) -> list[str]:
    """`outlast waiting`'s text: one block per item, then who did not answer."""
    lines = []
    for w in found.waiting:
        lines.append(f"{w.workflow_id}  {w.kind}: {w.what}")
        if w.read:
            lines.append(f"  read it: {w.read}")
        lines.append(f"  {w.command}")
        if w.other:
            lines.append(f"  or: {w.other}")
    if not found.waiting:
        # Not "nothing": a workflow that did not answer may wait on you (a user test,
        # 2026-12-07: it read "nothing waits on you" with a stage waiting, its worker dead).
        some = " of those that answered" if found.unanswered else ""
        lines.append(f"nothing waits on you{some}")
    if found.unanswered:
        shown = ", ".join(found.unanswered[:5]) + (" ..." if len(found.unanswered) > 5 else "")
        lines.append(
            f"{len(found.unanswered)} running workflow(s) did not answer in time (is a worker "
            f"running? `outlast worker`): {shown}"
        )
    return lines
