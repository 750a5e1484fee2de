"""Following a pattern's run: its stages, members, rounds or forks as they change, the
retries under it, and its result once it closes."""

from __future__ import annotations

import asyncio
import functools
from datetime import timedelta
from typing import Any

from rich.console import Console
from rich.markup import escape
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError

from outlast.live_tree import doing
from outlast.progress import follow, outcome, print_retries
from outlast.question_view import plain
from outlast.retries import TreeRetries
from outlast.server_away import lasting_result
from outlast.waiting import stage_agent
from workflows.contracts import AgentStatus, ForkOutcome
from workflows.pattern_contracts import (
    MAX_STAGE_ATTEMPTS,
    PipelineView,
    StageOutcome,
    TeamView,
    VerificationRound,
)

POLL_S = 0.3
LAST_POLL_S = 3.0
"""The poll after the result: a closed workflow's query replays it on a worker, and one that
has none left fails it; neither may hold up the result."""


async def follow_pattern(
    handle: WorkflowHandle, pattern: str, console: Console, client: Client | None = None
) -> Any:
    """Print progress until the workflow closes; its result, or None if it did not complete."""
    if pattern in ("single", "coordinator"):
        return await follow(handle, console, client)
    result_task = asyncio.create_task(lasting_result(handle, console))
    seen: dict[str, str] = {}
    retries = TreeRetries(handle, client)
    at_work: list[tuple[str, str]] = []
    at_work_due = 0.0
    loop = asyncio.get_running_loop()
    while True:
        done = result_task.done()
        if not done:
            print_retries(console, await retries.news())
        try:
            lines = await _progress(handle, pattern, LAST_POLL_S if done else None)
            if not done and client is not None and loop.time() >= at_work_due:
                at_work = await _agent_at_work(client, handle.id, pattern, lines)
                # A fork-join's forks are found by a visibility list and each asked: not
                # every poll (as TreeRetries, for the same server's sake).
                at_work_due = loop.time() + (FORKS_EVERY_S if pattern == "fork-join" else 0)
            if not done:
                lines += at_work
            for key, line in lines:
                if seen.get(key) != line:
                    seen[key] = line
                    # Names and subjects a model wrote are shown as written, not as markup.
                    console.print(f"[cyan]>[/] {escape(plain(line))}")
        except (RPCError, WorkflowQueryFailedError):
            pass  # no worker has picked it up yet (or, at the end, none is left to answer)
        if done:
            # That last poll gave what changed since the one before: the last stage's end.
            return await outcome(result_task, handle, console)
        await asyncio.wait({result_task}, timeout=POLL_S)


async def _progress(
    handle: WorkflowHandle, pattern: str, timeout_s: float | None = None
) -> list[tuple[str, str]]:
    query = functools.partial(
        handle.query, rpc_timeout=timedelta(seconds=timeout_s) if timeout_s else None
    )
    if pattern == "pipeline":
        return pipeline_lines(await query("pipeline", result_type=PipelineView), handle.id)
    if pattern == "team":
        view = await query("team", result_type=TeamView)
        lines = [
            (f"member:{m.name}", f"{m.name} ({m.agent_type}): {m.state}") for m in view.members
        ]
        lines += [
            (
                f"task:{t.id}",
                f"task #{t.id} {t.subject}: {t.status}" + (f" ({t.owner})" if t.owner else ""),
            )
            for t in view.tasks
        ]
        return lines
    if pattern == "verified":
        rounds = await query("rounds", result_type=list[VerificationRound])
        return [(f"round:{r.round}", round_line(r)) for r in rounds]
    forks = await query("forks", result_type=list[ForkOutcome])
    return [(f"fork:{f.index}", f"fork {f.index + 1}: {_ended(f)}") for f in forks]


def pipeline_lines(view: PipelineView, workflow_id: str) -> list[tuple[str, str]]:
    """A pipeline's follow lines, by key: each stage attempt's end, the running stage, the
    decisions held on it, the stage that waits for approval and the commands that decide it."""
    lines = [
        (f"stage:{s.name}:{s.attempt}", f"stage {_attempt(s.name, s.attempt)}: {_ended(s)}")
        for s in view.stages
    ]
    if view.current:
        # Its attempt too: a re-run read `stage look: running` between `(attempt 2):
        # rejected` and `(attempt 3): turn 1` (a user test, 2026-12-07).
        attempt = 1 + sum(s.name == view.current for s in view.stages)
        running = f"stage {_attempt(view.current, attempt)}: running"
        lines.append((f"stage:{view.current}:run", running))
    for held in view.held_decisions:  # taken ahead of the stage's end
        lines.append((f"held:{held}", f"decision held until the stage ends: {held}"))
    if view.awaiting_approval:
        stage, attempt = view.awaiting_approval, view.awaiting_attempt or 1
        rerun = " [--rerun]" if attempt < MAX_STAGE_ATTEMPTS else ""  # the last may not
        # Keyed by attempt too: a re-run's wait is news, though its line reads the same.
        lines.append(
            (
                f"approve:{stage}:{attempt}",
                f"stage {stage} (attempt {attempt}) waits for approval: outlast approve "
                f"{workflow_id} {stage} --attempt {attempt} (or outlast reject {workflow_id} "
                f"{stage} --attempt {attempt} --feedback '...'{rerun}); its output: "
                f"outlast transcript {stage_agent(workflow_id, stage, attempt)}",
            )
        )
    return lines


