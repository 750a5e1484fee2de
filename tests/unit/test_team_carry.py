"""A team's continue-as-new: when it hands on, what it hands on, and a member's outcome from
its last report."""

from agents.team_tasks import TeamTask
from workflows.contracts import AgentUsage
from workflows.pattern_contracts import (
    MemberEnd,
    MemberOutcome,
    MemberReport,
    ShutdownAnswer,
    TeammateSpec,
)
from workflows.team_carry import (
    TeamCarry,
    carried_reports,
    end_from_report,
    outcome_of,
    should_continue,
)


def test_it_hands_on_when_the_server_suggests_or_its_history_is_long():
    assert should_continue(10_000, False, 10_000)
    assert should_continue(50, True, 10_000)
    assert not should_continue(9_999, False, 10_000)


def test_a_report_says_how_a_member_ended_only_in_its_last_one():
    working = MemberReport(name="b", idle=False, received=3)
    # Every other report's payload stays as it was: the field is left out.
    assert "end" not in working.model_dump(mode="json")
    assert end_from_report(working) is None and end_from_report(None) is None
    end = MemberEnd(status="killed", error="stopped", unread_messages=2)
    last = MemberReport(name="b", idle=True, usage=AgentUsage(total_tokens=7), end=end)
    assert end_from_report(MemberReport.model_validate(last.model_dump(mode="json"))) == end


def test_an_outcome_from_a_last_report_keeps_its_usage_and_counts():
    base = {"name": "b", "agent_type": "general-purpose", "workflow_id": "t/b"}
    end = MemberEnd(
        status="completed", final_text="done", unread_messages=1, max_turns_reached=True
    )
    outcome = outcome_of(base, end, AgentUsage(total_tokens=5), stopped=False)
    assert outcome == MemberOutcome(
        **base,
        status="completed",
        final_text="done",
        usage=AgentUsage(total_tokens=5),
        unread_messages=1,
        max_turns_reached=True,
    )
    # A member that never reported its usage counts as having spent nothing, not as missing.
    assert outcome_of(base, end, None, stopped=True).usage == AgentUsage()


def test_the_carry_round_trips_through_json():
    carry = TeamCarry(
        members=[TeammateSpec(name="lead", prompt="p"), TeammateSpec(name="b", prompt="q")],
        tasks={"1": TeamTask(id="1", subject="one", status="in_progress", owner="b")},
        reports={"b": MemberReport(name="b", idle=True, sent_to={"lead": 2}, received=4)},
        forwarded={"b": 1},
        mail_ids={"b": 3},
        asked={"shutdown-b-1": "b"},
        answers={
            "shutdown-b-1": ShutdownAnswer(name="b", request_id="shutdown-b-1", approve=False)
        },
        kills=["c"],
        started=["b", "lead"],
        refused=["signal `stopp` refused"],
        runs=2,
        from_run="run-1",
    )
    assert TeamCarry.model_validate(carry.model_dump(mode="json")) == carry


def test_an_ended_member_s_final_text_is_carried_once():
    end = MemberEnd(status="completed", final_text="x" * 1000)
    reports = {
        "b": MemberReport(name="b", idle=True, usage=AgentUsage(), end=end),
        "c": MemberReport(name="c", idle=True, usage=AgentUsage(), end=end),
    }
    ended = {"b": MemberOutcome(name="b", agent_type="t", workflow_id="t/b", status="completed")}
    carried = carried_reports(reports, ended)
    # b's outcome has it; c's end has not been read yet (its watcher is the next run's).
    assert carried["b"].end is None and carried["c"].end == end
    assert carried["b"].usage == AgentUsage()
