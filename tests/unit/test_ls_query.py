"""`outlast ls`'s visibility query and the outcome it shows: pure, no server."""

from __future__ import annotations

from outlast.listing import _outcome, list_query


def test_a_pattern_is_found_by_its_attribute_or_else_by_its_type():
    query = list_query(None, "coordinator", include_children=True)
    assert "(Pattern = 'coordinator' OR (Pattern IS NULL AND WorkflowType = " in query
    assert "'CoordinatorWorkflow'))" in query and "ParentWorkflowId IS NULL" not in query
    assert "ShellTaskWorkflow" not in query  # a background command carries no pattern
    top = list_query("canceled", "single", include_children=False)
    assert "ExecutionStatus = 'Canceled'" in top and top.endswith("ParentWorkflowId IS NULL")


def test_failed_lists_a_pattern_that_completed_its_workflow_but_failed_its_task():
    query = list_query("failed", None, include_children=False)
    assert (
        "(ExecutionStatus = 'Failed' OR (ExecutionStatus = 'Completed' AND AgentStatus = 'failed'))"
    ) in query
    bare = list_query("failed", "pipeline", include_children=False, by_attribute=False)
    assert "ExecutionStatus = 'Failed'" in bare and "AgentStatus" not in bare


def test_on_a_server_without_the_attribute_a_pattern_is_its_type():
    query = list_query(None, "team", include_children=True, by_attribute=False)
    assert query.startswith("WorkflowType = 'TeamWorkflow' AND ") and "Pattern" not in query


def test_every_run_lists_background_commands_only_without_a_pattern():
    assert "'ShellTaskWorkflow'" in list_query(None, None, include_children=True)
    assert "'ShellTaskWorkflow'" not in list_query(None, None, include_children=False)


def test_the_outcome_is_shown_only_where_a_completed_workflow_did_not_complete_its_task():
    assert _outcome("completed", "failed") == "failed"
    assert _outcome("completed", "partial") == "partial"
    for quiet in (None, "completed", "running", "idle"):
        assert _outcome("completed", quiet) is None
    assert _outcome("failed", "failed") is None  # Temporal's status says it already
    # A run that waits on a person says so (it read plain `running`); one that waited, not.
    assert _outcome("running", "waiting_for_approval") == "waiting for approval"
    assert _outcome("running", "waiting_for_answer") == "waiting for answer"
    assert _outcome("running", "running") is None
    assert _outcome("terminated", "waiting_for_approval") is None


def test_a_team_whose_lead_was_killed_did_not_do_its_task():
    """It went quiet and read `completed`, exit 0, `ls` plain `completed` (a user test)."""
    import io

    from rich.console import Console

    from outlast.inspect import Node, _fill_from_result
    from outlast.listing import Row
    from outlast.pattern_output import print_pattern_result
    from outlast.patterns import succeeded
    from workflows.pattern_contracts import MemberOutcome, TeamResult

    def member(name: str, status: str) -> MemberOutcome:
        return MemberOutcome(
            name=name, agent_type="general-purpose", workflow_id=name, status=status
        )

    lost = TeamResult(
        team_name="t",
        status="completed",
        members=[member("lead", "killed"), member("qa", "completed")],
        tasks=[],
    )
    done = lost.model_copy(update={"members": [member("lead", "completed")]})
    assert lost.lead_lost() == "killed" and done.lead_lost() is None
    assert not succeeded(lost) and succeeded(done)
    out = io.StringIO()
    print_pattern_result("team", lost, Console(file=out, width=200))
    assert out.getvalue().startswith("completed (the lead was killed): 0 messages"), out.getvalue()
    node = Node(
        row=Row(workflow_id="t", pattern="team", workflow_type="TeamWorkflow", status="completed")
    )
    _fill_from_result(node, lost.model_dump(mode="json"))
    assert node.outcome == "the lead was killed"
    # A lead stopped on its own (not by the team's end) did not do its task either.
    stopped_lead = member("lead", "completed").model_copy(update={"stopped": True})
    stopped = lost.model_copy(update={"members": [stopped_lead, member("qa", "completed")]})
    assert stopped.lead_lost() == "stopped" and not succeeded(stopped)
    out = io.StringIO()
    print_pattern_result("team", stopped, Console(file=out, width=200))
    assert out.getvalue().startswith("completed (the lead was stopped)"), out.getvalue()
    assert "lead (general-purpose): stopped" in out.getvalue()
    # Why a member failed, on its line: only `show` said it (a user test, 2026-12-07).
    error = "model: 400 invalid_request_error\nmore detail"
    failed_lead = member("lead", "failed").model_copy(update={"error": error})
    failed = lost.model_copy(update={"members": [failed_lead]})
    out = io.StringIO()
    print_pattern_result("team", failed, Console(file=out, width=200))
    assert "lead (general-purpose): failed: model: 400 invalid_request_error\n" in out.getvalue()
    _fill_from_result(node, stopped.model_dump(mode="json"))
    assert node.outcome == "the lead was stopped"
    # A lead out of turns ends the team too (team-ends-with-lead): said, not plain completed.
    spent = member("lead", "completed").model_copy(update={"max_turns_reached": True})
    out_of_turns = lost.model_copy(update={"members": [spent, member("qa", "completed")]})
    assert out_of_turns.lead_lost() == "out of turns" and not succeeded(out_of_turns)
    _fill_from_result(node, out_of_turns.model_dump(mode="json"))
    assert node.outcome == "the lead ran out of turns"
    # Not "the lead was failed" (a user test, 2026-12-07).
    failed = lost.model_copy(update={"members": [member("lead", "failed")]})
    _fill_from_result(node, failed.model_dump(mode="json"))
    assert node.outcome == "the lead failed"


