"""`outlast answer`: the user's answers to the questions an agent waits with at
AskUserQuestion (T16), sent as the `answer_question` update, which refuses what does not fit
before anything is recorded."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import typer
from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError

from activities.resume import AGENT_TYPES
from agents.questions import QuestionAnswers, choose
from outlast.cli_base import app, console, fail, server_said
from outlast.cli_steer import run_update, running_workflow
from outlast.question_view import plain, print_question
from outlast.silence import unanswered
from workflows.contracts import PendingQuestion


@app.command()
def answer(
    workflow_id: str = typer.Argument(..., help="The agent waiting for answers."),
    choices: list[str] = typer.Argument(
        None,
        help="One per question, in order: a choice's number, numbers joined by commas where "
        "more than one may be picked (1,3), or your own words. None: show the questions.",
    ),
) -> None:
    """Answer the questions an agent asks with AskUserQuestion (or show them)."""
    asyncio.run(_answer(workflow_id, choices or []))


QUESTION_QUERY_TIMEOUT = timedelta(seconds=10)


async def _answer(workflow_id: str, choices: list[str]) -> None:
    handle, kind = await running_workflow(workflow_id, "; no question waits in it", asks=True)
    if kind not in AGENT_TYPES:
        # Asked, it would answer with the SDK's words for a missing query handler.
        fail(
            f"{workflow_id} is a {kind}, which asks no questions of its own; answer the agent "
            f"that asks (its workflow id is in `outlast show {workflow_id}`)."
        )
    try:
        # A live worker answers in moments; a dead one the server still lists never does (it
        # waited 50 s for the SDK's "Timeout expired", or the server's "consistent query
        # buffer is full": a user test, 2026-12-06).
        pending = await handle.query(
            "question", result_type=PendingQuestion | None, rpc_timeout=QUESTION_QUERY_TIMEOUT
        )
    except RPCError as e:
        if unanswered(e):
            fail(
                f"no worker answered for {workflow_id} within "
                f"{QUESTION_QUERY_TIMEOUT.seconds} s ({e.message}): nothing was sent. Is one "
                "running? Start one with `outlast worker` (or `outlast dev`), then try again."
            )
        fail(server_said(workflow_id, e))
    except WorkflowQueryFailedError as e:
        fail(f"{workflow_id} asks no questions ({e}): only an agent does.")
    if pending is None:
        fail(f"no question is waiting for an answer in {workflow_id}.")
    if not choices:
        print_question(console, workflow_id, pending)
        return
    questions = pending.questions
    if len(choices) != len(questions):
        fail(
            f"{len(questions)} question(s) wait and {len(choices)} answer(s) were given: one "
            f"per question, in order (`outlast answer {workflow_id}` shows them)."
        )
    try:
        answers = {q.question: choose(q, c) for q, c in zip(questions, choices, strict=True)}
    except ValueError as e:
        fail(str(e))
    payload = QuestionAnswers(request_id=pending.request_id, answers=answers)
    done = await run_update(handle, workflow_id, "answer_question", payload)
    for q in questions:
        console.print(f"{plain(q.header)}: {plain(answers[q.question])}", markup=False)
    console.print(f"{done} of {workflow_id} answered")
