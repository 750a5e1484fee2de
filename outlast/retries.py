"""What a workflow's activities are retrying, from the server's description of it.

A model call that the API keeps refusing (529 overloaded, a 5xx) is retried for hours by
Temporal, while the agent's own status still says it is calling the model: nothing on
`outlast run`, `attach` or `show` told the person why nothing moved (a user test, 2026-12-05).
"""

from __future__ import annotations

import asyncio
import difflib
import re
from datetime import UTC, datetime

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import WorkflowTaskFailedCause
from temporalio.api.workflow.v1 import PendingActivityInfo
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.service import RPCError

from outlast.patterns import WORKFLOW_TYPES

FRIENDLY = {"llm.call_model": "model call", "llm.compact": "summary"}
MESSAGE_CHARS = 160


def retrying(desc: WorkflowExecutionDescription, now: datetime | None = None) -> str | None:
    """One line for the activity of `desc` that has failed and is being tried again (the one
    with most attempts), or None when none is. None of a closed run: the server may still
    list an activity its cancel left pending (a user test, 2026-12-06: `show` gave a killed
    worker's model call as `retrying (attempt 3)`)."""
    if desc.status not in (None, WorkflowExecutionStatus.RUNNING):
        return None
    pending = [
        p
        for p in desc.raw_description.pending_activities
        if p.attempt > 1 and p.HasField("last_failure")
    ]
    if not pending:
        return None
    worst = max(pending, key=lambda p: p.attempt)
    return retry_line(worst, now or datetime.now(UTC))


def same_retry(a: str | None, b: str | None) -> bool:
    """Whether two lines say the same retry (the countdown to its next try aside)."""
    return (a or "").split("; next try")[0] == (b or "").split("; next try")[0]


def retry_line(p: PendingActivityInfo, now: datetime) -> str:
    name = p.activity_type.name
    what = FRIENDLY.get(name, name)
    failure = p.last_failure
    message = (failure.message or failure.application_failure_info.type or "failed").strip()
    if failure.cause.message:
        message = f"{message}: {failure.cause.message.strip()}"
    message = " ".join(message.split())
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    line = f"{what} retrying (attempt {p.attempt}): {message}"
    if p.HasField("next_attempt_schedule_time"):
        wait = (p.next_attempt_schedule_time.ToDatetime(UTC) - now).total_seconds()
        if wait > 1:
            line += f"; next try in {wait:.0f}s"
    return line


FAILING_TASK_ATTEMPTS = 4
"""A workflow task on its fourth attempt has failed three times in a row: not a lost worker
(`outlast kill` reads it so too)."""

SETUP_HINT = {
    "WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES": (
        "the namespace lacks Outlast's search attributes: `outlast setup` registers them"
    ),
}


async def failing_task(client: Client, desc: WorkflowExecutionDescription) -> str | None:
    """One line for a running workflow whose workflow task keeps failing, with why (the last
    `WorkflowTaskFailed` event, read from the history's end), or None. Such a workflow looks
    merely running: one started with search attributes on a namespace without them stalls
    so, with nothing in `show` (a user test, 2026-12-05); a workflow a deploy made
    nondeterministic too.

    From the first failure: where the history's newest workflow-task outcome is a
    `WorkflowTaskFailed` (a task that fails once fails on every attempt, as one started with
    a misspelt type: `show` said nothing until the third, 10 to 20 s on; a user test,
    2026-12-07). Said by the attempt waiting, not a count of failures: the server does not
    count a failure that took the task off a worker's sticky queue, and writes only a
    streak's first failure to history. A timeout is a worker lost meanwhile, which `show`
    says of itself: a streak that began so is said from `FAILING_TASK_ATTEMPTS` on."""
    raw = desc.raw_description
    if desc.status != WorkflowExecutionStatus.RUNNING or not raw.HasField("pending_workflow_task"):
        return None
    task = raw.pending_workflow_task
    line = f"its workflow task has failed (attempt {task.attempt} waits)"
    known = task.attempt >= FAILING_TASK_ATTEMPTS
    try:
        page = await client.workflow_service.get_workflow_execution_history_reverse(
            GetWorkflowExecutionHistoryReverseRequest(
                namespace=client.namespace,
                execution=WorkflowExecution(workflow_id=desc.id, run_id=desc.run_id),
                maximum_page_size=100,
            )
        )
    except RPCError:
        return line if known else None
    failed = next((e for e in page.history.events if _task_outcome(e)), None)
    if failed is None or not failed.HasField(_FAILED):
        return line if known else None
    attrs = failed.workflow_task_failed_event_attributes
    cause = WorkflowTaskFailedCause.Name(attrs.cause)
    message = " ".join((attrs.failure.message or cause).split())
    if (unknown := _NOT_REGISTERED.search(message)) is not None:
        message = unknown.group(0)  # the hint lists the types, whole
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    hint = task_failure_hint(cause, attrs.failure.message)
    return f"{line}: {message}" + (f"; {hint}" if hint else "")


