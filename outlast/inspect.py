"""Reading Outlast's workflows for people and scripts: the agent tree behind `outlast show`
(the listing behind `outlast ls` is `outlast.listing`). Plain data (pydantic), so `--json`
prints exactly this."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import timedelta

from pydantic import BaseModel, PrivateAttr, ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from activities.resume import AGENT_TYPES
from activities.run_history import UNDELIVERED_MEMO
from outlast.end_reasons import (
    REASON,
    UNDECODED_INPUT,
    asked_to_end,
    stop_words,
    why_it_ended,
)
from outlast.listing import Row, row_of
from outlast.passed_reasons import pass_on_the_reason
from outlast.plan_view import waiting_plan
from outlast.question_view import plain, waiting_question
from outlast.refusals_view import (
    CLOSED_QUERY_S,
    CLOSED_REFUSALS_QUERY,
    REFUSALS_QUERY,
    refused_signals,
)
from outlast.retries import failing_task, retrying
from outlast.run_chain import first_run_started
from outlast.silence import NO_WORKER_ANSWER, NO_WORKER_REPLAY, NOT_ASKED, Silence
from outlast.stopped_with_it import unstarted_of
from outlast.tree_text import SHUT_DOWN, STOPPED_REJECTED, STOPPED_WITH_TEAM, queued_line
from outlast.waiting import stage_agent
from workflows import search_attributes as sa
from workflows.contracts import WORKTREE_MEMO, AgentStatus
from workflows.pattern_contracts import (
    PipelineView,
    TeamResult,
    VerificationRound,
    lost_lead_text,
)

STATUS_TIMEOUT_S = 3.0


class Node(BaseModel):
    row: Row
    agent_type: str | None = None
    turns: int | None = None
    tokens: int | None = None
    tool_uses: int | None = None
    output_tokens: int | None = None
    """The output tokens of its every model call (of every run it counts)."""
    unread_messages: int | None = 0
    """Messages it never read: its stop (or its turn limit, or its kill) came before its next
    turn. None: not known (no worker answered the query that replays a killed run)."""
    unknown: str | None = None
    """What `show` could not learn of it, and why."""
    undelivered: int = 0
    """Its background sub-agents' and commands' ends that came after its last turn, which it
    never read."""
    duration_ms: int | None = None
    verdict: str | None = None
    worktree: str | None = None
    """A kept worktree the agent's work is in (its result's path and branch)."""
    refused: list[str] = []
    """Its latest refused signals, with why (a decision queued while no worker ran, then
    refused, was said nowhere: a user test, 2026-12-06)."""
    outcome: str | None = None
    """The result's own status (completed/failed/killed, passed, ...), once closed; what a
    running agent is doing (its `status` query's state)."""
    runs: int = 1
    """Its runs that count: the latest, and each earlier one whose figures are known (a
    resumed agent runs again under its id); turns, tokens, tool uses and time add them up."""
    retrying: str | None = None
    """What a running workflow's activities are trying again (`outlast/retries.py`)."""
    error: str | None = None
    """Why it failed, timed out or was terminated, in one line."""
    queued: list[str] = []
    """A running coordinator's workers that wait for their files (no workflow yet), each in
    a line: name, id, phase, files and whom it waits for."""
    unstarted: list[str] = []
    """An ended coordinator's workers that were queued when it ended, and never started:
    said nowhere, though its conversation said each would start by itself (a user test)."""
    children: list[Node] = []
    _stages: list[dict] = PrivateAttr(default_factory=list)
    """A running pipeline's stage attempts so far, as its `pipeline` query gave them."""


class NotFound(LookupError):
    """No workflow with that id; the message says so."""


async def agent_tree(
    client: Client,
    workflow_id: str,
    depth: int = 0,
    queries_until: float | None = None,
    silence: Silence | None = None,
) -> Node:
    """The workflow and, below it, every child it started (by the server's parent link).
    Running agents are asked for their figures until `queries_until` (the event loop's
    clock; STATUS_TIMEOUT_S from now by default), however many there are: a worker that
    does not answer costs the tree that long once, not once per agent."""
    if queries_until is None:
        queries_until = asyncio.get_running_loop().time() + STATUS_TIMEOUT_S
    silence = silence if silence is not None else Silence()
    handle = client.get_workflow_handle(workflow_id)
    try:
        desc = await handle.describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            raise NotFound(f"no workflow {workflow_id}") from None
        raise
    node = Node(row=row_of(desc), retrying=retrying(desc) or await failing_task(client, desc))
    node.row.started = await first_run_started(client, desc)
    if desc.workflow_type in AGENT_TYPES:
        # Its attribute until its result or its worker says: without a worker, a fork or a
        # member read as its pattern (`fork-join, running`; a user test).
        node.agent_type = desc.typed_search_attributes.get(sa.AGENT_TYPE)
    result = None
    if desc.status is not None and desc.status.name == "COMPLETED":
        result = await handle.result(follow_runs=False)
        _fill_from_result(node, result)
        if depth == 0 and desc.workflow_type in CLOSED_REFUSALS_QUERY:
            # Why a signal did nothing is asked after the end too (a user test, 2026-12-06);
            # of the workflow asked about only: each answer replays a whole history.
            left = min(queries_until - asyncio.get_running_loop().time(), CLOSED_QUERY_S)
            if left >= 0.1:
                query = CLOSED_REFUSALS_QUERY[desc.workflow_type]
                refused = await refused_signals(client, desc, timedelta(seconds=left), query)
                node.refused = refused if refused is not None else node.refused
    elif desc.status is not None:
        # Running, or ended with no result (failed, killed, terminated): what it has spent,
        # unless its input never decoded (it spent nothing, and cannot be asked).
        # A kill's reason too, of a child as of the workflow asked about (a page of its
        # history's end each).
        # Of the run described: a resume may have started another since.
        ran = client.get_workflow_handle(desc.id, run_id=desc.run_id)
        node.error, kind = await why_it_ended(ran, desc.status)
        if kind != UNDECODED_INPUT:
            await _fill_from_status(node, client, desc, queries_until, silence)
        if desc.status != WorkflowExecutionStatus.RUNNING:
            memo = await desc.memo()
            node.unstarted = unstarted_of(None, memo)
            ends = memo.get(UNDELIVERED_MEMO)
            node.undelivered = len(ends) if isinstance(ends, list) else 0
            # A killed or failed run's kept worktree: it has no result to name it.
            kept = memo.get(WORKTREE_MEMO)
            if isinstance(kept, dict) and kept.get("path"):
                node.worktree = kept_worktree(str(kept["path"]), kept.get("branch"))
    if desc.workflow_type in AGENT_TYPES:
        if desc.status == WorkflowExecutionStatus.CANCELED:
            node.outcome = "killed"  # TaskStop, `outlast kill`: what `run` and the parent say
        await _add_earlier_runs(client, node, desc, queries_until, silence)
    if depth < 6:
        query = f'ParentWorkflowId = "{workflow_id}"'
        # Once per child: one that continued as new lists each of its runs.
        kids = {w.id: w async for w in client.list_workflows(query, limit=100)}
        for kid in sorted(kids.values(), key=lambda w: w.start_time):
            node.children.append(
                await agent_tree(client, kid.id, depth + 1, queries_until, silence)
            )
    if isinstance(result, dict) and result.get("team_name"):
        _as_the_team_says(node, result)
        if result.get("status") == "stopped" and not node.error:
            with contextlib.suppress(RPCError):
                words = await stop_words(client.get_workflow_handle(desc.id, run_id=desc.run_id))
                node.error = f"{REASON}{words}" if words else None
    if isinstance(result, dict) and isinstance(result.get("stages"), list):
        _as_the_pipeline_says(node, result["stages"])
        _where_the_pipeline_ended(node, result)
    elif node._stages:  # running: a rejected attempt read `completed` until the end
        _as_the_pipeline_says(node, node._stages)
    if depth == 0:
        await pass_on_the_reason(client, node)
    return node


def _as_the_pipeline_says(node: Node, stages: list) -> None:
    """A stage attempt a person rejected reads `rejected`: its agent completed its workflow,
    and `show` said only that (a user test, 2026-12-07)."""
    rejected = {
        s.get("workflow_id"): bool(s.get("stopped"))
        for s in stages
        if isinstance(s, dict) and s.get("status") == "rejected"
    }
    for child in node.children:
        if child.row.workflow_id in rejected:
            # One a person stopped, then rejected, read only `stopped`: it was the attempt
            # whose rejection ended the pipeline (a user test, 2026-12-07).
            stopped = rejected[child.row.workflow_id] and child.outcome == "stopped"
            child.outcome = STOPPED_REJECTED if stopped else "rejected"


def _verified(last: object) -> bool:
    """A verifier reported on the round: a verdict, not a FAIL where none ran."""
    try:
        return VerificationRound.model_validate(last).verified
    except ValueError:  # a round of a release this one cannot read
        return False


def _where_the_pipeline_ended(node: Node, result: dict) -> None:
    """The stage attempt that ended the pipeline says so where its agent completed (a
    verification report with no VERDICT line): it read plain `completed` (a user test,
    2026-12-07)."""
    named = [s for s in result["stages"] if isinstance(s, dict)]
    named = [s for s in named if s.get("name") == result.get("failed_stage")]
    if not named or result.get("status") in (None, "completed"):
        return
    for child in node.children:
        if child.row.workflow_id == named[-1].get("workflow_id") and child.outcome == "completed":
            child.outcome = f"completed; the pipeline {result['status']} here"


def _as_the_team_says(node: Node, result: dict) -> None:
    """A team's members as its result has them (user test 3): one stopped while idle ended
    its own run completed and not stopped, on workers before 2026-12-05; one at work when
    the team's own end stopped it says `stopped` of itself, where the team's result does
    not (the team's end stops every member: no news)."""
    members = {m.get("workflow_id"): m for m in result.get("members") or []}
    for child in node.children:
        member = members.get(child.row.workflow_id)
        if member is None or child.row.status != "completed":
            continue
        if member.get("stopped"):
            child.outcome = "stopped"
        elif member.get("shutdown_approved"):
            # It read plain `completed` (a user test, 2026-12-07).
            child.outcome = SHUT_DOWN
        elif child.outcome == "stopped" and result.get("status") == "stopped":
            # A person's stop of the team ended its turn, with the team's reason: the tree
            # read plain `completed` where its own `show` and `ls` said stopped (a user test,
            # 2026-12-07).
            child.outcome = STOPPED_WITH_TEAM
        elif child.outcome == "stopped":
            # The end of a team gone quiet stopped it: no news, and no reason to show.
            child.outcome = None
            if child.error and child.error.startswith(REASON):
                child.error = None


async def _fill_from_status(
    node: Node,
    client: Client,
    desc: WorkflowExecutionDescription,
    until: float,
    silence: Silence,
) -> None:
    """An agent's figures from its `status` query: a running one's so far, or what one that
    ended without a result had spent (a worker replays the closed run to answer); none when
    no worker answers before `until` (the tree is still shown)."""
    began = asyncio.get_running_loop().time()
    left = until - began

    def unheard(e: RPCError) -> bool:
        return silence.heard_nothing(desc, e, began, failing=bool(node.retrying))

    if desc.workflow_type == "PipelineWorkflow" and left >= 0.1 and not silence.known(desc):
        await _fill_pipeline_wait(node, client, desc, timedelta(seconds=left), unheard)
    if desc.workflow_type in REFUSALS_QUERY and left >= 0.1 and not silence.known(desc):
        refused = await refused_signals(client, desc, timedelta(seconds=left), None, unheard)
        node.refused = refused if refused is not None else node.refused
    if silence.known(desc):
        await _no_answer(client, node, desc)
        return
    if desc.workflow_type not in AGENT_TYPES:
        return
    if left < 0.1:
        if desc.status != WorkflowExecutionStatus.RUNNING:
            node.unknown, node.unread_messages = NOT_ASKED, None
        return
    try:
        run = client.get_workflow_handle(desc.id, run_id=desc.run_id)
        status = await run.query(
            "status", result_type=AgentStatus, rpc_timeout=timedelta(seconds=left)
        )
    except RPCError as e:
        if unheard(e):
            # The server lists a dead worker's poller for a minute and more, so the tree
            # said nothing of it that long (a user test, 2026-12-06).
            await _no_answer(client, node, desc)
        return
    except WorkflowQueryFailedError:
        return
    node.agent_type, node.turns = status.agent_type, status.turn
    node.refused = list(status.refused_signals)
    node.tokens, node.tool_uses = status.usage.total_tokens, status.usage.tool_uses
    node.output_tokens = status.usage.tokens.output_tokens
    if desc.status != WorkflowExecutionStatus.RUNNING and desc.start_time and desc.close_time:
        # Killed, failed or terminated: its time up to the end, where the status has it up
        # to its last turn (a resumed agent's `show` left such runs' time out: a user test,
        # 2026-12-06).
        started = await first_run_started(client, desc)  # after continues as new, the first's
        ran_ms = int((desc.close_time - started).total_seconds() * 1000)
        node.duration_ms = max(status.usage.duration_ms, ran_ms) or None
        # Mail its kill left unread, as a stopped run's result counts it.
        node.unread_messages = status.unread_messages
    if desc.status == WorkflowExecutionStatus.RUNNING:
        node.outcome = status.state
        if status.stop_requested:
            # A stop waits for the tool running now: `show` said only `running_tools` for as
            # long as that took (a user test, 2026-12-06: six minutes of a `sleep`).
            node.outcome += ", stop requested: it ends after its current turn"
        node.queued = [queued_line(q) for q in status.queued]
        left = timedelta(seconds=max(until - asyncio.get_running_loop().time(), 0.1))
        if status.state == "waiting" and (plan := await waiting_plan(run, left)):
            # The command where the person decides (a sub-agent's parent decides its own).
            command = f": outlast approve {desc.id}" if plan.approver == "the user" else ""
            node.outcome = f"plan waits for approval by {plain(plan.approver)}{command}"
        elif status.state == "waiting" and await waiting_question(run, left):
            node.outcome = f"questions wait for answers: outlast answer {desc.id}"


async def _no_answer(client: Client, node: Node, desc: WorkflowExecutionDescription) -> None:
    """No worker answered for `desc`: a running workflow's state, or an ended agent's
    figures, are not known. A kill or stop sent meanwhile is in its history, waiting for a
    worker: `show` said nothing of it (a user test, 2026-12-07)."""
    if desc.status == WorkflowExecutionStatus.RUNNING:
        node.outcome = NO_WORKER_ANSWER
        with contextlib.suppress(RPCError):
            asked = await asked_to_end(client.get_workflow_handle(desc.id, run_id=desc.run_id))
            if asked is not None:
                node.outcome += f"; {asked} requested, taken once a worker runs"
    elif desc.workflow_type in AGENT_TYPES:
        node.unknown, node.unread_messages = NO_WORKER_REPLAY, None


async def _fill_pipeline_wait(
    node: Node,
    client: Client,
    desc: WorkflowExecutionDescription,
    left: timedelta,
    unheard: Callable[[RPCError], bool],
) -> None:
    """A running pipeline's stage that waits for approval, and the command that gives it."""
    if desc.status != WorkflowExecutionStatus.RUNNING:
        return
    try:
        run = client.get_workflow_handle(desc.id, run_id=desc.run_id)
        view = await run.query("pipeline", result_type=PipelineView, rpc_timeout=left)
    except RPCError as e:
        unheard(e)
        return
    except WorkflowQueryFailedError:
        return
    node.refused = list(view.refused_signals)
    node._stages = [s.model_dump() for s in view.stages]
    if view.awaiting_approval:
        stage, attempt = view.awaiting_approval, view.awaiting_attempt or 1
        node.outcome = (
            f"stage {stage} (attempt {attempt}) waits for approval: outlast approve "
            f"{desc.id} {stage} --attempt {attempt}; its output: outlast transcript "
            f"{stage_agent(desc.id, stage, attempt)}"
        )
    elif view.current:
        node.outcome = f"stage {view.current} running"
        if view.held_decisions:
            # Taken ahead, said nowhere until the stage ended (a user test, 2026-12-07).
            held = ", ".join(plain(d) for d in view.held_decisions)
            node.outcome += f", decision held until it ends: {held}"
        if view.stop_requested:
            # `show` said nothing of it while the stage went on (a user test, 2026-12-06).
            attempt = 1 + sum(s.name == view.current for s in view.stages)
            node.outcome += (
                ", stop requested: the pipeline ends when this stage does (`outlast stop "
                f"{stage_agent(desc.id, view.current, attempt)}` ends the stage after its "
                "current turn)"
            )


EARLIER_RUN_QUERY_S = 1.0
"""The most an earlier run's `status` query may take of the tree's time."""


async def _add_earlier_runs(
    client: Client,
    node: Node,
    desc: WorkflowExecutionDescription,
    until: float,
    silence: Silence,
) -> None:
    """A resumed agent (SendMessage to an ended sub-agent, a verified task's implementer
    after a FAIL, `outlast resume`) runs again under its id as a new workflow run, whose
    result counts only itself: the earlier runs of the same agent (its AgentId) add their
    turns, tokens, tool uses and time: a completed one's from its result, one killed,
    failed or terminated from its `status` query (a worker replays it; skipped if none
    answers by `until`: a resume after a kill counted the kill's run as nothing, a user
    test, 2026-12-06). Runs that continued as new carry theirs into the next, and another
    agent that reused the id (`outlast run --id` again) is not this one, nor is a run that
    was reset (`temporal workflow reset`: the new run replays it). Only when the latest
    run's own figures are known (completed, or answering its status query)."""
    agent_id = desc.typed_search_attributes.get(sa.AGENT_ID)
    if node.turns is None or not agent_id:
        return
    prompted = (node.tokens or 0) > (node.output_tokens or 0)
    async for w in client.list_workflows(f'WorkflowId = "{desc.id}"'):
        if (
            w.run_id == desc.run_id
            or w.status in (None, WorkflowExecutionStatus.RUNNING)
            or w.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
            or w.typed_search_attributes.get(sa.AGENT_ID) != agent_id
        ):
            continue
        try:
            handle = client.get_workflow_handle(desc.id, run_id=w.run_id)
            earlier_desc = await handle.describe()
            if earlier_desc.raw_description.workflow_extended_info.reset_run_id:
                continue  # reset: the run that replaced it holds its work up to the reset
            earlier = Node(row=node.row)
            if w.status == WorkflowExecutionStatus.COMPLETED:
                _fill_from_result(earlier, await handle.result(follow_runs=False))
            elif not silence.known(earlier_desc):
                # A replay of a whole run each: a share of the tree's time, so the agents
                # below are still asked. Its own silence: a replay that takes longer than its
                # share says nothing of the queue.
                now = asyncio.get_running_loop().time()
                cut = min(until, now + EARLIER_RUN_QUERY_S)
                await _fill_from_status(earlier, client, earlier_desc, cut, Silence())
        except Exception:  # noqa: BLE001 - its history expired, or cannot be decoded here
            continue
        if earlier.turns is None:
            continue
        node.turns += earlier.turns
        # An agent's tokens are its latest prompt's plus every output (R19); the latest
        # prompt holds the earlier runs' conversation, so of those only their outputs add
        # (the whole figures added counted it again each run: a user test, 2026-12-06).
        # Runs come newest first: where the latest answered no call, the newest that did
        # has the prompt.
        output = earlier.output_tokens or 0
        if not prompted and (earlier.tokens or 0) > output:
            node.tokens, prompted = (node.tokens or 0) + (earlier.tokens or 0), True
        else:
            node.tokens = (node.tokens or 0) + output
        node.output_tokens = (node.output_tokens or 0) + (earlier.output_tokens or 0)
        node.tool_uses = (node.tool_uses or 0) + (earlier.tool_uses or 0)
        if node.duration_ms and earlier.duration_ms:
            node.duration_ms += earlier.duration_ms
        node.runs += 1


def kept_worktree(path: str, branch: str | None) -> str:
    return f"{path} (branch {branch})" if branch else path


def _fill_from_result(node: Node, result: object) -> None:
    """From a result decoded without its type (a dict), whatever the pattern's result has."""
    if not isinstance(result, dict):
        return
    usage = result.get("usage") or {}
    node.outcome = result.get("status")
    # What `outlast run` reports as the end: a stopped agent, or one out of turns, completed
    # its workflow but not its task.
    if result.get("stopped"):
        node.outcome = "stopped"
        # As a kill's reason is shown: a stop's was said nowhere (a user test, 2026-12-06).
        if reason := " ".join(plain(str(result.get("stop_reason") or "")).split()):
            node.error = f"{REASON}{reason}"
    elif result.get("max_turns_reached"):
        node.outcome = "max turns reached"
    node.unread_messages = result.get("unread_messages") or 0
    node.undelivered = len(result.get("undelivered") or [])
    node.unstarted = unstarted_of(result, {})
    node.agent_type = result.get("agent_type")
    node.turns = result.get("turns")
    node.tokens = usage.get("total_tokens")
    node.output_tokens = (usage.get("tokens") or {}).get("output_tokens")
    node.tool_uses = usage.get("tool_uses")
    node.duration_ms = usage.get("duration_ms") or None
    if path := result.get("worktree_path"):
        node.worktree = kept_worktree(path, result.get("worktree_branch"))
    rounds = result.get("rounds") or []
    if rounds and _verified(rounds[-1]):
        node.verdict = rounds[-1].get("verdict")
    # A pipeline's or a verified task's own line on how it ended (`stage verify: VERDICT:
    # FAIL ...`), or an agent's error, where it did not do its task.
    message = result.get("message") or result.get("error")
    if message and node.outcome not in (None, "completed", "passed"):
        node.error = " ".join(plain(str(message)).split())
    members = result.get("members") or []
    if result.get("team_name") and members:
        try:
            lost = TeamResult.model_validate(result).lead_lost()
        except ValidationError:  # a result of another release: its lead's status as given
            status = members[0].get("status") if isinstance(members[0], dict) else None
            lost = status if status != "completed" else None
        if lost:
            node.outcome = lost_lead_text(lost)
        elif undone := [t for t in result.get("tasks") or [] if t.get("status") != "completed"]:
            total = len(result["tasks"])
            node.outcome = f"{len(undone)} of {total} task{'' if total == 1 else 's'} not done"
            if result.get("status") == "stopped":
                # Why they are undone, as `run` says it (`show` read `completed, 1 of 1 ...`).
                node.outcome = f"stopped, {node.outcome}"
    forks = result.get("forks") or []
    unfinished = [
        f
        for f in forks
        if f.get("status") != "completed" or f.get("stopped") or f.get("max_turns_reached")
    ]
    if unfinished:  # a fork-join has no status of its own: `run` exits 1 for this
        node.outcome = f"{len(unfinished)} of {len(forks)} forks did not finish"
