"""A plan an agent waits with at ExitPlanMode, as `outlast run` and `attach` show it.

They showed `waiting` and nothing else: not the plan, not that it waits for approval, not
the commands that give it (a user test, 2026-12-05).
"""

from __future__ import annotations

from datetime import timedelta

from rich.markup import escape
from temporalio.client import WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from outlast.question_view import plain, terminal_text
from workflows.contracts import PendingPlan, PlanView

PLAN_LINES = 20
"""Lines of the plan shown; the rest is in its file."""


async def waiting_plan(
    handle: WorkflowHandle, rpc_timeout: timedelta | None = None
) -> PendingPlan | None:
    """The plan the agent waits with, if any (None for a workflow that is not an agent, or
    one that does not answer within `rpc_timeout`)."""
    try:
        return (await handle.query("plan", result_type=PlanView, rpc_timeout=rpc_timeout)).pending
    except (RPCError, WorkflowQueryFailedError):
        return None


def plan_lines(workflow_id: str, pending: PendingPlan) -> list[str]:
    """Markup lines: whose approval it waits for, the plan's first PLAN_LINES lines, and the
    commands that approve it or send it back (when the approver is the person)."""
    text = terminal_text(pending.plan).splitlines() or ["(empty plan)"]
    lines = [f"[bold yellow]plan waits for approval by {escape(plain(pending.approver))}:[/]"]
    lines += [f"  {escape(line)}" for line in text[:PLAN_LINES]]
    if len(text) > PLAN_LINES:
        more = len(text) - PLAN_LINES
        lines.append(f"  [dim]… {more} more lines in {escape(pending.plan_file)}[/]")
    if pending.approver == "the user":
        lines.append(
            f"[dim]approve: outlast approve {escape(workflow_id)} · send it back: outlast "
            f"reject {escape(workflow_id)} --feedback '...'[/]"
        )
    return lines
