"""Temporal Cloud billable actions, estimated from workflow histories: pure functions.

The rules are Temporal Cloud's (docs.temporal.io/cloud/actions), as the server's own `action`
metric counts them (frontend telemetry interceptor: one action per billable command of a
completed workflow task, per started workflow, signal, query, heartbeat and activity retry):

- WORKFLOW_EXECUTION_STARTED: 1 for a client's start; 0 for a child's or a continue-as-new
  run's (counted at the parent's START_CHILD_WORKFLOW_EXECUTION_INITIATED, at the
  CONTINUED_AS_NEW);
- START_CHILD_WORKFLOW_EXECUTION_INITIATED: 2 (storing the intent, and the start);
- WORKFLOW_EXECUTION_CONTINUED_AS_NEW: 1;
- ACTIVITY_TASK_SCHEDULED: 1; ACTIVITY_TASK_STARTED with attempt n: n - 1 more (retries);
- MARKER_RECORDED (local activities, patch/version markers, side effects): 1 per workflow
  task that recorded any, however many; local activity retries: the count in the workflow
  task completion's metering metadata;
- TIMER_STARTED: 1;
- a signal: 1, counted where it is sent from a workflow (SIGNAL_EXTERNAL_..._INITIATED),
  else at the receiver's WORKFLOW_EXECUTION_SIGNALED; a signal-with-start that starts the run
  is 1 with its start;
- UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: 1 per upsert (several attributes in one: still 1), 0 if
  it only sets TemporalChangeVersion;
- WORKFLOW_PROPERTIES_MODIFIED (memo upsert), WORKFLOW_EXECUTION_OPTIONS_UPDATED,
  WORKFLOW_EXECUTION_UPDATE_ACCEPTED, NEXUS_OPERATION_SCHEDULED / _CANCEL_REQUESTED: 1 each;
- WORKFLOW_TASK_FAILED with cause RESET_WORKFLOW: 1;
- everything else (workflow tasks, activity and child results, completions, cancellation
  requests, timers firing or cancelled): 0.

Not in any history, so not in this estimate: activity heartbeats that reach the server, queries
(including the UI's), rejected updates, schedule operations, exports. `bench/cost_model.py`
compares the estimate with the dev server's own `action` metric, which does count them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MODEL_ACTIVITY = "llm.call_model"
CHANGE_VERSION = "TemporalChangeVersion"

FLAT: dict[str, tuple[str, int]] = {
    "START_CHILD_WORKFLOW_EXECUTION_INITIATED": ("start_child_workflow", 2),
    "WORKFLOW_EXECUTION_CONTINUED_AS_NEW": ("continue_as_new", 1),
    "ACTIVITY_TASK_SCHEDULED": ("schedule_activity", 1),
    "TIMER_STARTED": ("start_timer", 1),
    "SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED": ("signal", 1),
    "WORKFLOW_PROPERTIES_MODIFIED": ("modify_workflow_properties", 1),
    "WORKFLOW_EXECUTION_OPTIONS_UPDATED": ("update_workflow_options", 1),
    "WORKFLOW_EXECUTION_UPDATE_ACCEPTED": ("accept_update", 1),
    "NEXUS_OPERATION_SCHEDULED": ("schedule_nexus_operation", 1),
    "NEXUS_OPERATION_CANCEL_REQUESTED": ("cancel_nexus_operation", 1),
}
"""Event types worth a fixed number of actions each: (action kind, actions)."""


@dataclass(frozen=True)
class Event:
    """The parts of a history event that decide its billable actions.

    `type` is the event type without its `EVENT_TYPE_` prefix (`ACTIVITY_TASK_SCHEDULED`).
    """

    type: str
    event_id: int = 0
    attempt: int = 1
    """ACTIVITY_TASK_STARTED: the attempt that ran."""
    activity_type: str = ""
    """ACTIVITY_TASK_SCHEDULED: the activity's name; MARKER_RECORDED of a local activity:
    its name."""
    workflow_task_completed_event_id: int = 0
    """MARKER_RECORDED: the workflow task that recorded it (0: the last one before it)."""
    started_by_workflow: bool = False
    """WORKFLOW_EXECUTION_STARTED: a child, or a run that continues another (continue-as-new,
    retry, cron), so no client start; WORKFLOW_EXECUTION_SIGNALED: sent by a workflow."""
    search_attributes: tuple[str, ...] = ()
    """UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: the names it sets."""
    local_activity_retries: int = 0
    """WORKFLOW_TASK_COMPLETED: metering_metadata.nonfirst_local_activity_execution_attempts."""
    cause: str = ""
    """WORKFLOW_TASK_FAILED: its cause, without the `WORKFLOW_TASK_FAILED_CAUSE_` prefix."""


def event_actions(events: Sequence[Event]) -> list[tuple[str, int]]:
    """(action kind, actions) for each billable event of one run's history, in order.

    Kinds follow Temporal Cloud's usage names: `start_workflow`, `start_child_workflow`,
    `schedule_activity`, `retry_activity`, `record_markers`, `start_timer`, `signal`, ...
    """
    out: list[tuple[str, int]] = []
    marker_tasks: set[int] = set()
    task = 0  # the last completed workflow task seen
    for i, e in enumerate(events):
        t = e.type
        if t == "WORKFLOW_TASK_COMPLETED":
            task = e.event_id or -(i + 1)
            if e.local_activity_retries:
                out.append(("retry_local_activity", e.local_activity_retries))
        elif t == "WORKFLOW_EXECUTION_STARTED":
            if not e.started_by_workflow:
                out.append(("start_workflow", 1))
        elif t == "WORKFLOW_EXECUTION_SIGNALED":
            # Signal-with-start that started the run: its signal follows the start at once,
            # and the pair is one action.
            with_start = i == 1 and events[0].type == "WORKFLOW_EXECUTION_STARTED"
            if not e.started_by_workflow and not with_start:
                out.append(("signal", 1))
        elif t == "ACTIVITY_TASK_STARTED":
            if e.attempt > 1:
                out.append(("retry_activity", e.attempt - 1))
        elif t == "MARKER_RECORDED":
            key = e.workflow_task_completed_event_id or task
            if key not in marker_tasks:
                marker_tasks.add(key)
                out.append(("record_markers", 1))
        elif t == "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES":
            if not _change_version_only(e):
                out.append(("upsert_search_attributes", 1))
        elif t == "WORKFLOW_TASK_FAILED":
            if e.cause == "RESET_WORKFLOW":
                out.append(("reset_workflow", 1))
        elif t in FLAT:
            out.append(FLAT[t])
    return out


def billable_actions(events: Sequence[Event]) -> int:
    """Estimated Temporal Cloud actions of one run's history."""
    return sum(n for _, n in event_actions(events))


