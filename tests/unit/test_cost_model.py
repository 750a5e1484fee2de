"""Temporal Cloud billable actions counted from history events (bench/actions.py)."""

from bench.actions import (
    Event,
    actions_by_kind,
    billable_actions,
    exempt_upserts,
    model_turns,
    pattern_cost,
)


def events(*types: str) -> list[Event]:
    return [Event(type=t, event_id=i + 1) for i, t in enumerate(types)]


def test_one_agent_turn():
    # Client start, one model call, one tool, then the agent completes.
    history = events(
        "WORKFLOW_EXECUTION_STARTED",
        "WORKFLOW_TASK_SCHEDULED",
        "WORKFLOW_TASK_STARTED",
        "WORKFLOW_TASK_COMPLETED",
        "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES",
        "ACTIVITY_TASK_SCHEDULED",
        "ACTIVITY_TASK_STARTED",
        "ACTIVITY_TASK_COMPLETED",
        "WORKFLOW_TASK_SCHEDULED",
        "WORKFLOW_TASK_STARTED",
        "WORKFLOW_TASK_COMPLETED",
        "ACTIVITY_TASK_SCHEDULED",
        "ACTIVITY_TASK_STARTED",
        "ACTIVITY_TASK_COMPLETED",
        "WORKFLOW_TASK_SCHEDULED",
        "WORKFLOW_TASK_STARTED",
        "WORKFLOW_TASK_COMPLETED",
        "WORKFLOW_EXECUTION_COMPLETED",
    )
    assert billable_actions(history) == 1 + 1 + 2
    assert actions_by_kind(history) == {
        "start_workflow": 1,
        "upsert_search_attributes": 1,
        "schedule_activity": 2,
    }


def test_children_count_twice_and_their_own_start_not_at_all():
    parent = events(
        "WORKFLOW_EXECUTION_STARTED",
        "START_CHILD_WORKFLOW_EXECUTION_INITIATED",
        "START_CHILD_WORKFLOW_EXECUTION_INITIATED",
        "CHILD_WORKFLOW_EXECUTION_STARTED",
        "CHILD_WORKFLOW_EXECUTION_STARTED",
        "CHILD_WORKFLOW_EXECUTION_COMPLETED",
        "CHILD_WORKFLOW_EXECUTION_COMPLETED",
    )
    child = [Event("WORKFLOW_EXECUTION_STARTED", 1, started_by_workflow=True)]
    assert billable_actions(parent) == 1 + 2 * 2
    assert billable_actions(child) == 0


def test_retries_count_per_extra_attempt():
    history = [
        Event("ACTIVITY_TASK_SCHEDULED", 5),
        Event("ACTIVITY_TASK_STARTED", 6, attempt=3),
        Event("ACTIVITY_TASK_COMPLETED", 7),
    ]
    assert actions_by_kind(history) == {"schedule_activity": 1, "retry_activity": 2}


def test_markers_count_once_per_workflow_task():
    history = [
        Event("WORKFLOW_TASK_COMPLETED", 4),
        Event("MARKER_RECORDED", 5, workflow_task_completed_event_id=4),
        Event("MARKER_RECORDED", 6, workflow_task_completed_event_id=4),
        Event("MARKER_RECORDED", 7, workflow_task_completed_event_id=4),
        Event("WORKFLOW_TASK_COMPLETED", 10),
        Event("MARKER_RECORDED", 11, workflow_task_completed_event_id=10),
    ]
    assert billable_actions(history) == 2
    # Without task ids, markers belong to the workflow task completed just before them.
    bare = events(
        "WORKFLOW_TASK_COMPLETED",
        "MARKER_RECORDED",
        "MARKER_RECORDED",
        "WORKFLOW_TASK_COMPLETED",
        "MARKER_RECORDED",
    )
    assert billable_actions(bare) == 2


def test_local_activity_retries_come_from_metering_metadata():
    history = [Event("WORKFLOW_TASK_COMPLETED", 4, local_activity_retries=3)]
    assert actions_by_kind(history) == {"retry_local_activity": 3}


def test_signals_count_once_where_they_are_sent():
    sender = events(
        "SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED", "EXTERNAL_WORKFLOW_EXECUTION_SIGNALED"
    )
    from_workflow = [Event("WORKFLOW_EXECUTION_SIGNALED", 9, started_by_workflow=True)]
    from_client = [Event("WORKFLOW_EXECUTION_SIGNALED", 9)]
    assert billable_actions(sender) == 1
    assert billable_actions(from_workflow) == 0
    assert billable_actions(from_client) == 1


