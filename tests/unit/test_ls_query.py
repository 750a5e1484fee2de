"""`outlast ls`'s visibility query and the outcome it shows: pure, no server."""

from __future__ import annotations

from outlast.inspect import _outcome, list_query


def test_a_pattern_is_found_by_its_attribute_or_else_by_its_type():
    query = list_query(None, "coordinator", include_children=True)
    assert "(Pattern = 'coordinator' OR (Pattern IS NULL AND WorkflowType = " in query
    assert "'CoordinatorWorkflow'))" in query and "ParentWorkflowId IS NULL" not in query
    assert "ShellTaskWorkflow" not in query  # a background command carries no pattern
    top = list_query("failed", "single", include_children=False)
    assert "ExecutionStatus = 'Failed'" in top and top.endswith("ParentWorkflowId IS NULL")


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
