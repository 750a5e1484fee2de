"""What `outlast run` prints when a pattern ends: the usage added up, and what a model wrote
shown as written (rich would read `a[i]` and `[bold]` as markup and drop them)."""

from __future__ import annotations

from rich.console import Console

from agents.messages import Usage
from agents.team_tasks import TeamTask
from outlast.pattern_output import print_pattern_result
from workflows.contracts import AgentUsage, ForkJoinResult, ForkOutcome
from workflows.pattern_contracts import (
    MemberOutcome,
    PipelineResult,
    StageOutcome,
    TeamResult,
    VerificationRound,
    VerifiedTaskResult,
)

MODEL_TEXT = "x = a[i] [bold]y[/] done\x1b]8;;http://evil\x07link"
SHOWN = "x = a[i] [bold]y[/] done"


def printed(result, pattern: str) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_pattern_result(pattern, result, console)
    return console.export_text()


def usage(tokens: int, tools: int, ms: int = 0, searches: int = 0) -> AgentUsage:
    return AgentUsage(
        total_tokens=tokens,
        tool_uses=tools,
        duration_ms=ms,
        tokens=Usage(web_search_requests=searches),
    )


def test_a_pipeline_prints_its_stages_usage_and_last_text_as_written():
    stage = StageOutcome(
        name="build[x]",
        agent_type="general-purpose",
        workflow_id="w",
        status="completed",
        usage=usage(100, 3),
    )
    result = PipelineResult(
        status="completed",
        stages=[stage, stage.model_copy(update={"name": "check"})],
        message="every stage completed",
        final_text=MODEL_TEXT,
        usage=usage(200, 6, 4500, searches=1),
    )
    out = printed(result, "pipeline")
    assert "\n  build[x] (general-purpose, attempt 1): completed\n" in out
    assert "2 stage runs, 6 tool uses, 200 tokens, 4.5s, 1 web search" in out
    assert SHOWN in out and "\x1b" not in out and "link" in out
    assert "the last that completed" not in out


def test_a_rejected_pipeline_s_last_stage_output_is_not_given_as_its_result():
    """It printed the plan under "rejected" as if it were the result (a user test)."""
    plan = StageOutcome(name="plan", agent_type="Plan", workflow_id="p", status="completed")
    rejected = plan.model_copy(update={"name": "implement", "status": "rejected"})
    result = PipelineResult(
        status="rejected",
        stages=[plan, rejected],
        failed_stage="implement",
        message="stage implement rejected: not good",
        final_text="PLAN-V1",
    )
    out = printed(result, "pipeline")
    assert "The output of stage plan, the last that completed:\nPLAN-V1" in out, out
    again = plan.model_copy(update={"attempt": 2})
    out = printed(result.model_copy(update={"stages": [plan, again, rejected]}), "pipeline")
    assert "The output of stage plan (attempt 2), the last that completed:" in out, out


def test_a_stage_stopped_by_hand_reads_stopped_and_its_output_is_not_called_complete():
    """`outlast stop <pipeline>/explore`, then a stop of the pipeline: the stage read
    `completed; the pipeline stopped here`, and its cut-off turn came as "the last that
    completed" (a user test, 2026-12-07); `show` said stopped."""
    explore = StageOutcome(
        name="explore", agent_type="Explore", workflow_id="e", status="completed", stopped=True
    )
    result = PipelineResult(
        status="stopped",
        stages=[explore],
        failed_stage="explore",
        message="stopped at stage explore",
        final_text="Starting a slow step.",
    )
    out = printed(result, "pipeline")
    assert "\n  explore (Explore, attempt 1): stopped; the pipeline stopped here\n" in out, out
    assert "The output of stage explore, stopped before it finished:\nStarting" in out, out


