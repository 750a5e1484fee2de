"""`AskUserQuestion` (spec T16): the agent asks its user 1-4 multiple-choice questions and
waits, durably, for the answers.

Carried out by the workflow: the questions wait in its state (the `question` query, the
Web UI's details) until the `answer_question` update brings the answers, which its
validator checks first, so a wrong answer is refused to whoever sent it and nothing waits on
it. Only the contracts and pure helpers live here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.markdown import escape_markdown

ASK_USER_QUESTION_TOOL = "AskUserQuestion"
MAX_TEXT = 2_000


class QuestionOption(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str = Field(
        min_length=1,
        max_length=200,
        description="The choice as the user sees and picks it: 1-5 words.",
    )
    description: str = Field(
        max_length=MAX_TEXT,
        description="What this choice means, or what picking it leads to.",
    )
    preview: str | None = Field(
        default=None,
        max_length=MAX_TEXT,
        description="Optional: something to look at for this choice (a code sketch, a layout).",
    )


class Question(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    question: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description="The complete question, clear and specific, ending with a question mark.",
    )
    header: str = Field(
        min_length=1,
        max_length=12,
        description='A very short label shown as a chip (at most 12 characters): "Auth", '
        '"Library".',
    )
    options: list[QuestionOption] = Field(
        min_length=2,
        max_length=4,
        description="2-4 distinct choices. Do not add an 'Other' choice: the user can always "
        "answer in their own words.",
    )
    multi_select: bool = Field(
        default=False,
        alias="multiSelect",
        description="Whether the user may pick more than one choice.",
    )

    @model_validator(mode="after")
    def _distinct_labels(self) -> Question:
        labels = [o.label.strip().casefold() for o in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("each option of a question needs a label of its own")
        return self


class AskUserQuestionInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: list[Question] = Field(
        min_length=1, max_length=4, description="The questions to ask: 1-4."
    )

    @model_validator(mode="after")
    def _distinct_questions(self) -> AskUserQuestionInput:
        texts = [q.question.strip() for q in self.questions]
        if len(set(texts)) != len(texts):
            raise ValueError("each question must be asked once (question texts must differ)")
        return self


class QuestionAnswers(BaseModel):
    """Input of the `answer_question` update: the answer to each question, by its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str | None = None
    """The questions answered (from the `question` query); None = whichever wait."""
    answers: dict[str, str]
    """Question text -> answer: a choice's label, several labels joined by ", " for a
    multi-select question, or the user's own words."""


def check_answers(questions: list[Question], answers: QuestionAnswers) -> str | None:
    """Why `answers` do not answer `questions`, or None: every question needs a non-empty
    answer of at most MAX_TEXT characters (it is kept in history), and nothing may answer a
    question that was not asked."""
    asked = [q.question for q in questions]
    unknown = [text for text in answers.answers if text not in asked]
    if unknown:
        return f"no question {unknown[0]!r} was asked; the questions are: " + "; ".join(
            repr(q) for q in asked
        )
    missing = [q for q in asked if not answers.answers.get(q, "").strip()]
    if missing:
        return f"question {missing[0]!r} has no answer; every question needs one"
    long = [q for q in asked if len(answers.answers[q]) > MAX_TEXT]
    if long:
        return f"the answer to {long[0]!r} is over {MAX_TEXT} characters; say it shorter"
    return None


def answers_result(questions: list[Question], answers: dict[str, str]) -> str:
    """The tool result the model reads (Claude Code's wording)."""
    pairs = ", ".join(f'"{q.question}"="{answers[q.question].strip()}"' for q in questions)
    return (
        f"User has answered your questions: {pairs}. You can now continue with the user's "
        "answers in mind."
    )


def choose(question: Question, picked: str) -> str:
    """An answer from how a person typed it at a prompt: option numbers ("2", or "1,3" for a
    multi-select question) become their labels; anything else is their own words."""
    parts = [p.strip() for p in picked.split(",")]
    words = [p for p in parts if not p.isdigit()]
    if words and len(words) < len(parts) and all(len(w) <= 2 for w in words):
        # "1,x", "1,": choices with a slip, far likelier than words of one's own so short.
        numbers = "numbers only (1,3)" if question.multi_select else "one number"
        raise ValueError(
            f"{question.header!r}: {picked!r} mixes choice numbers and words; give "
            f"{numbers}, or an answer of your own without them"
        )
    if parts and all(p.isdigit() for p in parts):
        # Only numbers: choices, never words (a mistyped 5 of 4 choices is not an answer).
        count = len(question.options)
        if wrong := [p for p in parts if not 1 <= int(p) <= count]:
            raise ValueError(
                f"{question.header!r} has choices 1 to {count}, not {', '.join(wrong)} (an "
                "answer of your own needs more than numbers)"
            )
        if len(parts) > 1 and not question.multi_select:
            raise ValueError(f"{question.header!r} takes one choice, not {picked!r}")
        if len({int(p) for p in parts}) < len(parts):
            raise ValueError(f"{question.header!r}: {picked!r} names a choice twice")
        return ", ".join(question.options[int(p) - 1].label for p in parts)
    if not picked.strip():
        raise ValueError(f"{question.header!r} needs an answer")
    return picked.strip()


def render_questions(questions: list[Question]) -> str:
    """The questions as markdown, options numbered as `choose` takes them."""
    lines = []
    for n, q in enumerate(questions, 1):
        many = " (pick one or more)" if q.multi_select else ""
        lines.append(f"{n}. **{_md(q.header)}**: {_md(q.question)}{many}")
        for k, option in enumerate(q.options, 1):
            lines.append(f"   {k}) {_md(option.label)}: {_md(option.description)}")
            if option.preview:
                # Shown as written, in a fence it cannot close (a preview is often code).
                body = option.preview.replace("~~~", "~ ~ ~")
                lines += ["", "   ~~~", *(f"   {row}" for row in body.splitlines()), "   ~~~"]
    return "\n".join(lines)


def _md(text: str) -> str:
    return escape_markdown(" ".join(text.split()))


ASK_USER_QUESTION_DESCRIPTION = """\
Use this tool when you need to ask the user questions during execution. This allows you to:
1. Gather user preferences or requirements
2. Clarify ambiguous instructions
3. Get decisions on implementation choices as you work
4. Offer choices to the user about what direction to take.

Usage notes:
- Users can always answer in their own words instead of picking a choice; do not add an \
"Other" choice.
- Use multiSelect: true to allow more than one answer to a question.
- If you recommend a specific choice, make it the first one and add "(Recommended)" at the \
end of its label.
- Ask 1-4 questions at a time, each with 2-4 choices.
- The user may take a while to answer: you wait, however long it takes, and the work is kept.

In plan mode, use this tool to clarify requirements or choose between approaches BEFORE \
finalising your plan. Do not use it to ask whether your plan is ready or whether to proceed: \
that is what ExitPlanMode is for."""
