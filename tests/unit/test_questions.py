import pytest
from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from agents.questions import (
    AskUserQuestionInput,
    Question,
    QuestionAnswers,
    answers_result,
    check_answers,
    choose,
    render_questions,
)
from agents.tool_filter import filter_tools_for_agent
from workflows.loop_types import LoopState
from workflows.question_control import QuestionControl
from workflows.tool_pool import BASE_TOOLS
from workflows.turns import describe_validation_error


def option(label: str) -> dict:
    return {"label": label, "description": f"about {label}"}


def question(text: str = "Which one?", *labels: str, many: bool = False) -> dict:
    return {
        "question": text,
        "header": "Pick",
        "options": [option(x) for x in labels or ("A", "B")],
        "multiSelect": many,
    }


def asked(*questions: dict) -> list[Question]:
    return AskUserQuestionInput.model_validate({"questions": list(questions)}).questions


@pytest.mark.parametrize(
    ("questions", "expected"),
    [
        ([], "`questions` is invalid: List should have at least 1 item"),
        ([question(f"Q{i}?") for i in range(5)], "at most 4 items"),
        ([question("Q?", "only")], "`questions.0.options` is invalid"),
        ([question("Q?", "A", "a")], "needs a label of its own"),
        ([question("Same?"), question("Same?")], "must be asked once"),
        ([{**question(), "header": "A header far too long"}], "`questions.0.header` is invalid"),
        ([{**question(), "multi": True}], "unexpected parameter `questions.0.multi`"),
    ],
)
def test_questions_that_do_not_fit_say_what_to_fix(questions, expected):
    with pytest.raises(ValidationError) as bad:
        AskUserQuestionInput.model_validate({"questions": questions})
    assert expected in describe_validation_error("AskUserQuestion", bad.value)


def test_every_question_needs_an_answer_and_nothing_else_is_taken():
    qs = asked(question("One?"), question("Two?"))
    assert check_answers(qs, QuestionAnswers(answers={"One?": "A", "Two?": "my own"})) is None
    assert "'Two?' has no answer" in check_answers(qs, QuestionAnswers(answers={"One?": "A"}))
    blank = QuestionAnswers(answers={"One?": "A", "Two?": "  "})
    assert "'Two?' has no answer" in check_answers(qs, blank)
    stray = QuestionAnswers(answers={"One?": "A", "Two?": "B", "Three?": "C"})
    assert "no question 'Three?' was asked" in check_answers(qs, stray)


def test_a_person_picks_by_number_or_says_it_in_their_own_words():
    one, many = asked(question("One?", "A", "B", "C"), question("Many?", "X", "Y", "Z", many=True))
    assert choose(one, "2") == "B" and choose(one, " my way ") == "my way"
    assert choose(many, "1, 3") == "X, Z" and choose(many, "4 at most") == "4 at most"
    assert choose(many, "version 2, 3") == "version 2, 3"  # words of one's own
    for slip, said in (("1,1", "names a choice twice"), ("1,x", "mixes choice numbers")):
        with pytest.raises(ValueError, match=said):
            choose(many, slip)  # a user test, 2026-12-05: "1,1" was "X, X", "1,x" words
    # Only numbers are choices: one that is not (a typo, most likely) is refused, not sent.
    with pytest.raises(ValueError, match="'Pick' has choices 1 to 3, not 4 "):
        choose(many, "4")
    with pytest.raises(ValueError, match="not 0, 7"):
        choose(many, "0,2,7")
    with pytest.raises(ValueError, match="takes one choice"):
        choose(one, "1,2")
    with pytest.raises(ValueError, match="needs an answer"):
        choose(one, " ")


def test_the_model_reads_each_answer_beside_its_question_in_the_order_asked():
    qs = asked(question("One?"), question("Two?"))
    text = answers_result(qs, {"Two?": "B", "One?": "A "})
    assert text == (
        'User has answered your questions: "One?"="A", "Two?"="B". You can now continue with '
        "the user's answers in mind."
    )


