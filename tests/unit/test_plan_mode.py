"""Plan mode (R75-R80): reminder texts and cadence, slugs, tool results, approval messages."""

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from agents.control_tools import SendMessageInput
from agents.plan_mode import (
    ENTER_PLAN_MODE_DESCRIPTION,
    EXIT_PLAN_MODE_DESCRIPTION,
    FULL_REMINDER_EVERY_N_ATTACHMENTS,
    PLAN_EXITED_REMINDER,
    PLAN_MODE_CONSTRAINT,
    TURNS_BETWEEN_ATTACHMENTS,
    AllowedPrompt,
    EnterPlanModeInput,
    ExitPlanModeInput,
    PlanApprovalResponse,
    approved_plan_result,
    as_the_approver_reads_it,
    awaiting_lead_text,
    parse_plan_approval_request,
    parse_plan_approval_response,
    plan_approval_request_text,
    plan_approval_response_text,
    plan_exited_reminder,
    plan_mode_reminder,
    plan_reentry_reminder,
    plan_request_id,
    plan_slug,
    rejected_plan_result,
    reminder_due,
)
from agents.team_protocol import parse_shutdown_response

PATH = "/home/u/.claude/plans/brave-quiet-river.md"


def test_constraint_is_verbatim():
    assert PLAN_MODE_CONSTRAINT == (
        "Plan mode is active. The user indicated that they do not want you to execute yet -- "
        "you MUST NOT make any edits (with the exception of the plan file mentioned below), "
        "run any non-readonly tools (including changing configs or making commits), or "
        "otherwise make any changes to the system. This supercedes any other instructions you "
        "have received."
    )


def is_reminder(text: str) -> bool:
    return text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")


def test_full_reminder_has_constraint_plan_file_and_five_phases():
    text = plan_mode_reminder(PATH, False, full=True)
    assert is_reminder(text)
    assert PLAN_MODE_CONSTRAINT in text
    assert f"No plan file exists yet. Create it at {PATH} with Write." in text
    assert "only file you are allowed to edit" in text
    for phase in ("1. Initial understanding", "2. Design", "3. Review", "4. Final plan", "5."):
        assert phase in text
    assert text.index("1. Initial") < text.index("2. Design") < text.index("5. Call ExitPlanMode")
    assert "Explore" in text and "Plan sub-agents" in text
    assert "AskUserQuestion" in text and "Never ask for approval of the plan any other way" in text


def test_full_reminder_for_an_existing_plan_edits_it():
    text = plan_mode_reminder(PATH, True, full=True)
    assert f"A plan file already exists at {PATH}. Read it and make incremental edits" in text
    assert "No plan file exists yet" not in text


def test_agent_counts_are_configurable():
    text = plan_mode_reminder(PATH, False, full=True, max_explore_agents=5, max_plan_agents=2)
    assert "at most 5 in parallel" in text and "(at most 2)" in text


def test_sparse_reminder_is_short_and_names_the_plan():
    text = plan_mode_reminder(PATH, True, full=False)
    assert is_reminder(text)
    assert PATH in text and "Plan mode is still active" in text
    assert "1. Initial understanding" not in text
    assert len(text) < len(PLAN_MODE_CONSTRAINT) + 200


@pytest.mark.parametrize("full", [True, False])
def test_subagent_reminder_has_no_phases(full):
    text = plan_mode_reminder(PATH, False, full=full, subagent=True)
    assert is_reminder(text)
    assert PLAN_MODE_CONSTRAINT in text and PATH in text
    assert "only if your task asks for it" in text
    assert "Initial understanding" not in text and "ExitPlanMode" not in text


def test_a_subagent_that_asks_its_lead_is_told_to_call_exit_plan_mode():
    """A worker or teammate started in plan mode keeps ExitPlanMode (R32) to ask its lead;
    without being told, a model answered with its plan and ended, never asking."""
    text = plan_mode_reminder(PATH, True, full=False, subagent=True, approver="lead")
    assert "Initial understanding" not in text
    assert "call ExitPlanMode: your lead (lead) approves it before you change anything" in text


def test_exit_and_reentry_reminders():
    exited = plan_exited_reminder(PATH)
    assert is_reminder(exited)
    assert PLAN_EXITED_REMINDER.format(plan_path=PATH) in exited
    assert exited.startswith(
        "<system-reminder>\nYou have exited plan mode. You can now make edits, run tools, and "
        f"take actions. The plan file is at {PATH}"
    )
    again = plan_reentry_reminder(PATH)
    assert is_reminder(again) and PATH in again
    assert "Read it" in again and "overwrite" in again and "refine" in again


def test_cadence_constants():
    assert TURNS_BETWEEN_ATTACHMENTS == 5
    assert FULL_REMINDER_EVERY_N_ATTACHMENTS == 5


