"""An ended agent's child's end, read from its own workflow, as the parent's table would
have it (`outlast/child_ends.py`)."""

from __future__ import annotations

from temporalio.client import WorkflowExecutionStatus as S

from outlast.child_ends import child_end


def test_a_running_child_has_no_end_yet():
    assert child_end(S.RUNNING) is None and child_end(None) is None


def test_a_cancelled_child_was_killed_and_one_that_closed_otherwise_failed():
    assert child_end(S.CANCELED) == "killed"
    assert [child_end(s) for s in (S.FAILED, S.TERMINATED, S.TIMED_OUT)] == ["failed"] * 3


def test_a_completed_child_ends_as_its_result_says_and_a_stopped_one_stopped():
    assert child_end(S.COMPLETED, {"status": "completed"}) == "completed"
    assert child_end(S.COMPLETED, {"status": "failed", "error": "x"}) == "failed"
    assert child_end(S.COMPLETED, {"status": "completed", "stopped": True}) == "stopped"
    # A result of another release, or none to read: it completed.
    assert child_end(S.COMPLETED, {"status": "passed"}) == "completed"
    assert child_end(S.COMPLETED, None) == "completed"


def test_a_stopped_child_shows_stopped_where_its_table_says_killed():
    """A user test (2026-12-06): `outlast stop PARENT/child` and `run` printed `killed, sync`
    for it, while `show` said `completed, stopped`; a stopped stage or fork read
    `completed`. The parent's table (and its notice to the model) keeps `killed`."""
    import io

    from rich.console import Console

    from agents.config import OutlastConfig
    from outlast.child_ends import _ended, shown_status
    from outlast.live_tree import _child_line
    from outlast.pattern_follow import _ended as ended_line
    from outlast.progress import _print_children
    from workflows.contracts import (
        AgentInput,
        AgentNotification,
        AgentStatus,
        AgentUsage,
        ForkOutcome,
        Workspace,
    )
    from workflows.pattern_contracts import StageOutcome
    from workflows.registry import ChildTask

    spawn = AgentInput(
        prompt="p", workspace=Workspace(root="/r", host_queue="h"), config=OutlastConfig()
    )
    task = ChildTask(
        agent_id="c1", agent_type="worker", description="d", workflow_id="p/c1", mode="sync",
        spawn=spawn,
    )  # fmt: skip
    end = AgentNotification(
        agent_id="c1", status="killed", final_text="", stopped=True, run_generation=1
    )
    task.status, task.end = "killed", end
    stopped = task.summary()
    assert stopped.status == "killed" and stopped.stopped and shown_status(stopped) == "stopped"
    # TaskStop's kill stays a kill.
    task.stop_requested = True
    assert not task.summary().stopped and shown_status(task.summary()) == "killed"
    assert "■" in _child_line(stopped, None) and _child_line(stopped, None).endswith(" stopped")
    out = io.StringIO()
    status = AgentStatus(
        agent_id="p", agent_type="general-purpose", model="m", state="waiting", turn=1,
        usage=AgentUsage(), children=[stopped],
    )  # fmt: skip
    _print_children(status, {}, Console(file=out, width=200))
    assert out.getvalue().strip() == "sub-agent c1 (worker): stopped, sync", out.getvalue()
    # A background Bash command is one of the children too: not called a sub-agent.
    shell = stopped.model_copy(update={"agent_id": "b1", "agent_type": "shell"})
    out = io.StringIO()
    _print_children(status.model_copy(update={"children": [shell]}), {}, Console(file=out))
    assert out.getvalue().strip().startswith("background command b1 (shell): "), out.getvalue()
    assert _ended("stopped") == {"status": "killed", "stopped": True}
    assert _ended("failed") == {"status": "failed"}
    stage = StageOutcome(name="explore", agent_type="Explore", workflow_id="x", status="completed")
    assert ended_line(stage) == "completed"
    assert ended_line(stage.model_copy(update={"stopped": True})) == "stopped"
    fork = ForkOutcome(index=0, directive="d", workflow_id="f", agent_id="f", status="completed")
    assert ended_line(fork.model_copy(update={"max_turns_reached": True})) == (
        "completed (max turns reached)"
    )
