from rich.console import Console

from agents.todos import TodoItem
from outlast.live_tree import status_tree
from tests.unit.test_details import child, status


def render(tree) -> str:
    console = Console(record=True, width=140, color_system=None)
    console.print(tree)
    return console.export_text()


def test_tree_shows_the_agent_and_each_child_with_its_own_progress():
    running, done = child(1), child(2, "completed")
    own = status(agent_id="c1", agent_type="worker", state="calling_model", turn=1)
    text = render(status_tree(status(children=[running, done]), {running.workflow_id: own}))
    lines = text.splitlines()
    assert lines[0].startswith("coordinator turn 3: running Agent, SendMessage · 1,500 tokens")
    assert "… task 1 | with a pipe (worker, background) turn 2: calling claude-x" in lines[1]
    assert "✓ task 2 | with a pipe (worker, background) completed" in lines[2]


def test_a_running_child_without_its_status_shows_no_progress():
    text = render(status_tree(status(children=[child(1)]), {}))
    assert text.splitlines()[1].endswith("(worker, background)")


def test_the_todo_list_shows_under_the_agent_before_its_children():
    todos = [
        TodoItem(content="Read [it]", status="completed", activeForm="Reading"),
        TodoItem(content="Test", status="in_progress", activeForm="Testing [x]"),
        TodoItem(content="Fix", status="pending", activeForm="Fixing"),
    ]
    lines = render(status_tree(status(todos=todos, children=[child(1)]), {})).splitlines()
    assert "todos (1 of 3 done)" in lines[1]
    assert "✓ Read [it]" in lines[2] and "▸ Testing [x]" in lines[3] and "☐ Fix" in lines[4]
    assert "task 1" in lines[5]


def test_the_questions_an_agent_waits_with_come_first():
    lines = ["question-1 waits for your answer:", "1. DB: Which [one]?", "   1) A: a"]
    tree = status_tree(status(state="waiting", children=[child(1)]), {}, lines)
    out = render(tree).splitlines()
    assert "? question-1 waits for your answer:" in out[1]
    assert "1. DB: Which [one]?" in out[2] and "task 1" in out[4]


def test_an_agent_s_answer_is_printed_as_written():
    from outlast.progress import print_result
    from workflows.contracts import AgentResult, AgentUsage

    console = Console(record=True, width=140, color_system=None)
    text = "x = a[i] [/] done\n\x1b]8;;http://evil\x07link\x1b]8;;\x07\tend"
    result = AgentResult(
        status="completed",
        agent_id="a1",
        agent_type="general-purpose",
        final_text=text,
        usage=AgentUsage(),
        turns=1,
    )
    print_result(result, console)
    out = console.export_text()
    assert "x = a[i] [/] done" in out and "\x1b" not in out and "link" in out and "end" in out


def test_the_summary_line_counts_web_searches():
    from agents.messages import Usage
    from outlast.progress import print_result
    from workflows.contracts import AgentResult, AgentUsage

    for n, said in ((0, None), (1, ", 1 web search"), (2, ", 2 web searches")):
        console = Console(record=True, width=140, color_system=None)
        usage = AgentUsage(tokens=Usage(web_search_requests=n))
        result = AgentResult(
            status="completed",
            agent_id="a1",
            agent_type="general-purpose",
            final_text="",
            usage=usage,
            turns=1,
        )
        print_result(result, console)
        out = console.export_text()
        assert ("web search" in out) == (said is not None)
        assert said is None or said in out


def test_what_a_model_or_a_definition_wrote_is_shown_as_written():
    """A background shell's line is its command, a sub-agent's its description: `[a-z]` is
    not a style, and a stray `[/]` made rich raise in the middle of the live redraw."""
    shell = child(1).model_copy(
        update={"description": "grep -E '[a-z]+' x && sed 's/[/]/_/g' y\x1b[2J"}
    )
    own = status(agent_id="c1", agent_type="[bold]w[/]", state="calling_model", turn=1)
    top = status(agent_type="lead[/x]", children=[shell])
    lines = render(status_tree(top, {shell.workflow_id: own})).splitlines()
    assert lines[0].startswith("lead[/x] turn 3")
    assert "grep -E '[a-z]+' x && sed 's/[/]/_/g' y [2J (worker, background)" in lines[1]
    assert "\x1b" not in "".join(lines)


