"""AskUserQuestion in an agent's workflow (T16): the questions wait in its state, shown by
the `question` query and the Web UI's details, for the `answer_question` update.

The update's validator checks the answers against the questions before anything is
recorded: a refused answer reaches its sender as the update's failure and leaves no trace in
history, and the agent goes on waiting. The wait is durable like any other: a worker
restart or a deploy while the user thinks loses nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agents.messages import ToolResultBlock
from agents.questions import (
    AskUserQuestionInput,
    QuestionAnswers,
    answers_result,
    check_answers,
    render_questions,
)
from workflows.contracts import PendingQuestion
from workflows.loop_types import LoopState
from workflows.turns import ValidCall, error_result

STOPPED = "The user did not answer: the agent was stopped while the questions waited."


NOT_YOURS = (
    "AskUserQuestion is for the agent the user talks to; as a sub-agent you cannot reach the "
    "user. Decide on the most reasonable choice yourself and say what you chose and why in "
    "your final answer, or report the open question there."
)


async def refuse_question(call: ValidCall) -> ToolResultBlock:
    """A fork inherits its parent's tool list, AskUserQuestion included (its prompt bytes
    are its parent's): the call is refused, with what to do instead (R30)."""
    return error_result(call.block, NOT_YOURS)


class QuestionControl:
    def __init__(self, state: Callable[[], LoopState]) -> None:
        self._state = state
        self.pending: PendingQuestion | None = None
        self.answers: dict[str, str] | None = None
        self.show: Callable[[str], None] = lambda details: None

    async def ask(self, call: ValidCall, stop_requested: Callable[[], bool]) -> ToolResultBlock:
        inp: AskUserQuestionInput = call.input  # type: ignore[assignment]
        state = self._state()
        state.questions_asked += 1
        self.pending = PendingQuestion(
            request_id=f"question-{state.questions_asked}",
            questions=inp.questions,
            asked_at=workflow.now(),
        )
        self.answers = None
        wid = workflow.info().workflow_id
        self.show(
            f"## Questions waiting for an answer ({self.pending.request_id})\n\n"
            f"{render_questions(inp.questions)}\n\n---\nAnswer: `outlast answer {wid} <choice "
            "per question>` (a number, `1,3` where more than one may be picked, or your own "
            "words), or the update `answer_question`"
        )
        try:
            await workflow.wait_condition(lambda: self.answers is not None or stop_requested())
        finally:
            answers = self.answers
            self.pending, self.answers = None, None
        if answers is None:
            return error_result(call.block, STOPPED)
        return ToolResultBlock(
            tool_use_id=call.block.id, content=answers_result(inp.questions, answers)
        )

    def why_not(self, answers: QuestionAnswers) -> str | None:
        """Why `answers` cannot be taken now, or None."""
        if self.pending is None:
            if self._asked_before(answers.request_id):
                return (
                    f"{answers.request_id} is not waiting any more (it was answered, or the "
                    "agent stopped waiting); no question is waiting for an answer"
                )
            return "no question is waiting for an answer"
        if self.answers is not None:
            return f"{self.pending.request_id} is answered already"
        if answers.request_id not in (None, self.pending.request_id):
            return f"the questions waiting are {self.pending.request_id}, not {answers.request_id}"
        return check_answers(self.pending.questions, answers)

    def check(self, answers: QuestionAnswers) -> None:
        """The update's validator: refuses, with the reason, what `why_not` finds."""
        if (why := self.why_not(answers)) is not None:
            # No question yet may be one about to be asked (a script that answers early, a
            # worker whose replay has not caught up): only that one may be sent again.
            raise ApplicationError(
                f"answer refused: {why}",
                type="AnswerRefused",
                non_retryable=self.pending is not None or self._asked_before(answers.request_id),
            )

    def _asked_before(self, request_id: str | None) -> bool:
        """`request_id` names questions this run asked already: nothing waits for them, and
        sending the answer again cannot change that (it read as retryable)."""
        # Not `isdigit`: it takes "²", which `int` refuses (a review).
        found = re.fullmatch(r"question-([0-9]{1,9})", request_id or "")
        return found is not None and 0 < int(found[1]) <= self._state().questions_asked

    def answer(self, answers: QuestionAnswers) -> str:
        # Checked again: the validator ran against the state the update arrived to.
        self.check(answers)
        assert self.pending is not None
        self.answers = {q.question: answers.answers[q.question] for q in self.pending.questions}
        return self.pending.request_id