def _ended(end: StageOutcome | ForkOutcome) -> str:
    """A stage's or fork's end as `show` says it: a stopped one read `completed` (a user
    test, 2026-12-06)."""
    if end.stopped:
        return "stopped"
    if isinstance(end, ForkOutcome) and end.max_turns_reached:
        return f"{end.status} (max turns reached)"
    return end.status


def _attempt(stage: str, attempt: int) -> str:
    """A stage run again (rejected with --rerun) is told apart from its first run."""
    return stage if attempt <= 1 else f"{stage} (attempt {attempt})"


async def _agent_at_work(
    client: Client, workflow_id: str, pattern: str, lines: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """What the agent a pipeline's stage or a verified task's round runs is doing, by turn:
    a long stage or round printed nothing between its start and its end (a user test).
    `lines` are the pattern's own, just read."""
    if pattern == "pipeline":
        running = [k for k, _ in lines if k.startswith("stage:") and k.endswith(":run")]
        current = running[0][len("stage:") : -len(":run")] if running else None
        if current is None:
            return []
        # The stage's earlier runs are listed by attempt: this run is the next.
        earlier = [k for k, _ in lines if k.startswith(f"stage:{current}:")]
        attempt = len([k for k in earlier if not k.endswith(":run")]) + 1
        suffix = f"-{attempt}" if attempt > 1 else ""
        label = f"stage {_attempt(current, attempt)}"
        status = await _running_status(client, f"{workflow_id}/{current}{suffix}")
        return stage_doing(f"agent:{current}:{attempt}", label, status)
    if pattern == "verified":
        round_no = 1 + sum(1 for k, _ in lines if k.startswith("round:"))
        for who, child in (("verifier", f"verify-{round_no}"), ("implementer", "implementer")):
            status = await _running_status(client, f"{workflow_id}/{child}")
            if status is not None:
                return [(f"agent:{round_no}:{who}", f"round {round_no}: {who}: {doing(status)}")]
    if pattern == "fork-join":
        return await _forks_at_work(client, workflow_id, lines)
    return []


def stage_doing(key: str, label: str, status: AgentStatus | None) -> list[tuple[str, str]]:
    """The line of what a stage's agent does. Its first phase, `starting`, is left out: the
    stage's own line already said `running`, and a follow printed `stage X: running` and
    then `stage X: starting` (a user test, 2026-12-07)."""
    if status is None or status.state == "starting":
        return []
    return [(key, f"{label}: {doing(status)}")]


MAX_FORKS_ASKED = 8
"""Running forks asked for their status at once (a follow of many shows the first)."""
FORKS_EVERY_S = 1.5
"""How often a follow asks a fork-join's running forks what they are doing."""


async def _forks_at_work(
    client: Client, workflow_id: str, lines: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """Each running fork's turn: off a terminal a follow printed nothing between the start
    and the first fork's end (a user test, 2026-12-06: 200 s of silence)."""
    ended = {k.removeprefix("fork:") for k, _ in lines if k.startswith("fork:")}
    if '"' in workflow_id or "\\" in workflow_id:
        return []  # not to be quoted in a visibility query
    query = f'ParentWorkflowId = "{workflow_id}" AND ExecutionStatus = "Running"'
    try:
        running = {w.id async for w in client.list_workflows(query, limit=100)}
    except RPCError:
        return []
    forks = []
    for wid in running:
        name = wid.removeprefix(f"{workflow_id}/")
        number = name.removeprefix("fork-")
        if name.startswith("fork-") and number.isdigit() and str(int(number) - 1) not in ended:
            forks.append((int(number), wid))
    forks = sorted(forks)[:MAX_FORKS_ASKED]
    statuses = await asyncio.gather(*(_running_status(client, wid) for _, wid in forks))
    return [
        (f"agent:fork-{n}", f"fork {n}: {doing(status)}")
        for (n, _), status in zip(forks, statuses, strict=True)
        if status is not None
    ]


async def _running_status(client: Client, workflow_id: str) -> AgentStatus | None:
    """A running agent's `status`; None if it is not running (a closed one's query would
    replay its whole history on a worker) or cannot answer yet."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
            return None
        return at_work(await handle.query("status", result_type=AgentStatus))
    except (RPCError, WorkflowQueryFailedError):
        return None


def at_work(status: AgentStatus) -> AgentStatus | None:
    """`status`, unless its agent is only ending (its cleanup, its parent told): the stage's
    or round's own line says how it ended, and a follow printed `stage plan: finished` and
    then `stage plan: completed` (a user test, 2026-12-06)."""
    return None if status.state == "finished" else status


def round_line(r: VerificationRound) -> str:
    """A verified task's round as a follow prints it: "VERDICT: FAIL the implementer was
    stopped" ran the verdict into its reason (a user test, 2026-12-07)."""
    why = f": {r.verdict_reason}" if r.verdict_reason else ""
    return f"round {r.round}: {'VERDICT: ' + r.verdict if r.verified else 'not verified'}{why}"
