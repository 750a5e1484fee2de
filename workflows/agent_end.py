"""How an agent ends, whichever way it ends (R42, R44, R53): the handoff check on its answer,
its worktree cleaned up or kept, and its parent told, exactly as the parent expects it."""

from __future__ import annotations

import re
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.handoff import HANDOFF_UNAVAILABLE, HANDOFF_WARNING
from agents.messages import Message, ToolResultBlock
from agents.notifications import cap_result
from agents.transcript import TranscriptRef
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.handoff import HandoffInput, HandoffVerdict
    from activities.read_state import read_state_ref
    from activities.resume import AppendInput, append
    from activities.run_history import UNDELIVERED_MEMO
    from activities.tools.base import FileStamp
    from activities.transcript_export import ExportInput
    from activities.worktree import WorktreeInfo

from workflows.agent_setup import SETUP_OPTIONS
from workflows.contracts import (
    UNSTARTED_MEMO,
    WORKTREE_MEMO,
    AgentInput,
    AgentNotification,
    AgentResult,
)
from workflows.host_steps import run_host_step
from workflows.loop_types import LoopState
from workflows.signals import signal_workflow
from workflows.worktrees import cleanup

LAST_RESULTS_KEPT = "last-results-kept"
"""Patch id: an agent that a stop or the turn limit ends with tool results no model call has
recorded appends them to its conversation (`keep_last_results`)."""
FAILURE_KEEPS_RESULTS = "failure-keeps-results"
"""An agent that fails (a model call the API refuses for good) keeps the tool results that
call was to send, as a stop does (`keep_last_results`): a resume went on without them, the
work done and reported gone from its conversation (a user test, 2026-12-06)."""
KILL_KEEPS_RESULTS = "kill-keeps-results"
"""Patch id: a kill does too, with the results of the calls of its turn that had finished."""
KILL_ANSWERS_CUT_OFF = "kill-answers-cut-off-calls"
"""Patch id: the calls a kill cut off are kept, answered as interrupted; a resume dropped
them, so the model ran a command again that had run in part, unwarned (a user test)."""

INTERRUPTED = "[Request interrupted by user for tool use]"
"""Claude Code's result of a call a person's interrupt cut off."""

UNSTARTED_IN_MEMO = "unstarted-in-memo"
"""Patch id: a killed or failed agent with queued workers names them in its memo; with no
result to say it, a resume told nobody they never ran (a user test, 2026-12-07)."""


UNDELIVERED_IN_MEMO = "undelivered-in-memo"
"""Patch id: a killed or failed agent names in its memo the ends of its background tasks that
came after its last turn: lost with the run, a resume never heard of a sub-agent's finished
work (a review, 2026-12-07)."""


def name_undelivered(status: str, ends: list[str]) -> None:
    """Where a run with no result keeps the background tasks' ends it never read: its memo,
    which a resume reads (`RunEnd.unanswered`). Asked only then."""
    if ends and status != "completed" and versions.patched(UNDELIVERED_IN_MEMO):
        workflow.upsert_memo({UNDELIVERED_MEMO: ends})


WORKTREE_IN_MEMO = "worktree-in-memo"
"""Patch id: a killed or failed agent whose end kept a worktree names it in its memo."""


def name_kept_worktree(status: str, path: str | None, branch: str | None) -> None:
    """Where a run with no result says which worktree its end kept (with its work): its
    memo, which `describe` (`outlast show`, the Web UI) reads with the run closed. Asked only
    then, so no other run records the marker."""
    if path and status != "completed" and versions.patched(WORKTREE_IN_MEMO):
        workflow.upsert_memo({WORKTREE_MEMO: {"path": path, "branch": branch}})


def name_unstarted(status: str, unstarted: list[str]) -> None:
    """Where a run with no result says which queued workers never started: its memo, which
    `describe` (the Web UI, `outlast show`, a resume) reads with the run closed. Asked only
    then, so no other run records the marker."""
    if unstarted and status != "completed" and versions.patched(UNSTARTED_IN_MEMO):
        workflow.upsert_memo({UNSTARTED_MEMO: unstarted})


KILL_KEEP_OPTIONS = {
    **SETUP_OPTIONS,
    # A kill must end the agent: with the host worker gone (the laptop that ran the tools),
    # an append nobody picks up would keep it, and its children, from ending for good.
    "schedule_to_close_timeout": timedelta(seconds=90),
}

HANDOFF_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=60),
    "retry_policy": RetryPolicy(maximum_attempts=3),
}


