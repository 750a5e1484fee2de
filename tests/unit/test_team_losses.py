"""A teammate lost while the team works: which ends count, its tasks put back, the note."""

from agents.team_tasks import TeamTask
from workflows.pattern_contracts import MemberOutcome, ShutdownAnswer
from workflows.team_losses import approval_reason, loss_text, lost, unassigned


def outcome(status: str = "killed", **kw) -> MemberOutcome:
    return MemberOutcome(
        name="w1", agent_type="general-purpose", workflow_id="t/w1", status=status, **kw
    )


def test_which_ends_are_losses():
    assert lost(outcome("killed")) and lost(outcome("failed", error="boom"))
    assert lost(outcome("completed", stopped=True))
    assert lost(outcome("completed"), max_turns_reached=True)
    # Completed on the team's word (its end, a shutdown it approved): no news to the lead.
    assert not lost(outcome("completed"))


def test_its_unfinished_tasks_go_back_to_the_list():
    tasks = {
        "1": TeamTask(id="1", subject="one", status="in_progress", owner="w1"),
        "2": TeamTask(id="2", subject="two", status="completed", owner="w1"),
        "3": TeamTask(id="3", subject="three", status="pending", owner="w1"),
        "4": TeamTask(id="4", subject="four", status="in_progress", owner="w2"),
    }
    back = unassigned(tasks, "w1")
    assert [t.id for t in back] == ["1", "3"]
    assert tasks["1"].status == "pending" and tasks["1"].owner is None
    assert tasks["3"].owner is None
    assert tasks["2"].owner == "w1" and tasks["4"].owner == "w2"


def test_the_lead_s_note():
    back = [TeamTask(id="1", subject="Task one")]
    text = loss_text(outcome("killed"), back, False)
    assert text.startswith("Teammate w1 was killed and has left the team")
    assert "#1 Task one" in text and "TaskUpdate" in text
    assert "failed (boom)" in loss_text(outcome("failed", error="boom"), [], False)
    assert "owned no unfinished task" in loss_text(outcome("failed"), [], False)
    assert "ran out of turns" in loss_text(outcome("completed"), [], True)
    assert "was stopped" in loss_text(outcome("completed", stopped=True), [], False)
    assert "was killed (hung) and" in loss_text(outcome("killed"), [], False, "hung")
    long = loss_text(outcome("failed", error="x" * 1000), [], False)
    assert "x" * 297 + "...)" in long and "x" * 298 not in long


def test_a_shutdown_a_person_asked_for_and_its_reason():
    answers = {
        "shutdown-w1-1": ShutdownAnswer(request_id="shutdown-w1-1", name="w1", approve=False),
        "shutdown-w1-2": ShutdownAnswer(
            request_id="shutdown-w1-2", name="w1", approve=True, reason="all done"
        ),
        "shutdown-w2-1": ShutdownAnswer(request_id="shutdown-w2-1", name="w2", approve=True),
    }
    assert approval_reason(answers, "w1") == "all done"
    assert approval_reason(answers, "w2") == "" and approval_reason(answers, "w3") == ""
    text = loss_text(outcome("completed", shutdown_approved=True), [], False, "all done")
    assert text.startswith(
        "Teammate w1 shut down, as a person asked it to (`request_shutdown`) (all done) and "
        "has left the team"
    ), text