def test_a_sub_agent_s_retry_shows_on_its_line_and_the_agent_s_under_it():
    """A sub-agent retrying its model call looked like a call in progress (a user test)."""
    running, done = child(1), child(2, "completed")
    retry = "model call retrying (attempt 3): 529 overloaded"
    tree = status_tree(
        status(children=[running, done]),
        {},
        retry="Glob retrying (attempt 2): gone",
        kid_retries={running.workflow_id: retry, done.workflow_id: "stale"},
    )
    lines = render(tree).splitlines()
    assert "Glob retrying (attempt 2): gone" in lines[1]
    assert retry in lines[2] and "stale" not in lines[3]


def test_a_waiting_plan_shows_its_start_and_how_to_answer_it():
    from outlast.plan_view import PLAN_LINES, plan_lines
    from workflows.contracts import PendingPlan

    long = "\n".join(f"step {i} [b]x[/b]" for i in range(PLAN_LINES + 5))
    pending = PendingPlan(request_id="plan-1", plan=long, plan_file="/p/plan.md")
    lines = plan_lines("wf-1", pending)
    assert lines[0] == "[bold yellow]plan waits for approval by the user:[/]"
    assert lines[1] == "  step 0 \\[b]x\\[/b]"  # the model's text, not markup
    assert lines[PLAN_LINES + 1] == "  [dim]… 5 more lines in /p/plan.md[/]"
    assert "outlast approve wf-1" in lines[-1] and "outlast reject wf-1 --feedback" in lines[-1]
    by_lead = plan_lines("wf-1", pending.model_copy(update={"approver": "team-lead"}))
    assert "approve" not in by_lead[-1]  # the lead answers it, not the person


def test_the_end_names_a_kept_worktree_the_work_is_in():
    from outlast.progress import print_result
    from workflows.contracts import AgentResult, AgentUsage

    console = Console(record=True, width=200, color_system=None)
    result = AgentResult(
        status="completed",
        agent_id="a1",
        agent_type="general-purpose",
        final_text="Made it.",
        usage=AgentUsage(),
        turns=1,
        worktree_path="/src/p/.claude/worktrees/session-1 [x]",
        worktree_branch="worktree-session-1",
    )
    print_result(result, console)
    out = console.export_text()
    assert (
        "worktree kept: /src/p/.claude/worktrees/session-1 [x] (branch worktree-session-1): "
        "its changes are there, not in the checkout"
    ) in out, out


def test_a_coordinator_s_queued_workers_show_under_its_children():
    from workflows.contracts import QueuedWorker

    queued = QueuedWorker(
        agent_id="a9", label="doc", phase="implementation", files=["calc.py"], waits_for=["fix"]
    )
    lines = render(status_tree(status(children=[child(1)], queued=[queued]), {})).splitlines()
    assert lines[-1].endswith("queued: doc (a9), implementation of calc.py: waits for fix")


async def test_a_closed_run_is_retrying_nothing():
    """A user test (2026-12-06): `show` gave a worker killed while its model call was being
    retried as `canceled, killed, ..., model call retrying (attempt 3)`: the server still
    listed the activity its cancel had left pending."""
    from temporalio.api.enums.v1 import WorkflowExecutionStatus as Raw
    from temporalio.api.workflowservice.v1 import DescribeWorkflowExecutionResponse
    from temporalio.client import WorkflowExecutionDescription
    from temporalio.converter import DataConverter

    from outlast.retries import retrying

    raw = DescribeWorkflowExecutionResponse()
    raw.workflow_execution_info.execution.workflow_id = "w"
    raw.workflow_execution_info.status = Raw.WORKFLOW_EXECUTION_STATUS_RUNNING
    activity = raw.pending_activities.add()
    activity.activity_type.name = "llm.call_model"
    activity.attempt = 3
    activity.last_failure.message = "Worker is shutting down"

    async def described():
        return await WorkflowExecutionDescription._from_raw_description(  # noqa: SLF001
            raw, namespace="default", converter=DataConverter.default
        )

    assert "retrying (attempt 3)" in (retrying(await described()) or "")
    raw.workflow_execution_info.status = Raw.WORKFLOW_EXECUTION_STATUS_CANCELED
    assert retrying(await described()) is None