async def handoff_warning(inp: AgentInput, text: str) -> str | None:
    """The warning to put before the answer, if any. Fails open (R42): whatever goes wrong
    here never turns a finished agent into a failed one."""
    if not is_sub_agent(inp) or not inp.config.agents.handoff_check or not text:
        return None
    try:
        verdict = await run_host_step(
            inp.config,
            "classifier.classify_handoff",
            HandoffInput(text=text, agent_type=inp.agent_type),
            host_queue=inp.workspace.host_queue,
            result_type=HandoffVerdict,
            **HANDOFF_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise  # a kill while checking is still a kill
        workflow.logger.warning("handoff check unavailable: %s", e.cause)
        return HANDOFF_UNAVAILABLE
    return HANDOFF_WARNING if verdict.flagged else None


async def release_worktree(info: WorktreeInfo | None, host_queue: str) -> dict:
    """Result fields for the worktree: its path and branch if kept, nothing if removed."""
    if info is None:
        return {}
    outcome = await cleanup(info, host_queue)
    if outcome is not None and not outcome.kept:
        return {}
    return {"worktree_path": info.worktree_path, "worktree_branch": info.worktree_branch}


def is_sub_agent(inp: AgentInput) -> bool:
    # Forks of a fork-join have no parent to signal but are sub-agents all the same; runs
    # recorded before they were treated so replay without.
    return inp.parent is not None or (
        inp.lineage.depth > 0 and versions.patched("handoff-check-parentless-sub-agents")
    )


async def export_output_file(
    inp: AgentInput,
    result: AgentResult,
    read_state: dict[str, FileStamp],
    compacted: list[TranscriptRef] | None = None,
) -> AgentResult:
    """`result` with the sub-agent's output file (R29) written and its read state stored
    (R66); unchanged if this is no sub-agent, or on failure: an audit file must never turn
    a finished agent into a failed one."""
    if not is_sub_agent(inp) or not versions.patched("transcript-export"):
        return result
    try:
        path = await run_host_step(
            inp.config,
            "transcript.export",
            ExportInput(
                transcript=result.transcript,
                agent_id=result.agent_id,
                agent_type=result.agent_type,
                description=inp.description,
                session_id=inp.lineage.session_id,
                workspace_root=inp.worktree.repo_root if inp.worktree else inp.workspace.root,
                worktree_path=result.worktree_path,
                parent_agent_id=inp.lineage.parent_agent_id,
                read_state=read_state,
                compacted=compacted or [],
            ),
            host_queue=inp.workspace.host_queue,
            result_type=str,
            **HANDOFF_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        workflow.logger.warning("output file not written: %s", e.cause)
        return result
    return result.model_copy(
        update={"output_file": path, "read_state_ref": read_state_ref(read_state)}
    )


SERVER_CANCEL = re.compile(
    r"^Cancel requested by workflow with run id \S+ with reason:\s*(.*)$", re.S
)
"""How the server words a cancel another workflow requested (a parent's TaskStop or end, a
team's kill), the reason that workflow gave last."""


def kill_reason(raw: str) -> str:
    """The words a kill was given: a person's as given; of a cancel a workflow requested,
    only the reason it gave. A team's kill told its lead "Teammate alpha was killed (Cancel
    requested by workflow with run id ... with reason: )" (a user test, 2026-12-07)."""
    said = SERVER_CANCEL.match(raw)
    return said.group(1).strip() if said else raw


def outcome_of(result: AgentResult) -> str:
    """How a run ended, as `ls`, the Web UI and the `status` query say it: a stopped agent, or
    one out of turns, completed its run but not its task."""
    if result.status == "completed" and (result.stopped or result.max_turns_reached):
        return "stopped" if result.stopped else "max_turns"
    return result.status


SYNC_END_BY_RESULT = "sync-end-by-result"
"""Patch id: a sync sub-agent that completes no longer signals its parent, which reads the
same end from the child workflow's result (first release: it signalled as well). The signal
was a billed action; the patch's own `TemporalChangeVersion` upsert is exempt from action
counting, and its marker shares the workflow task of the end's local-activity markers."""


def parent_reads_result(inp: AgentInput, status: str, background: bool) -> bool:
    """Whether the parent learns of this run's end from its result alone, so the signal
    would only repeat it: a sync sub-agent (not moved to the background by the time it
    decides) that completed.

    The parent's run that started a sync child waits on its handle and cannot continue as
    new meanwhile. If it moves the child to the background just as it ends, `set_backgrounded`
    finds the child closed and the parent takes the end as the tool result after all
    (patched `closed-child-stays-sync`). A background child may outlive the handle (the
    parent continues as new) and a killed or failed child's handle carries no transcript to
    resume it from: those still signal."""
    return inp.parent is not None and not background and status == "completed"


def stopped_before_mail(result: AgentResult, reason: str) -> AgentResult:
    """The end of a next generation that a stop kept from running: the mail it was to answer
    stays unread (the run's result says how much). A stop, not a kill: its parent must not
    read it as a person's cancel."""
    unread = result.unread_messages
    return result.model_copy(
        update={
            "status": "killed",
            "final_text": "",
            "error": f"stopped before answering {unread} message(s) that came in at its end",
            "stopped": True,
            "stop_reason": reason,
        }
    )


async def tell_parent(
    inp: AgentInput,
    result: AgentResult,
    *,
    continues: bool = False,
    generation: int | None = None,
) -> None:
    """Signal the parent's workflow id (its latest run) how this run ended; `continues`: a
    next generation follows, to answer mail that came in meanwhile; `generation`: the end of
    another generation than this run's."""
    if inp.parent is None:
        return
    end = AgentNotification(
        agent_id=result.agent_id,
        run_generation=generation or inp.run_generation,
        status=result.status,
        agent_type=result.agent_type,
        description=inp.description,
        final_text=cap_result(result.final_text),
        error=result.error,
        usage=result.usage,
        transcript=result.transcript,
        tool_use_id=inp.parent.tool_use_id,
        worktree_path=result.worktree_path,
        worktree_branch=result.worktree_branch,
        handoff_warning=result.handoff_warning,
        output_file=result.output_file,
        read_state_ref=result.read_state_ref,
        continues=continues,
        permission_mode=result.permission_mode,
        plan_file=result.plan_file,
        run_id=result.run_id or workflow.info().run_id,
        stopped=result.stopped,
        stop_reason=result.stop_reason,
        max_turns_reached=result.max_turns_reached,
        unread_messages=result.unread_messages if result.status == "killed" else 0,
    )
    try:
        await signal_workflow(inp.parent.workflow_id, "agent_notification", end)
    except ApplicationError as e:
        # The parent is gone (finished or terminated): nobody is left to tell.
        workflow.logger.warning("could not notify parent %s: %s", inp.parent.workflow_id, e)


def cut_off_results(
    state: LoopState, results: list[ToolResultBlock], reason: str
) -> list[ToolResultBlock]:
    """An interrupted result for each call of the turn that `results` does not answer."""
    answered = {r.tool_use_id for r in results}
    why = f" ({reason})" if reason else ""
    ran = (
        f"{INTERRUPTED} The agent was killed{why} while this call ran: it may have taken "
        "effect in part or in full. Check before running it again."
    )
    # A call of a later batch (one at a time, after the one before) had not started.
    not_run = f"{INTERRUPTED} The agent was killed{why} before this call ran: it was not run."
    started = set(state.started_calls)
    return [
        ToolResultBlock(
            tool_use_id=call_id, content=ran if call_id in started else not_run, is_error=True
        )
        for call_id in state.turn_calls
        if call_id not in answered
    ]


async def keep_last_results(
    state: LoopState,
    host_queue: str,
    killed: bool = False,
    failed: bool = False,
    reason: str = "",
) -> None:
    """The last turn's tool results, into the conversation the agent ends with: a stop or
    the turn limit ends it before the model call that would have recorded them, and a resume
    (R66) went on without them: the work done, a command's output, gone from its
    conversation (a user test, 2026-12-06). Mail that waits stays unread, as before.

    `killed`: a kill (TaskStop, `outlast kill`) may come mid-turn; the calls of the turn that
    had finished are kept as well, as Claude Code's sidechain transcript has each result as
    it comes; the calls it cut off are answered as Claude Code's interrupt answers them, with
    the kill's `reason` (before `kill-answers-cut-off-calls`, a resume dropped them).
    `failed`: the agent failed (its model call refused for good): the results that call was
    to send are kept (patched `failure-keeps-results`).

    The results travel whole (once, at the end), not by reference: a host worker of an
    earlier release reads no references, and would have stored them empty. Fails open: an
    end is never turned into a failure by this."""
    results = [
        b
        for m in state.pending
        if not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    if killed:
        results += state.finished_calls
        cut_off = cut_off_results(state, results, reason)
        # Asked only by a kill that cut calls off, so no other run records it.
        if cut_off and versions.patched(KILL_ANSWERS_CUT_OFF):
            results += cut_off
    # Asked only by an end that has results to keep, so no other run records it.
    if not results:
        return
    # Each id spelt out: tests/unit/test_versions.py reads the ids asked from the code.
    if killed:
        kept = versions.patched(KILL_KEEPS_RESULTS)
    elif failed:
        kept = versions.patched(FAILURE_KEEPS_RESULTS)
    else:
        kept = versions.patched(LAST_RESULTS_KEPT)
    if not kept:
        return
    ids = {r.tool_use_id for r in results}
    images = {k: v for k, v in state.result_images.items() if k in ids}
    try:
        state.transcript = await workflow.execute_activity(
            append,
            AppendInput(
                transcript=state.transcript,
                messages=[Message(role="user", content=results)],
                images=images,
            ),
            task_queue=host_queue,
            **(KILL_KEEP_OPTIONS if killed else SETUP_OPTIONS),
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        workflow.logger.warning("the last tool results were not kept: %s", e.cause or e)
        return
    unread: list[Message] = []
    for m in state.pending:
        if isinstance(m.content, str):
            unread.append(m)
        elif rest := [b for b in m.content if not isinstance(b, ToolResultBlock)]:
            unread.append(m.model_copy(update={"content": rest}))
    state.pending, state.finished_calls = unread, []
    # What those results stamped the model has now been given: read, for a run that goes on.
    state.result_refs, state.result_images, state.unseen_stamps = {}, {}, []