def test_the_questions_render_as_numbered_choices_with_model_text_escaped():
    [q] = asked(question("Use `rm -rf`?", "**Yes**", "No", many=True))
    assert render_questions([q]).splitlines() == [
        r"1. **Pick**: Use \`rm -rf\`? (pick one or more)",
        r"   1) \*\*Yes\*\*: about \*\*Yes\*\*",
        "   2) No: about No",
    ]


def test_only_a_top_level_agent_may_ask_a_person():
    """Layer 1 (R30): no sub-agent, built-in or custom, sync or async, gets it."""
    for is_built_in in (True, False):
        for is_async in (True, False):
            tools = filter_tools_for_agent(
                BASE_TOOLS, is_built_in=is_built_in, is_async=is_async, permission_mode=None
            )
            assert "AskUserQuestion" not in tools and "TodoWrite" in tools
    assert "AskUserQuestion" in BASE_TOOLS


def test_a_preview_shows_under_its_choice_as_written_and_cannot_break_out():
    q = question("Layout?", "Grid", "List")
    q["options"][0]["preview"] = "a | b\n~~~\n**c**"
    [parsed] = asked(q)
    lines = render_questions([parsed]).splitlines()
    at = lines.index("   1) Grid: about Grid")
    assert lines[at + 1 : at + 7] == ["", "   ~~~", "   a | b", "   ~ ~ ~", "   **c**", "   ~~~"]


def test_the_terminal_gets_the_model_s_text_without_escape_sequences():
    from outlast.question_view import question_lines
    from workflows.contracts import PendingQuestion

    q = question("Pick\x1b]8;;http://x\x07 one?", "A\x1b[2J", "B")
    q["options"][0]["preview"] = "line 1\nline 2"
    pending = PendingQuestion(request_id="question-1", questions=asked(q))
    lines = question_lines("wf", pending)
    assert "\x1b" not in "".join(lines)
    assert lines[1] == "1. Pick: Pick ]8;;http://x  one?"
    assert lines[2] == "   1) A [2J: about A [2J"
    assert lines[3:5] == ["        | line 1", "        | line 2"]


def test_only_an_agent_a_person_started_is_user_facing():
    """Pattern agents and forks skip the layer-1 filter (their tools come from their pattern
    or their parent): `user_facing` is what keeps AskUserQuestion from them."""
    from workflows.agent_setup import user_facing
    from workflows.contracts import AgentInput, Lineage, ParentLink, Workspace

    base = AgentInput(prompt="x", workspace=Workspace(root="/w", host_queue="h"))
    assert user_facing(base)
    stage = Lineage(parent_workflow_id="pipe-1", pattern="pipeline")
    implementer = ParentLink(workflow_id="verified-1", agent_id="a")
    for other in (
        {"lineage": stage},
        {"parent": implementer},
        {"lineage": Lineage(depth=1)},
    ):
        assert not user_facing(base.model_copy(update=other)), other


@pytest.mark.parametrize(
    ("request_id", "sent_again_may_help"),
    [
        (None, True),
        ("question-3", True),
        ("question-2", False),
        ("question-1", False),
        ("question-²", True),
        ("question-" + "9" * 5000, True),
    ],
)
def test_an_answer_when_nothing_waits_is_retryable_only_if_its_question_may_yet_come(
    request_id, sent_again_may_help
):
    """An answer to questions asked and answered already read `retryable: true`: a script
    that retries refusals it is told may pass would have sent it for good."""
    control = QuestionControl(lambda: LoopState(questions_asked=2))
    with pytest.raises(ApplicationError) as refused:
        control.check(QuestionAnswers(request_id=request_id, answers={"q": "a"}))
    assert refused.value.non_retryable is not sent_again_may_help
    assert refused.value.message.endswith("no question is waiting for an answer")
    if not sent_again_may_help:
        assert refused.value.message == (
            f"answer refused: {request_id} is not waiting any more (it was answered, or the "
            "agent stopped waiting); no question is waiting for an answer"
        )
