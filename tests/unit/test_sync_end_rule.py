"""Which ends a parent reads from the child's result alone (no signal), and that the
result-based end carries everything the signal did."""

from __future__ import annotations

import pytest

from workflows.agent_end import parent_reads_result
from workflows.child_endings import end_from_result
from workflows.contracts import AgentInput, AgentResult, AgentUsage, ParentLink, Workspace
from workflows.registry import ChildTask

PARENT = ParentLink(workflow_id="p", agent_id="a1", tool_use_id="toolu_1")


def child(parent: ParentLink | None = PARENT, background: bool = False) -> AgentInput:
    return AgentInput(
        prompt="go",
        workspace=Workspace(root="/repo", host_queue="outlast-host-x"),
        parent=parent,
        background=background,
    )


@pytest.mark.parametrize(
    ("inp", "status", "backgrounded", "expected"),
    [
        (child(), "completed", False, True),
        (child(), "failed", False, False),  # the handle's failure has no transcript
        (child(), "killed", False, False),
        (child(), "completed", True, False),  # moved to the background while it ran
        (child(background=True), "completed", False, False),
        (child(parent=None), "completed", False, False),  # no parent to tell
    ],
)
def test_only_a_completed_sync_child_leaves_it_to_its_result(inp, status, backgrounded, expected):
    assert parent_reads_result(inp, status, backgrounded or inp.background) is expected


def test_the_end_read_from_a_result_carries_what_the_signal_carried():
    spawn = child()
    task = ChildTask(
        agent_id="a2",
        agent_type="general-purpose",
        description="d",
        workflow_id="p/a2",
        mode="sync",
        spawn=spawn,
    )
    result = AgentResult(
        status="completed",
        agent_id="a2",
        agent_type="general-purpose",
        final_text="ok",
        usage=AgentUsage(),
        turns=3,
        error="stopped early",
        output_file="/tmp/out.md",
        handoff_warning="careful",
    )
    end = end_from_result(task, 1, result)
    assert (end.error, end.output_file, end.handoff_warning) == (
        "stopped early",
        "/tmp/out.md",
        "careful",
    )
    assert end.final_text == "ok" and end.status == "completed" and end.description == "d"