def test_a_team_that_left_tasks_undone_did_not_do_its_task():
    """Its teammates lost and every task pending, it went quiet and read `completed`, exit 0
    (a user test, 2026-12-06)."""
    import io

    from rich.console import Console

    from agents.team_tasks import TeamTask
    from outlast.inspect import Node, _fill_from_result
    from outlast.listing import Row
    from outlast.pattern_output import print_pattern_result
    from outlast.patterns import succeeded
    from workflows.pattern_contracts import MemberOutcome, TeamResult

    lead = MemberOutcome(
        name="lead", agent_type="general-purpose", workflow_id="l", status="completed"
    )
    tasks = [TeamTask(id="1", subject="one", status="completed"), TeamTask(id="2", subject="two")]
    undone = TeamResult(team_name="t", status="completed", members=[lead], tasks=tasks)
    assert [t.id for t in undone.unfinished()] == ["2"] and not succeeded(undone)
    done = undone.model_copy(update={"tasks": tasks[:1]})
    assert succeeded(done) and succeeded(done.model_copy(update={"tasks": []}))
    out = io.StringIO()
    print_pattern_result("team", undone, Console(file=out, width=200))
    assert out.getvalue().startswith("completed (1 of 2 tasks not done): 0 messages"), (
        out.getvalue()
    )
    node = Node(
        row=Row(workflow_id="t", pattern="team", workflow_type="TeamWorkflow", status="completed")
    )
    _fill_from_result(node, undone.model_dump(mode="json"))
    assert node.outcome == "1 of 2 tasks not done"


def test_an_agent_that_failed_in_its_result_says_why():
    from outlast.inspect import Node, _fill_from_result
    from outlast.listing import Row

    node = Node(
        row=Row(
            workflow_id="a", pattern="single", workflow_type="AgentWorkflow", status="completed"
        )
    )
    _fill_from_result(node, {"status": "failed", "error": "Model call failed:\n  429 [too many]"})
    assert node.outcome == "failed" and node.error == "Model call failed: 429 [too many]"
    done = Node(row=node.row)
    _fill_from_result(done, {"status": "completed", "error": None, "message": "all fine"})
    assert done.error is None


def test_a_continued_run_starts_when_its_chain_did_and_a_resumed_one_on_its_own():
    """`ls` gave a continued agent's start as its latest run's (a user test, 2026-12-06)."""
    from datetime import UTC, datetime, timedelta

    from outlast.run_chain import chain_start

    t0 = datetime(2026, 12, 6, 17, 0, tzinfo=UTC)
    later = t0 + timedelta(seconds=9)
    continued = {"r1": t0, "r2": t0 + timedelta(seconds=4)}
    assert chain_start(later, "r3", "r1", continued) == t0
    # A resumed run, or one never continued, is the first of its chain.
    assert chain_start(later, "r4", "r4", continued) == later
    assert chain_start(later, "r4", "", continued) == later
    # Its first run past retention: not known here (a describe of it is tried).
    assert chain_start(later, "r3", "r0", continued) is None