def test_a_team_adds_up_its_members_usage_and_shows_task_subjects_as_written():
    members = [
        MemberOutcome(
            name=n, agent_type="general-purpose", workflow_id=n, status="completed", usage=u
        )
        for n, u in (("lead", usage(50, 2, 1000)), ("dev", usage(70, 5, 3000, searches=2)))
    ]
    task = TeamTask(id="1", subject="fix a[i] in [red]parser[/]", status="completed", owner="dev")
    result = TeamResult(
        team_name="t", status="completed", lead_text=MODEL_TEXT, members=members, tasks=[task]
    )
    out = printed(result, "team")
    assert "task #1 fix a[i] in [red]parser[/]: completed (dev)" in out
    # Members work at once: their times do not add up to the team's, so none is shown.
    assert "\n  2 members, 7 tool uses, 120 tokens, 2 web searches\n" in out
    assert SHOWN in out


def test_a_verified_task_and_a_fork_join_print_their_usage():
    verified = VerifiedTaskResult(
        status="passed",
        rounds=[
            VerificationRound(
                round=1, implementer_status="completed", verdict="PASS", verifier_workflow_id="v"
            )
        ],
        message="a verifier said PASS in round 1",
        final_text=MODEL_TEXT,
        usage=usage(300, 9),
    )
    out = printed(verified, "verified")
    assert "round 1: VERDICT: PASS (0 checks run)" in out
    assert "1 round, 9 tool uses, 300 tokens" in out and "0.0s" not in out
    assert SHOWN in out and "not verified" not in out
    # A failed task's last text is the implementer's report, not a result (a user test).
    failed = verified.model_copy(update={"status": "failed", "message": "no PASS"})
    out = printed(failed, "verified")
    assert out.index("The implementer's last report (not verified):") < out.index(SHOWN), out
    forks = ForkJoinResult(
        forks=[
            ForkOutcome(index=i, directive="d", agent_id="a", workflow_id="w", status="completed")
            for i in range(2)
        ],
        synthesis=MODEL_TEXT,
        usage=usage(400, 4, 2000),
    )
    out = printed(forks, "fork-join")
    # Numbered from 1, as the forks' workflow ids (`.../fork-1`) and `task_stop` number them.
    assert "fork 1: completed" in out and "fork 2: completed" in out and "fork 0" not in out
    assert "2 forks and the synthesis, 4 tool uses, 400 tokens, 2.0s" in out
    assert SHOWN in out


def test_a_task_out_of_turns_or_stopped_did_not_succeed():
    """`outlast run`'s exit code: 1 for an agent that ran out of turns (Claude Code's
    `error_max_turns`) as for one that was stopped; 0 only for a completed task."""
    from outlast.patterns import succeeded
    from workflows.contracts import AgentResult

    done = AgentResult(
        status="completed",
        agent_id="a",
        agent_type="general-purpose",
        final_text="done",
        usage=AgentUsage(),
        turns=3,
    )
    assert succeeded(done)
    assert not succeeded(done.model_copy(update={"max_turns_reached": True}))
    assert not succeeded(done.model_copy(update={"stopped": True}))
    assert not succeeded(done.model_copy(update={"status": "failed"}))
    assert not succeeded(None)


def test_a_fork_join_with_a_fork_stopped_did_not_succeed_and_says_so():
    """A fork stopped by hand (`outlast stop <fork-join>/fork-2`) completes its workflow
    but not its part: the fork-join's run exits 1 and shows which fork was stopped."""
    from outlast.patterns import succeeded

    def fork(i: int, **kw) -> ForkOutcome:
        return ForkOutcome(
            index=i, directive="d", agent_id="a", workflow_id="w", status="completed", **kw
        )

    assert succeeded(ForkJoinResult(forks=[fork(0), fork(1)]))
    stopped = ForkJoinResult(forks=[fork(0), fork(1, stopped=True)])
    assert not succeeded(stopped)
    assert not succeeded(ForkJoinResult(forks=[fork(0, max_turns_reached=True)]))
    out = printed(stopped, "fork-join")
    assert "fork 1: completed\n" in out and "fork 2: completed (stopped)" in out