def test_cadence_over_thirteen_turns():
    attachments, seen = 0, []
    for turn in range(13):
        due = reminder_due(turn, attachments)
        seen.append(due)
        attachments += due is not None
    assert seen == [
        "full", None, None, None, None,
        "sparse", None, None, None, None,
        "sparse", None, None,
    ]  # fmt: skip
    assert attachments == 3


def test_every_fifth_attachment_is_full():
    kinds = [reminder_due(5 * (n + 1), n + 1) for n in range(11)]  # attachments #2..#12
    assert [i + 2 for i, k in enumerate(kinds) if k == "full"] == [6, 11]
    assert reminder_due(0, 7) == "full"  # the first turn (re-entry too) is always full


def test_cadence_rejects_negative_counters():
    with pytest.raises(ValueError):
        reminder_due(-1, 0)
    with pytest.raises(ValueError):
        reminder_due(0, -1)


@pytest.mark.parametrize("bits", [0, 1, 31, 32, 12345, 2**15 - 1, 2**40 + 7])
def test_slug_is_deterministic_three_words(bits):
    slug = plan_slug(bits)
    assert slug == plan_slug(bits)
    words = slug.split("-")
    assert len(words) == 3 and all(w.isalpha() and w.islower() for w in words)


def test_slugs_cover_the_word_lists():
    assert plan_slug(0) == "brave-quiet-river"
    slugs = {plan_slug(b) for b in range(2**15)}
    assert len(slugs) == 2**15
    for i in range(3):
        assert len({s.split("-")[i] for s in slugs}) == 32


def test_approved_result_carries_the_plan():
    plan = "# Plan\n1. Do it"
    assert approved_plan_result(plan, PATH) == (
        "User has approved your plan. You can now start coding. Start with updating your todo "
        f"list if applicable\n\nYour plan has been saved to: {PATH}\nYou can refer back to it "
        f"if needed during implementation.\n\n## Approved Plan:\n{plan}"
    )
    edited = approved_plan_result(plan, PATH, edited=True)
    assert f"## Approved Plan (edited by user):\n{plan}" in edited


def test_rejected_result_quotes_feedback():
    text = rejected_plan_result("add error handling")
    assert "rejected your plan" in text and "keep planning" in text
    assert "add error handling" in text
    assert "Revise the plan file" in text and "ExitPlanMode again" in text
    empty = rejected_plan_result("  ")
    assert "no reason" in empty and "ExitPlanMode again" in empty


def test_awaiting_lead_text():
    text = awaiting_lead_text("team-lead")
    assert "team-lead" in text and "Wait" in text and "until the approval arrives" in text


def test_enter_plan_mode_takes_no_parameters():
    EnterPlanModeInput.model_validate({})
    with pytest.raises(ValidationError):
        EnterPlanModeInput.model_validate({"plan": "x"})