def actions_by_kind(events: Sequence[Event]) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for kind, n in event_actions(events):
        kinds[kind] += n
    return kinds


def exempt_upserts(events: Iterable[Event]) -> int:
    """Search attribute upserts that set only TemporalChangeVersion: not billed by Temporal
    Cloud, though the server's `action` metric counts them (the Python SDK upserts it for
    every `workflow.patched` it records)."""
    return sum(
        1
        for e in events
        if e.type == "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES" and _change_version_only(e)
    )


def _change_version_only(e: Event) -> bool:
    return set(e.search_attributes) == {CHANGE_VERSION}


def model_turns(events: Iterable[Event]) -> int:
    """Model calls scheduled, or recorded as local activities (`model.local_activity`): an
    agent's turns."""
    calls = (e for e in events if e.type in ("ACTIVITY_TASK_SCHEDULED", "MARKER_RECORDED"))
    return sum(1 for e in calls if e.activity_type == MODEL_ACTIVITY)


@dataclass
class AgentCost:
    """One workflow (every run of its id): an agent, or a pattern's orchestrating workflow."""

    workflow_id: str
    workflow_type: str
    runs: int = 0
    events: int = 0
    turns: int = 0
    actions: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    exempt: int = 0
    """Unbilled TemporalChangeVersion upserts (see `exempt_upserts`)."""

    def add_run(self, events: Sequence[Event]) -> None:
        self.runs += 1
        self.exempt += exempt_upserts(events)
        self.events += len(events)
        self.turns += model_turns(events)
        kinds = actions_by_kind(events)
        self.kinds.update(kinds)
        self.actions += sum(kinds.values())


@dataclass
class PatternCost:
    pattern: str
    workflows: list[AgentCost]

    @property
    def agents(self) -> int:
        """Workflows that called the model (a pattern's own workflow may not)."""
        return sum(1 for w in self.workflows if w.turns)

    @property
    def events(self) -> int:
        return sum(w.events for w in self.workflows)

    @property
    def turns(self) -> int:
        return sum(w.turns for w in self.workflows)

    @property
    def actions(self) -> int:
        return sum(w.actions for w in self.workflows)

    @property
    def exempt(self) -> int:
        return sum(w.exempt for w in self.workflows)

    @property
    def kinds(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for w in self.workflows:
            total.update(w.kinds)
        return total

    def per_agent(self) -> float:
        return self.actions / self.agents if self.agents else float("nan")

    def per_turn(self) -> float:
        return self.actions / self.turns if self.turns else float("nan")


def pattern_cost(pattern: str, runs: Iterable[tuple[str, str, Sequence[Event]]]) -> PatternCost:
    """Fold (workflow id, workflow type, events of one run) into one cost per workflow id."""
    by_id: dict[str, AgentCost] = {}
    for workflow_id, workflow_type, events in runs:
        cost = by_id.setdefault(workflow_id, AgentCost(workflow_id, workflow_type))
        cost.add_run(events)
    return PatternCost(pattern, sorted(by_id.values(), key=lambda w: w.workflow_id))
