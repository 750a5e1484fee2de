"""The questions an agent waits with at AskUserQuestion, as a terminal shows them: `outlast
run`'s progress and live tree, and `outlast answer` without answers."""

from __future__ import annotations

import re

from temporalio.client import WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from workflows.contracts import PendingQuestion

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def plain(text: str) -> str:
    """Model-written text for a terminal: one line, no escape sequences (an ESC could move
    the cursor, retitle the window or make a link)."""
    return _CONTROL.sub(" ", text).strip()


async def waiting_question(handle: WorkflowHandle) -> PendingQuestion | None:
    """The questions the agent waits with at AskUserQuestion, if any (None for a workflow
    that is not an agent, too)."""
    try:
        return await handle.query("question", result_type=PendingQuestion | None)
    except (RPCError, WorkflowQueryFailedError):
        return None


def question_lines(workflow_id: str, pending: PendingQuestion) -> list[str]:
    """The questions as a person answers them with `outlast answer`: numbered choices, the
    model's text with its control characters taken out (print them with `markup=False`)."""
    lines = [f"{pending.request_id} waits for your answer:"]
    for n, q in enumerate(pending.questions, 1):
        many = " (one or more, e.g. 1,3)" if q.multi_select else ""
        lines.append(f"{n}. {plain(q.header)}: {plain(q.question)}{many}")
        for k, o in enumerate(q.options, 1):
            lines.append(f"   {k}) {plain(o.label)}: {plain(o.description)}")
            lines += [f"        | {plain(row)}" for row in (o.preview or "").splitlines()[:12]]
    choices = " ".join("<choice>" for _ in pending.questions)
    lines.append(f"answer with: outlast answer {workflow_id} {choices}")
    return lines