def test_exit_plan_mode_input():
    assert ExitPlanModeInput.model_validate({}).allowedPrompts == []
    got = ExitPlanModeInput.model_validate(
        {"allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]}
    )
    assert got.allowedPrompts == [AllowedPrompt(tool="Bash", prompt="run tests")]
    assert set(ExitPlanModeInput.model_json_schema()["properties"]) == {"allowedPrompts"}
    for bad in (
        {"plan": "my plan"},
        {"allowedPrompts": [{"tool": "Edit", "prompt": "x"}]},
        {"allowedPrompts": [{"tool": "Bash", "prompt": "x", "extra": 1}]},
    ):
        with pytest.raises(ValidationError):
            ExitPlanModeInput.model_validate(bad)


def test_descriptions():
    assert "proactively" in ENTER_PLAN_MODE_DESCRIPTION
    assert "approval" in ENTER_PLAN_MODE_DESCRIPTION
    assert "plan file" in EXIT_PLAN_MODE_DESCRIPTION
    assert "do not pass the plan" in EXIT_PLAN_MODE_DESCRIPTION
    assert "Never ask whether the plan is okay" in EXIT_PLAN_MODE_DESCRIPTION


def test_approval_request_round_trip():
    text = plan_approval_request_text("plan-1", "# Plan", PATH)
    assert json.loads(text) == {
        "type": "plan_approval_request",
        "request_id": "plan-1",
        "plan": "# Plan",
        "plan_path": PATH,
    }
    request = parse_plan_approval_request(text)
    assert request is not None and request.plan == "# Plan" and request.plan_path == PATH
    assert parse_plan_approval_request("please approve") is None
    assert parse_plan_approval_request(plan_approval_response_text("plan-1", True)) is None


def test_approval_response_round_trip():
    yes = plan_approval_response_text("plan-1", True)
    assert json.loads(yes) == {
        "type": "plan_approval_response",
        "request_id": "plan-1",
        "approve": True,
    }
    assert parse_plan_approval_response(yes, "plan-1") == PlanApprovalResponse(
        type="plan_approval_response", request_id="plan-1", approve=True
    )
    no = parse_plan_approval_response(
        plan_approval_response_text("plan-1", False, "split step 2"), "plan-1"
    )
    assert no is not None and not no.approve and no.feedback == "split step 2"


@pytest.mark.parametrize(
    "text",
    [
        "looks good to me",
        "[1, 2]",
        json.dumps({"type": "plan_approval_response", "request_id": "other", "approve": True}),
        json.dumps({"request_id": "plan-1", "approve": True}),
        json.dumps({"type": "shutdown_response", "request_id": "plan-1", "approve": True}),
        json.dumps({"type": "plan_approval_response", "request_id": "plan-1"}),
        json.dumps({"type": "plan_approval_response", "request_id": "plan-1", "approve": "yes"}),
        json.dumps({"type": "plan_approval_response", "request_id": "plan-1", "approve": 1}),
    ],
)
def test_other_mail_is_not_an_answer(text):
    assert parse_plan_approval_response(text, "plan-1") is None


def test_an_approver_reads_how_to_answer_a_plan_request_and_nothing_else_changes():
    request = plan_approval_request_text("plan-3", "PLAN", "/p/plan.md")
    shown = as_the_approver_reads_it(request)
    assert shown.startswith(request) and "SendMessage" in shown
    example = shown.split("message ", 1)[1].split(" to approve", 1)[0]
    answer = parse_plan_approval_response(example, "plan-3")
    assert answer is not None and answer.approve
    assert as_the_approver_reads_it("just words") == "just words"


def test_send_message_takes_an_object_as_its_json():
    answer = {"type": "plan_approval_response", "request_id": "plan-1", "approve": True}
    sent = SendMessageInput.model_validate({"to": "careful", "message": answer})
    assert json.loads(sent.text) == answer
    assert SendMessageInput(to="x", message="hi").text == "hi"
    for empty in ("  ", {}):
        with pytest.raises(ValidationError):
            SendMessageInput.model_validate({"to": "x", "message": empty})


def test_a_shutdown_answer_sent_as_an_object_is_read_as_its_json():
    """T9 lets SendMessage carry an object; a teammate's shutdown_response is one."""
    answer = {"type": "shutdown_response", "request_id": "shutdown-1", "approve": True}
    sent = SendMessageInput.model_validate({"to": "team", "message": answer})
    read = parse_shutdown_response(sent.text, ["shutdown-1"])
    assert not isinstance(read, str) and read.approve


def test_a_plan_file_name_another_plan_has_is_not_taken(tmp_path, monkeypatch):
    """R76: up to 10 names avoid an existing file, then a random one."""
    from activities import plan_file

    monkeypatch.setattr(plan_file, "plans_dir", lambda: tmp_path)
    first = plan_file._prepare("brave-quiet-river-abc")
    assert first == str(tmp_path.resolve() / "brave-quiet-river-abc.md")
    Path(first).write_text("another agent's plan")
    assert plan_file._prepare("brave-quiet-river-abc").endswith("brave-quiet-river-abc-2.md")
    for n in range(2, 11):
        (tmp_path / f"brave-quiet-river-abc-{n}.md").write_text("taken")
    last = Path(plan_file._prepare("brave-quiet-river-abc"))
    assert not last.exists() and last.name.startswith("brave-quiet-river-abc-")


def test_a_resumed_run_s_plan_requests_are_not_the_first_run_s():
    first = [plan_request_id(n) for n in (1, 2)]
    assert first == ["plan-1", "plan-2"]
    resumed = [plan_request_id(n, 2) for n in (1, 2)]
    assert resumed == ["plan-1-run2", "plan-2-run2"]
    assert (
        parse_plan_approval_response(plan_approval_response_text("plan-1", True), resumed[0])
        is None
    )


def test_an_earlier_run_s_plan_file_is_said_to_maybe_hold_its_plan():
    """A resumed run's stamps may not show the plan file it wrote: it was told to create it
    with Write, which the tool then refused as unread (a user test, 2026-12-06)."""
    from agents.plan_mode import plan_mode_reminder

    full = plan_mode_reminder("/p/plan.md", None, full=True)
    assert "Your previous run's plan may be in it. Read it first" in full
    assert "No plan file exists yet" not in full and "already exists" not in full
    sub = plan_mode_reminder("/p/plan.md", None, full=False, subagent=True)
    assert "It may hold your previous run's plan: read it before you change it." in sub
    assert "does not exist yet" not in sub
    assert "It does not exist yet." in plan_mode_reminder("/p", False, full=False, subagent=True)
