from agents.messages import Usage
from agents.todos import TodoItem
from outlast.live_tree import status_tree
from outlast.progress import count, usage_text
from workflows.contracts import AgentStatus, AgentUsage, ChildSummary
from workflows.details import MAX_CHILDREN, render_details


def status(**kw) -> AgentStatus:
    base = dict(
        agent_id="a1",
        agent_type="coordinator",
        model="claude-x",
        state="running_tools",
        turn=3,
        current_tools=["Agent", "SendMessage"],
        usage=AgentUsage(
            total_tokens=1500,
            tool_uses=4,
            tokens=Usage(input_tokens=1000, output_tokens=200, cache_read_input_tokens=7000),
        ),
    )
    return AgentStatus(**{**base, **kw})


def child(i: int, state: str = "running") -> ChildSummary:
    return ChildSummary(
        agent_id=f"c{i}",
        name=None,
        agent_type="worker",
        description=f"task {i} | with a pipe",
        workflow_id=f"wf/c{i}",
        status=state,
        mode="background",
        run_generation=1,
    )


def test_details_show_turn_tool_tokens_and_cache_reads():
    text = render_details(status())
    assert text.splitlines()[0] == "**coordinator** `a1` · turn 3 · running `Agent`, `SendMessage`"
    assert "tokens 1,500" in text and "cache read 7,000" in text and "4 tool uses" in text
    assert "Sub-agents" not in text
    assert "web search" not in text


def test_web_searches_are_counted_apart_from_tokens():
    usage = AgentUsage(total_tokens=10, tool_uses=1, tokens=Usage(web_search_requests=3))
    assert "· 3 web searches ·" in render_details(status(usage=usage))
    one = AgentUsage(total_tokens=10, tool_uses=1, tokens=Usage(web_search_requests=1))
    assert "· 1 web search ·" in render_details(status(usage=one))


def test_one_tool_use_is_singular_everywhere_it_is_counted():
    one = AgentUsage(total_tokens=10, tool_uses=1)
    assert "· 1 tool use ·" in render_details(status(usage=one))
    assert usage_text(one) == "1 tool use, 10 tokens"
    assert "· 1 tool use" in status_tree(status(usage=one), {}).label
    assert usage_text(AgentUsage(tool_uses=1234)) == "1,234 tool uses, 0 tokens"
    assert count(1, "turn") == "1 turn" and count(0, "turn") == "0 turns"


def test_a_model_call_belongs_to_the_turn_it_starts():
    assert "turn 4 · calling the model" in render_details(status(state="calling_model"))


def test_children_table_with_status_and_escaped_cells():
    text = render_details(status(children=[child(1, "completed"), child(2)]))
    assert "**Sub-agents** (1 running of 2)" in text
    assert "| task 1 / with a pipe | worker | completed | background | `wf/c1` |" in text


def test_children_table_is_bounded():
    text = render_details(status(children=[child(i) for i in range(MAX_CHILDREN + 5)]))
    assert text.count("| worker |") == MAX_CHILDREN
    assert "5 earlier" in text


def test_pending_plan_and_flags():
    text = render_details(
        status(state="waiting", mode="plan", stop_requested=True), "## Plan awaiting approval"
    )
    assert "mode plan · stop requested" in text
    assert text.startswith("## Plan awaiting approval\n")


def test_refused_signals_are_listed():
    refused = ["signal `send_message` refused: text: Field required"]
    text = render_details(status(refused_signals=refused))
    assert (
        "Refused signals (their input did not fit):\n- signal `send_message` refused: text" in text
    )


def test_the_todo_list_follows_the_counters():
    todos = [
        TodoItem(content="Run tests", status="in_progress", activeForm="Running tests"),
        TodoItem(content="Fix it", status="pending", activeForm="Fixing it"),
    ]
    lines = render_details(status(todos=todos)).splitlines()
    at = lines.index("**Todos** (0 of 2 done)")
    assert lines[at + 2 : at + 4] == ["- [ ] **Running tests** (in progress)", "- [ ] Fix it"]
    assert "Todos" not in render_details(status())


def test_a_follow_leaves_an_ending_stage_agent_to_its_stage_s_line():
    """A follow printed `stage plan: finished`, then `stage plan: completed`."""
    from outlast.pattern_follow import at_work

    assert at_work(status(state="finished")) is None
    working = status(state="calling_model")
    assert at_work(working) is working


def test_a_follow_leaves_a_starting_stage_agent_to_its_stage_s_line():
    """A follow printed `stage look: running`, then `stage look: starting`."""
    from outlast.pattern_follow import stage_doing

    assert stage_doing("k", "stage look", status(state="starting")) == []
    assert stage_doing("k", "stage look", None) == []
    assert stage_doing("k", "stage look", status(state="calling_model")) == [
        ("k", "stage look: turn 4: calling claude-x")
    ]


def test_a_follow_names_the_attempt_of_the_stage_that_runs():
    """It read `stage look: running` between `(attempt 2): rejected` and `(attempt 3): turn
    1` (a user test, 2026-12-07)."""
    from outlast.pattern_follow import pipeline_lines
    from workflows.pattern_contracts import PipelineView, StageOutcome

    def rejected(attempt: int) -> StageOutcome:
        suffix = f"-{attempt}" if attempt > 1 else ""
        return StageOutcome(
            name="look",
            agent_type="Explore",
            workflow_id=f"p/look{suffix}",
            attempt=attempt,
            status="rejected",
        )

    first = PipelineView(stages=[], current="look")
    assert pipeline_lines(first, "p") == [("stage:look:run", "stage look: running")]
    third = PipelineView(stages=[rejected(1), rejected(2)], current="look")
    assert pipeline_lines(third, "p")[-1] == ("stage:look:run", "stage look (attempt 3): running")


def test_a_continued_run_says_where_its_task_is_and_only_then():
    """Temporal gives a continued run no static summary or details."""
    from workflows.details import chain_note

    note = chain_note(2, "run-1")
    assert note == (
        "run 3 of this workflow id (continued as new): the task's summary and details are on "
        "its first run, `run-1`"
    )
    assert render_details(status(), chain=note).endswith("\n\n" + note)
    assert "continued as new" not in render_details(status())


def test_queued_workers_are_listed_with_what_they_wait_for():
    """A queued worker has no workflow yet, so no row in the sub-agents table: the Web UI
    showed none (a user test, 2026-12-07)."""
    from workflows.contracts import QueuedWorker

    queued = QueuedWorker(
        agent_id="q1", label="doc", phase="implementation", files=["a.py"], waits_for=["fix"]
    )
    text = render_details(status(children=[child(1)], queued=[queued]))
    assert "**Queued workers** (1, waiting for their files)" in text
    assert "- doc (implementation): waits for fix" in text


def test_a_verified_round_s_follow_line_sets_its_reason_apart():
    """It read "VERDICT: FAIL the implementer was stopped" (a user test, 2026-12-07)."""
    from outlast.pattern_follow import round_line
    from workflows.pattern_contracts import VerificationRound

    stopped = VerificationRound(
        round=1,
        implementer_status="killed",
        verdict="FAIL",
        verdict_reason="the implementer was stopped: ISTOP; nothing was verified",
    )
    # No verifier ran: not a verifier's FAIL (a user test, 2026-12-07).
    assert round_line(stopped) == (
        "round 1: not verified: the implementer was stopped: ISTOP; nothing was verified"
    )
    passed = VerificationRound(
        round=2, implementer_status="completed", verdict="PASS", verifier_workflow_id="v-2"
    )
    assert round_line(passed) == "round 2: VERDICT: PASS"
