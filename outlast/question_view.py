"""The questions an agent waits with at AskUserQuestion, as a terminal shows them: `outlast
run`'s progress and live tree, and `outlast answer` without answers."""

from __future__ import annotations

import re
from datetime import timedelta

from rich.text import Text
from temporalio.client import (
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError

from agents.questions import QuestionAnswers, choose
from outlast.terminal_lines import TerminalLines
from outlast.updates import (
    NoAnswer,
    NotYetAnswered,
    no_answer_text,
    not_yet_text,
    update_within,
)
from workflows.contracts import PendingQuestion

_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}]+")
_CONTROL_BUT_LINES = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]+")


def plain(text: str) -> str:
    """Model-written text for a terminal: one line, no escape sequences (an ESC could move
    the cursor, retitle the window or make a link) and no bidi overrides (which reorder what
    is shown)."""
    return _CONTROL.sub(" ", text).strip()


def terminal_text(text: str) -> str:
    """The same for text of several lines (an agent's answer): its newlines and tabs kept."""
    return _CONTROL_BUT_LINES.sub(" ", text)


async def waiting_question(
    handle: WorkflowHandle, rpc_timeout: timedelta | None = None
) -> PendingQuestion | None:
    """The questions the agent waits with at AskUserQuestion, if any (None for a workflow
    that is not an agent, or one that does not answer within `rpc_timeout`)."""
    try:
        return await handle.query(
            "question", result_type=PendingQuestion | None, rpc_timeout=rpc_timeout
        )
    except (RPCError, WorkflowQueryFailedError):
        return None


async def still_waiting(handle: WorkflowHandle, request_id: str) -> bool:
    """Whether the agent still waits with request `request_id`; True when that cannot be told
    (a query that fails on a running workflow: a busy or restarting worker)."""
    try:
        pending = await handle.query(
            "question", result_type=PendingQuestion | None, rpc_timeout=timedelta(seconds=5)
        )
    except (RPCError, WorkflowQueryFailedError):
        try:
            return (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        except RPCError:
            return True
    return pending is not None and pending.request_id == request_id


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


def print_question(
    console, workflow_id: str, pending: PendingQuestion, how_to_answer: bool = True
) -> None:
    """The question lines on a terminal, as text (never markup)."""
    lines = question_lines(workflow_id, pending)
    for line in lines if how_to_answer else lines[:-1]:
        console.print(line, markup=False, highlight=False)


async def prompt_answers(
    handle: WorkflowHandle, pending: PendingQuestion, console, lines: TerminalLines
) -> None:
    """Ask the person at the terminal (`outlast run` or `attach` on a TTY), one question at a
    time, and send what they answer; an answer the agent refuses is said and asked again.
    End of input leaves the questions waiting, with how to answer them later; questions
    answered elsewhere meanwhile (`outlast answer`), or an agent that stopped waiting, end
    the asking."""
    print_question(console, handle.id, pending, how_to_answer=False)

    def still_asked():
        return still_waiting(handle, pending.request_id)

    while True:
        answers: dict[str, str] = {}
        for n, q in enumerate(pending.questions, 1):
            while q.question not in answers:
                console.print(Text(f"answer {n} ({plain(q.header)}): "), end="")
                try:
                    typed = await lines.read(still_asked)
                except EOFError:
                    console.print(
                        f"left waiting: answer with `outlast answer {handle.id}`", markup=False
                    )
                    return
                if typed is None:
                    console.print(
                        f"\n{pending.request_id} answered elsewhere, or no longer waits: "
                        "not asked here any more",
                        markup=False,
                    )
                    return
                try:
                    answers[q.question] = choose(q, typed)
                except ValueError as e:
                    console.print(
                        f"{e}; a choice's number, numbers like 1,3, or your own words", markup=False
                    )
        try:
            await update_within(
                handle,
                "answer_question",
                QuestionAnswers(request_id=pending.request_id, answers=answers),
                result_type=str,
            )
        except NotYetAnswered:
            console.print(not_yet_text(handle.id, "answers"), markup=False)
            return
        except NoAnswer:
            console.print(no_answer_text(handle.id, "answers"), markup=False)
            return
        except RPCError as e:
            console.print(
                f"not sent ({e.message}): answer with `outlast answer {handle.id}`", markup=False
            )
            return
        except WorkflowUpdateFailedError as e:
            why = getattr(e.cause, "message", None) or str(e)
            gone = ("no question is waiting", "answered already", f"not {pending.request_id}")
            if any(text in why for text in gone):  # answered elsewhere meanwhile
                console.print(f"not sent: {why}", markup=False)
                return
            console.print(f"refused: {why}", markup=False)
            continue
        console.print(f"{pending.request_id} answered", markup=False)
        return