def test_a_round_counted_a_fail_says_why_and_what_ran():
    from agents.builtin.verification import NOTHING_RAN
    from workflows.pattern_contracts import VerificationCheck

    check = VerificationCheck(title="tests", command="pytest", output="ok", result="PASS")
    made_up = VerificationRound(
        round=1,
        implementer_status="completed",
        verdict="FAIL",
        verdict_reason=NOTHING_RAN,
        checks=[check, check],
        verifier_workflow_id="vt/verifier-1",
    )
    verified = VerifiedTaskResult(
        status="failed", rounds=[made_up], message="m", final_text="", usage=usage(1, 0)
    )
    out = " ".join(printed(verified, "verified").split())
    assert f"round 1: VERDICT: FAIL (0 checks run): {NOTHING_RAN}" in out, out


def test_a_round_no_verifier_reported_on_is_not_a_verdict():
    """A stopped implementer's round read "VERDICT: FAIL (0 checks run)": a verifier's
    rejection, where none ran (a user test, 2026-12-07)."""
    stopped = VerificationRound(
        round=1,
        implementer_status="killed",
        verdict="FAIL",
        verdict_reason="the implementer was stopped: enough; nothing was verified",
    )
    verified = VerifiedTaskResult(
        status="failed", rounds=[stopped], message="m", final_text="", usage=usage(1, 0)
    )
    out = " ".join(printed(verified, "verified").split())
    assert "round 1: not verified: the implementer was stopped: enough;" in out, out
    assert "VERDICT" not in out, out


def test_a_member_out_of_turns_says_so():
    """It read plain `completed`, as if it had finished its work (a user test, 2026-12-06)."""
    spent = MemberOutcome(
        name="b", agent_type="general-purpose", workflow_id="t/b", status="completed"
    )
    result = TeamResult(
        team_name="t",
        status="completed",
        members=[
            spent.model_copy(update={"name": "a", "workflow_id": "t/a"}),
            spent.model_copy(update={"max_turns_reached": True}),
        ],
        tasks=[],
    )
    out = printed(result, "team")
    assert "\n  b (general-purpose): completed (max turns reached)\n" in out
    assert "\n  a (general-purpose): completed\n" in out


def test_a_team_counts_its_messages_in_good_grammar():
    """It read "1 messages inside the team" (a user test, 2026-12-07)."""
    for n, said in ((1, "completed: 1 message inside the team"), (3, "completed: 3 messages")):
        result = TeamResult(team_name="t", status="completed", members=[], tasks=[], messages=n)
        assert said in printed(result, "team")


def test_a_killed_or_failed_implementer_s_end_reads_cleanly():
    """The kill's words, trimmed; a kill the liveness check found says what its end said."""
    from workflows.contracts import AgentNotification
    from workflows.verified_task import implementer_ended

    def end(status: str, error: str | None = None, words: str = "") -> str:
        notice = AgentNotification(
            agent_id="i", run_generation=1, status=status, error=error, stop_reason=words
        )
        return implementer_ended(notice)

    assert end("killed", "stopped", " IKILL \n") == "the implementer was killed: IKILL"
    assert end("killed", "stopped") == "the implementer was killed"
    found = end("killed", "its workflow ended canceled")
    assert found == "the implementer was killed: its workflow ended canceled"
    assert end("failed", "boom\n") == "the implementer failed: boom"
    assert end("failed", "") == end("failed") == "the implementer failed"


def test_a_member_that_approved_a_shutdown_says_so():
    """It read plain `completed` (a user test, 2026-12-07)."""
    member = MemberOutcome(
        name="b",
        agent_type="general-purpose",
        workflow_id="t/b",
        status="completed",
        shutdown_approved=True,
    )
    result = TeamResult(team_name="t", status="completed", members=[member], tasks=[])
    assert "\n  b (general-purpose): completed (shut down on request)\n" in printed(result, "team")