_NOT_REGISTERED = re.compile(r"Workflow class (\S+) is not registered on this worker")
"""The SDK's words (temporalio.worker._workflow) for a start of a type no worker has: a
newer SDK that words it otherwise only loses the hint."""


def unknown_type_hint(name: str) -> str:
    """A start of a workflow type no worker has: its message's list of the types there are
    was cut off in `show`'s line (a user test, 2026-12-07)."""
    types = sorted(set(WORKFLOW_TYPES.values()))
    close = difflib.get_close_matches(name, types, n=1, cutoff=0.85)
    meant = f"did you mean {close[0]}? " if close else ""
    return (
        f"no worker has a workflow type {name}: {meant}Outlast's are {', '.join(types)}; "
        "terminate it and start it again with one of them"
    )


_TOO_MANY_ARGS = re.compile(
    r"\.(?:__init__|run)\(\) takes from 1 to 2 positional arguments but (\d+) were given"
)


def task_failure_hint(cause: str, message: str) -> str | None:
    """What to do about a workflow task that fails on every attempt, where it is known.

    A start with two inputs (`temporal workflow start --input A --input B`) cannot be refused
    by the workflow: the SDK hands every input to its init or run, whose TypeError fails the
    task before any of the workflow's code runs, and so on every attempt."""
    hint = SETUP_HINT.get(cause)
    if hint is not None:
        return hint
    if (unknown := _NOT_REGISTERED.search(message or "")) is not None:
        return unknown_type_hint(unknown.group(1))
    given = _TOO_MANY_ARGS.search(message or "")
    if given is not None:
        return (
            f"it was started with {int(given.group(1)) - 1} inputs, and takes one JSON object: "
            "terminate it and start it again with one --input"
        )
    return None


_FAILED = "workflow_task_failed_event_attributes"
_OUTCOMES = (
    _FAILED,
    "workflow_task_timed_out_event_attributes",
    "workflow_task_completed_event_attributes",
)


def _task_outcome(event) -> bool:
    return any(event.HasField(name) for name in _OUTCOMES)


class RetryWatch:
    """`retrying` for a followed workflow, asked of the server at most every EVERY_S (a
    follow polls its status five times a second)."""

    EVERY_S = 2.0

    def __init__(self, handle: WorkflowHandle) -> None:
        self._handle = handle
        self._asked_at = float("-inf")
        self._line: str | None = None

    async def line(self) -> str | None:
        now = asyncio.get_running_loop().time()
        if now - self._asked_at >= self.EVERY_S:
            self._asked_at = now
            try:
                self._line = retrying(await self._handle.describe())
            except RPCError:
                pass  # the server is away for a moment: the last line stands
        return self._line


class TreeRetries:
    """What a followed workflow and its running children (a pattern's stages, members and
    forks; an agent's sub-agents) are retrying, asked of the server at most every EVERY_S;
    `news` gives each retry once per attempt. Without a client, the workflow's own only."""

    EVERY_S = RetryWatch.EVERY_S
    MAX_CHILDREN = 8
    """Running children described per ask (a team of twenty is asked about eight)."""

    def __init__(self, handle: WorkflowHandle, client: Client | None) -> None:
        self._handle, self._client = handle, client
        self._asked_at = float("-inf")
        self._shown: dict[str, str] = {}

    async def news(self) -> list[tuple[str, str]]:
        """(who, line) for each retry not shown yet: who is "" for the workflow itself, else
        the child's id below it (`fork-1`, `implementer`, ...)."""
        now = asyncio.get_running_loop().time()
        if now - self._asked_at < self.EVERY_S:
            return []
        self._asked_at = now
        try:
            asked, lines = await self._lines()
        except RPCError:
            return []  # the server is away for a moment: nothing new to say
        news = [
            (self._who(wid), line)
            for wid, line in lines.items()
            if not same_retry(line, self._shown.get(wid))
        ]
        # A retry that ended and comes back is news again; one of a child this ask left out
        # (visibility lags, or more than MAX_CHILDREN run) is not.
        kept = {wid: line for wid, line in self._shown.items() if wid not in asked}
        self._shown = kept | lines
        return news

    async def _lines(self) -> tuple[set[str], dict[str, str]]:
        """The workflows asked, and the retry line of each that has one."""
        handles = [self._handle]
        if self._client is not None:
            query = f'ParentWorkflowId = "{self._handle.id}" AND ExecutionStatus = "Running"'
            async for w in self._client.list_workflows(query, limit=self.MAX_CHILDREN):
                handles.append(self._client.get_workflow_handle(w.id, run_id=w.run_id))
        lines: dict[str, str] = {}
        for handle in handles:
            if (line := retrying(await handle.describe())) is not None:
                lines[handle.id] = line
        return {h.id for h in handles}, lines

    def _who(self, workflow_id: str) -> str:
        if workflow_id == self._handle.id:
            return ""
        return workflow_id.removeprefix(f"{self._handle.id}/")
