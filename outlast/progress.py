"""Following a running agent from a terminal: poll its `status` query, print what changes."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import dataclass
from datetime import timedelta

from rich.console import Console
from rich.markup import escape
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowHistoryEventFilterType,
    WorkflowQueryFailedError,
)
from temporalio.service import RPCError

from agents.todos import done_of, in_progress
from outlast.child_ends import CLOSING_WAIT_S, shown_status, with_child_ends
from outlast.end_reasons import cancel_reason
from outlast.inspect import kept_worktree
from outlast.live_tree import doing, follow_live
from outlast.plan_view import plan_lines, waiting_plan
from outlast.question_view import plain, print_question, terminal_text, waiting_question
from outlast.retries import TreeRetries
from outlast.server_away import lasting_result
from outlast.stopped_with_it import unstarted_of
from workflows.contracts import AgentResult, AgentStatus, AgentUsage, TurnText
from workflows.details import tool_uses, web_searches

POLL_S = 0.2
LAST_QUERY_S = 3.0
"""The query after the result: a closed workflow's replays on a worker, and without one
waits; it may not hold up the result for long."""


async def _status(handle: WorkflowHandle, timeout_s: float | None = None) -> AgentStatus | None:
    try:
        timeout = timedelta(seconds=timeout_s) if timeout_s else None
        return await handle.query("status", result_type=AgentStatus, rpc_timeout=timeout)
    except (RPCError, WorkflowQueryFailedError):
        # No worker has picked the workflow up yet, or it is between tasks.
        return None


async def follow(
    handle: WorkflowHandle, console: Console, client: Client | None = None
) -> AgentResult | None:
    """Show progress until the workflow closes; its result, or None if it did not complete.

    On a terminal (and given the client, to ask sub-agents too) a live tree redrawn in place;
    otherwise, as in a log or a pipe, one line per change."""
    if client is not None and console.is_terminal:
        ask = sys.stdin.isatty()
        followed = await follow_live(client, handle, console, POLL_S, ask=ask)
        return await outcome(followed, handle, console)
    result_task = asyncio.create_task(lasting_result(handle, console))
    last = ""
    printed = TextsPrinted()
    last_todo: str | None = None
    asked: set[str] = set()
    children: dict[str, str] = {}
    latest: AgentStatus | None = None
    retries = TreeRetries(handle, client)
    while not result_task.done():
        print_retries(console, await retries.news())
        status = await _status(handle)
        if status is not None and client is not None and status.state == "finished":
            status = await with_child_ends(client, status)
        latest = status or latest
        if status is not None:
            _print_children(status, children, console, handle.id)
            line = doing(status)
            # An ended agent's last text is its answer, which the result prints whole: an
            # attach printed it twice (a user test, 2026-12-07).
            answered = status.state == "finished" and status.outcome == "completed"
            _print_new_texts(console, handle.id, status, printed, status.turn if answered else None)
            todo = in_progress(status.todos)
            if todo is not None and todo != last_todo:
                console.print(
                    f"  [cyan]todo[/] {escape(plain(todo))} [dim]({done_of(status.todos)})[/]"
                )
            last_todo = todo
            if status.state == "waiting" and (pending := await waiting_question(handle)):
                if pending.request_id not in asked:
                    asked.add(pending.request_id)
                    print_question(console, handle.id, pending)
            if status.state == "waiting" and (plan := await waiting_plan(handle)):
                if plan.request_id not in asked:
                    asked.add(plan.request_id)
                    for text in plan_lines(handle.id, plan):
                        console.print(text, highlight=False)
            if line != last:
                last = line
                tokens = status.usage.total_tokens
                console.print(f"[cyan]>[/] {escape(line)}  [dim]tokens {tokens}[/]")
        await asyncio.wait({result_task}, timeout=POLL_S)
    if client is not None and latest and any(c.status == "running" for c in latest.children):
        # How each sub-agent ended: the last poll may have come before the end that stopped
        # them, and the ended agent never hears of it (outlast/child_ends.py).
        final = await _status(handle, LAST_QUERY_S) or latest
        final = await with_child_ends(client, final, CLOSING_WAIT_S)
        _print_children(final, children, console, handle.id)
    await _last_texts(handle, result_task, printed, console)
    return await outcome(result_task, handle, console)


async def _last_texts(
    handle: WorkflowHandle, result_task: asyncio.Task, printed: TextsPrinted, console: Console
) -> None:
    """The texts of turns that ended after the last poll, but the answer, which the result
    prints whole: quick last turns ended the run before a poll saw them. Asked only then (a
    closed run's query is a replay on a worker)."""
    if result_task.cancelled() or result_task.exception() is not None:
        return
    result = result_task.result()
    if not isinstance(result, AgentResult) or printed.turn >= result.turns - 1:
        return
    status = await _status(handle, LAST_QUERY_S)
    if status is not None:
        _print_new_texts(console, handle.id, status, printed, below=result.turns)


def _print_new_texts(
    console: Console,
    workflow_id: str,
    status: AgentStatus,
    printed: TextsPrinted,
    below: int | None = None,
) -> None:
    """The texts `status` has that were not printed (of turns before `below`, if given);
    first of all, where older turns are left out, where they are."""
    first = printed.turn == 0 and not printed.text
    texts = [t for t in new_texts(status, printed) if below is None or t.turn < below]
    if first and texts and texts[0].turn > 1:
        # Attached late (or to an ended run): the status has the last turns only.
        earlier = "turn 1" if texts[0].turn == 2 else f"turns 1-{texts[0].turn - 1}"
        console.print(f"[dim]({earlier}: `outlast transcript {escape(workflow_id)}`)[/]")
    kind = escape(plain(status.agent_type))
    for said in texts:
        console.print(f"[dim]{kind}:[/] {escape(plain(_one_line(said.text)))}")


def print_retries(console: Console, news: list[tuple[str, str]]) -> None:
    """Each retry once per attempt: the workflow's own, then its children's by name."""
    for who, line in news:
        console.print(f"  [yellow]{escape(plain(f'{who}: {line}' if who else line))}[/]")


async def outcome(result_task: asyncio.Task, handle: WorkflowHandle, console: Console):
    """The finished workflow's result, or None after saying why there is none."""
    try:
        return result_task.result()
    except WorkflowFailureError as e:
        cause = e.cause
        why = terminal_text(str(getattr(cause, "message", None) or cause))
        desc = await handle.describe()
        status = desc.status
        if status == WorkflowExecutionStatus.CANCELED:
            reason = await _cancel_reason(handle)
            said = f"; reason: {reason}" if reason else ""
            console.print(f"[yellow]killed[/] (the workflow was cancelled{escape(said)})")
            # As a completed coordinator's result says them (`print_result`).
            _print_unstarted(console, unstarted_of(None, await desc.memo()))
        elif status == WorkflowExecutionStatus.TERMINATED:
            console.print(f"[red]terminated:[/] {escape(await _terminate_reason(handle) or why)}")
        else:
            console.print(f"[red]workflow failed:[/] {escape(why)}")
        return None


async def _cancel_reason(handle: WorkflowHandle) -> str:
    try:
        return terminal_text(await cancel_reason(handle))
    except RPCError:
        return ""  # the server is away: the kill is said without its reason


async def _terminate_reason(handle: WorkflowHandle) -> str:
    """The reason given with `terminate`, which the failure does not carry ("terminated by
    user via frontend" is all it says)."""
    try:
        async for event in handle.fetch_history_events(
            event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT
        ):
            reason = event.workflow_execution_terminated_event_attributes.reason
            return terminal_text(reason) if reason else ""
    except RPCError:
        pass  # the failure's own words will do
    return ""


def _print_children(
    status: AgentStatus, seen: dict[str, str], console: Console, parent_id: str = ""
) -> None:
    """One line per sub-agent state change: spawned, backgrounded, hinted, ended."""
    for child in status.children:
        state = f"{shown_status(child)}, {child.mode}"
        if child.status == "running" and child.mode == "sync" and child.background_hint:
            state += f" (`outlast background {parent_id} {child.agent_id}` to stop waiting for it)"
        if seen.get(child.agent_id) != state:
            seen[child.agent_id] = state
            label = escape(plain(f"{child.name or child.agent_id} ({child.agent_type})"))
            # A background Bash command is listed with the children too (it read "sub-agent").
            kind = "background command" if child.agent_type == "shell" else "sub-agent"
            console.print(f"  [magenta]{kind}[/] {label}: {state}")


def _print_unstarted(console: Console, names: list[str]) -> None:
    """A coordinator's queued workers that its end left unstarted, if any."""
    if names:
        console.print(
            f"[yellow]queued workers never started (it ended first): "
            f"{escape(', '.join(names))}[/]: `outlast resume` tells it so."
        )


@dataclass
class TextsPrinted:
    """How far a follow has printed the agent's texts."""

    turn: int = 0
    """The turn of the last text printed (a run that went on resumed restarts its count)."""
    text: str = ""


def new_texts(status: AgentStatus, printed: TextsPrinted) -> list[TurnText]:
    """The texts `status` shows that the follow has not printed, oldest first: each turn's
    (`recent_texts`); from a worker of a release before them, the last one if it changed."""
    if not status.recent_texts:
        if not status.last_text or status.last_text == printed.text:
            return []
        printed.text = status.last_text
        return [TurnText(turn=status.turn, text=status.last_text)]
    if status.recent_texts[-1].turn < printed.turn:
        printed.turn = 0  # a new run counts its turns from the start again
    texts = [t for t in status.recent_texts if t.turn > printed.turn]
    if texts:
        printed.turn, printed.text = texts[-1].turn, texts[-1].text
    return texts


def _one_line(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def count(n: int, noun: str) -> str:
    """`1 turn`, `2 turns`: the nouns counted here all take an `s`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def usage_text(u: AgentUsage) -> str:
    """Tool uses, tokens, time and web searches, as the summary lines give them; the time
    only when known (a verified task's rounds add up no time of their own)."""
    return (
        f"{tool_uses(u.tool_uses)}, {u.total_tokens} tokens"
        + (f", {u.duration_ms / 1000:.1f}s" if u.duration_ms else "")
        + (f", {web_searches(n)}" if (n := u.tokens.web_search_requests) else "")
    )


def print_text(text: str, console: Console) -> None:
    """Model-written text as written: no markup (`a[i]` stays), no escape sequences."""
    console.print(terminal_text(text), markup=False, highlight=False)


def print_result(result: AgentResult, console: Console, workflow_id: str | None = None) -> None:
    """`workflow_id`: the agent's, for the command that goes on with it where its turns ran
    out (None: none is named)."""
    console.print(
        f"[green]{result.status}[/] after {count(result.turns, 'turn')}, {usage_text(result.usage)}"
        + (" (max turns reached)" if result.max_turns_reached else "")
        + (" (stopped)" if result.stopped else "")
        # A resumed run's result counts itself: read as the agent's totals, it disagreed
        # with `show` (a user test, 2026-12-06).
        + (
            f" in run {result.run_generation} (`outlast show` adds up every run)"
            if result.run_generation > 1
            else ""
        )
    )
    why = "its stop came" if result.stopped else "it ended"
    if result.max_turns_reached and not result.stopped:
        why = "its turns ran out"
        if workflow_id:
            # It was left to guess that a resume gets turns again, and how many.
            console.print(
                f"[yellow]its turns ran out[/]: `outlast resume {escape(workflow_id)} MESSAGE "
                "--max-turns N` goes on from its conversation with N more"
            )
    if result.unread_messages:
        console.print(
            f"[yellow]{result.unread_messages} message(s) went unread ({why} before its next "
            "turn)[/]: `outlast resume` sends them to it first."
        )
    if result.undelivered:
        console.print(
            f"[yellow]{len(result.undelivered)} background task end(s) went unread ({why} before "
            "its next turn)[/]: `outlast resume` sends them to it first."
        )
    _print_unstarted(console, result.unstarted_workers)
    if result.worktree_path:
        console.print(
            f"worktree kept: {escape(kept_worktree(result.worktree_path, result.worktree_branch))}"
            ": its changes are there, not in the checkout"
        )
    if result.final_text:
        print_text(result.final_text, console)


class WorkerStopped(Exception):
    """The in-process worker ended before the workflow did: nothing would make progress."""


async def follow_while_serving(follow, serving: asyncio.Future | None):
    """What `follow` returns; WorkerStopped if the worker ends first (it failed)."""
    following = asyncio.ensure_future(follow)
    if serving is None:
        return await following
    try:
        await asyncio.wait({following, serving}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        # Ctrl-C: the follow (a live display on a terminal) closes before "detached" prints.
        following.cancel()
        await asyncio.wait({following})
        if not following.cancelled():
            following.exception()  # read, so no "never retrieved" warning
        raise
    if following.done():
        return following.result()
    following.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await following
    error = serving.exception() if not serving.cancelled() else None
    raise WorkerStopped(str(error) if error else "it ended")
