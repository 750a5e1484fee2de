"""The questions an agent waits with at AskUserQuestion, as a terminal shows them: `outlast
run`'s progress and live tree, and `outlast answer` without answers."""

from __future__ import annotations

from temporalio.client import WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from workflows.contracts import PendingQuestion


async def waiting_question(handle: WorkflowHandle) -> PendingQuestion | None:
    """The questions the agent waits with at AskUserQuestion, if any (None for a workflow
    that is not an agent, too)."""
    try:
        return await handle.query("question", result_type=PendingQuestion | None)
    except (RPCError, WorkflowQueryFailedError):
        return None


def question_lines(workflow_id: str, pending: PendingQuestion) -> list[str]:
    """The questions as a person answers them with `outlast answer`: numbered choices."""
    lines = [f"{pending.request_id} waits for your answer:"]
    for n, q in enumerate(pending.questions, 1):
        many = " (one or more, e.g. 1,3)" if q.multi_select else ""
        lines.append(f"{n}. {q.header}: {q.question}{many}")
        lines += [f"   {k}) {o.label}: {o.description}" for k, o in enumerate(q.options, 1)]
    choices = " ".join("<choice>" for _ in pending.questions)
    lines.append(f"answer with: outlast answer {workflow_id} {choices}")
    return lines