def test_signal_with_start_is_one_action():
    started = events("WORKFLOW_EXECUTION_STARTED", "WORKFLOW_EXECUTION_SIGNALED")
    assert actions_by_kind(started) == {"start_workflow": 1}
    # A later client signal of the same run is an action of its own.
    later = events(
        "WORKFLOW_EXECUTION_STARTED", "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_EXECUTION_SIGNALED"
    )
    assert billable_actions(later) == 2


def test_timers_updates_and_continue_as_new():
    history = events(
        "TIMER_STARTED",
        "TIMER_FIRED",
        "TIMER_STARTED",
        "TIMER_CANCELED",
        "WORKFLOW_EXECUTION_UPDATE_ACCEPTED",
        "WORKFLOW_EXECUTION_UPDATE_COMPLETED",
        "WORKFLOW_PROPERTIES_MODIFIED",
        "WORKFLOW_EXECUTION_CONTINUED_AS_NEW",
    )
    assert billable_actions(history) == 2 + 1 + 1 + 1
    next_run = [Event("WORKFLOW_EXECUTION_STARTED", 1, started_by_workflow=True)]
    assert billable_actions(next_run) == 0


def test_change_version_upserts_are_exempt():
    history = [
        Event("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", 6, search_attributes=("TemporalChangeVersion",)),
        Event("UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", 7, search_attributes=("AgentId", "AgentType")),
    ]
    assert billable_actions(history) == 1
    assert exempt_upserts(history) == 1


def test_nothing_else_is_billed():
    free = events(
        "WORKFLOW_TASK_SCHEDULED",
        "WORKFLOW_TASK_STARTED",
        "WORKFLOW_TASK_COMPLETED",
        "WORKFLOW_TASK_TIMED_OUT",
        "ACTIVITY_TASK_STARTED",
        "ACTIVITY_TASK_COMPLETED",
        "ACTIVITY_TASK_FAILED",
        "ACTIVITY_TASK_CANCEL_REQUESTED",
        "REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED",
        "WORKFLOW_EXECUTION_CANCEL_REQUESTED",
        "WORKFLOW_EXECUTION_COMPLETED",
    )
    assert billable_actions(free) == 0
    assert billable_actions([Event("WORKFLOW_TASK_FAILED", 3, cause="RESET_WORKFLOW")]) == 1
    assert billable_actions([Event("WORKFLOW_TASK_FAILED", 3, cause="UNHANDLED_COMMAND")]) == 0


def test_per_agent_and_per_turn():
    def agent_run(turns: int) -> list[Event]:
        out = [Event("WORKFLOW_EXECUTION_STARTED", 1, started_by_workflow=True)]
        for _ in range(turns):
            out.append(Event("ACTIVITY_TASK_SCHEDULED", activity_type="llm.call_model"))
            out.append(Event("ACTIVITY_TASK_SCHEDULED", activity_type="tool.read"))
        return out

    parent = [
        Event("WORKFLOW_EXECUTION_STARTED", 1),
        Event("ACTIVITY_TASK_SCHEDULED", 2, activity_type="llm.call_model"),
        Event("START_CHILD_WORKFLOW_EXECUTION_INITIATED", 3),
        Event("ACTIVITY_TASK_SCHEDULED", 4, activity_type="llm.call_model"),
    ]
    cost = pattern_cost(
        "subagents",
        [
            ("p", "AgentWorkflow", parent),
            ("p/c1", "AgentWorkflow", agent_run(2)),
            # A child that continued as new: two runs of one workflow id, one agent.
            ("p/c2", "AgentWorkflow", agent_run(1)),
            ("p/c2", "AgentWorkflow", agent_run(1)),
        ],
    )
    assert [w.workflow_id for w in cost.workflows] == ["p", "p/c1", "p/c2"]
    assert cost.workflows[2].runs == 2
    assert cost.agents == 3
    assert cost.turns == 2 + 2 + 2 == model_turns(parent) + 4
    assert cost.actions == (1 + 1 + 2 + 1) + 4 + 4
    assert cost.per_agent() == cost.actions / 3
    assert cost.per_turn() == cost.actions / 6
    assert cost.events == len(parent) + 5 + 3 + 3


def test_model_calls_are_turns_whether_regular_or_local():
    history = [
        Event("ACTIVITY_TASK_SCHEDULED", 5, activity_type="llm.call_model"),
        Event("ACTIVITY_TASK_SCHEDULED", 6, activity_type="tool.bash"),
        Event("MARKER_RECORDED", 9, activity_type="llm.call_model"),
        Event("MARKER_RECORDED", 10, activity_type="tool.read.local"),
    ]
    assert model_turns(history) == 2
