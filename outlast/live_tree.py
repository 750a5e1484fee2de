"""The live agent tree `outlast run` and `outlast attach` draw on a terminal: the agent, its
turn and current tool, and each sub-agent as it starts and ends (with its own progress while
it runs). Built from `status` queries; redrawn in place by rich's Live."""

from __future__ import annotations

import asyncio

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.tree import Tree
from temporalio.client import Client, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError

from agents.todos import MAX_SHOWN, TodoItem, done_of
from outlast.child_ends import CLOSING_WAIT_S, shown_status, with_child_ends
from outlast.plan_view import plan_lines, waiting_plan
from outlast.question_view import plain, prompt_answers, question_lines, waiting_question
from outlast.retries import RetryWatch
from outlast.server_away import lasting_result
from outlast.terminal_lines import TerminalLines
from outlast.tree_text import queued_line
from workflows.contracts import AgentStatus, ChildSummary
from workflows.details import tool_uses

MAX_CHILD_QUERIES = 8
"""Running sub-agents asked for their own status per redraw (the rest show their state)."""

_MARK = {
    "running": "[cyan]…[/]",
    "completed": "[green]✓[/]",
    "failed": "[red]✗[/]",
    "killed": "[yellow]■[/]",
    "stopped": "[yellow]■[/]",
}


def doing(status: AgentStatus) -> str:
    if status.state == "running_tools":
        return f"turn {status.turn}: running {', '.join(status.current_tools)}"
    if status.state == "calling_model":
        return f"turn {status.turn + 1}: calling {status.model}"
    return status.state


def status_tree(
    status: AgentStatus,
    kids: dict[str, AgentStatus],
    question: list[str] | None = None,
    retry: str | None = None,
    workflow_id: str = "",
    kid_retries: dict[str, str | None] | None = None,
) -> Tree:
    """The tree for one redraw; `kids` holds the running sub-agents' own statuses by id,
    `question` the lines of the questions the agent waits with, if any, `retry` what its
    activities are trying again (`outlast/retries.py`), `kid_retries` its sub-agents'."""
    u = status.usage
    root = Tree(
        f"[bold]{escape(plain(status.agent_type))}[/] {escape(doing(status))} "
        f"[dim]· {u.total_tokens:,} tokens · {tool_uses(u.tool_uses)}[/]"
    )
    if retry:
        root.add(f"[yellow]{escape(plain(retry))}[/]")
    if question:
        branch = root.add(f"[bold yellow]? {escape(question[0])}[/]")
        for line in question[1:]:
            branch.add(escape(line))
    if status.todos:
        _add_todos(root, status.todos)
    for child in status.children:
        retrying = (kid_retries or {}).get(child.workflow_id)
        root.add(_child_line(child, kids.get(child.workflow_id), workflow_id, retrying))
    # A coordinator's workers that wait for their files: a follow named them nowhere (a user
    # test, 2026-12-06).
    for queued in status.queued:
        root.add(f"[dim]queued: {escape(queued_line(queued))}[/]")
    return root


def _add_todos(root: Tree, todos: list[TodoItem]) -> None:
    """The agent's todo list as Claude Code shows it: done, the one in progress, to do."""
    branch = root.add(f"[dim]todos ({done_of(todos)})[/]")
    for item in todos[:MAX_SHOWN]:
        if item.status == "in_progress":
            branch.add(f"[bold cyan]▸ {escape(plain(item.active_form))}[/]")
        elif item.status == "completed":
            branch.add(f"[green]✓[/] [dim]{escape(plain(item.content))}[/]")
        else:
            branch.add(f"☐ {escape(plain(item.content))}")
    if len(todos) > MAX_SHOWN:
        branch.add(f"[dim]… {len(todos) - MAX_SHOWN} more[/]")


def _child_line(
    child: ChildSummary, own: AgentStatus | None, parent_id: str = "", retry: str | None = None
) -> str:
    # A description is the model's (a background shell's is its command line: `[a-z]+`).
    label = escape(plain(child.name or child.description or child.agent_id))
    kind = escape(plain(child.agent_type))
    shown = shown_status(child)
    line = f"{_MARK.get(shown, '?')} {label} [dim]({kind}, {child.mode})[/]"
    if child.status == "running" and own is not None:
        line += f" {escape(doing(own))} [dim]· {own.usage.total_tokens:,} tokens[/]"
    elif child.status != "running":
        line += f" {shown}"
    if child.status == "running" and retry:
        line += f" [yellow]{escape(plain(retry))}[/]"
    if child.status == "running" and child.mode == "sync" and child.background_hint:
        how = f"outlast background {parent_id} {child.agent_id}" if parent_id else "background"
        line += f" [dim](`{escape(how)}` to stop waiting)[/]"
    return line


async def _query(client: Client, workflow_id: str) -> AgentStatus | None:
    try:
        return await client.get_workflow_handle(workflow_id).query(
            "status", result_type=AgentStatus
        )
    except (RPCError, WorkflowQueryFailedError):
        return None  # not picked up yet, between tasks, or not an agent


async def follow_live(
    client: Client, handle: WorkflowHandle, console: Console, poll_s: float, ask: bool = False
):
    """Redraw the tree until the workflow closes; returns the task awaiting its result.
    `ask`: put the agent's questions to the person at the terminal (stdin is one), each
    request once."""
    result_task = asyncio.create_task(lasting_result(handle, console))
    asked: set[str] = set()
    lines = TerminalLines() if ask else None
    retries = RetryWatch(handle)
    kid_watches: dict[str, RetryWatch] = {}
    last: AgentStatus | None = None
    with Live(console=console, refresh_per_second=8, transient=False) as live:
        while not result_task.done():
            status = await _query(client, handle.id)
            if status is not None and status.state == "finished":
                status = await with_child_ends(client, status)
            last = status or last
            retry = await retries.line()
            if status is not None:
                # A background command has no `status` of its own to ask.
                running = [
                    c for c in status.children if c.status == "running" and c.agent_type != "shell"
                ]
                kids, kid_retries = {}, {}
                for c in running[:MAX_CHILD_QUERIES]:
                    if (own := await _query(client, c.workflow_id)) is not None:
                        kids[c.workflow_id] = own
                    watch = kid_watches.setdefault(
                        c.workflow_id, RetryWatch(client.get_workflow_handle(c.workflow_id))
                    )
                    kid_retries[c.workflow_id] = await watch.line()
                question, plan_shown = None, None
                if status.state == "waiting" and (pending := await waiting_question(handle)):
                    if lines is not None and pending.request_id not in asked:
                        asked.add(pending.request_id)
                        live.stop()  # the prompt needs the terminal to itself
                        await prompt_answers(handle, pending, console, lines)
                        live.start()
                        continue
                    question = question_lines(handle.id, pending)
                elif status.state == "waiting" and (plan := await waiting_plan(handle)):
                    plan_shown = plan_lines(handle.id, plan)
                tree = status_tree(status, kids, question, retry, handle.id, kid_retries)
                live.update(Group(tree, *plan_shown) if plan_shown else tree)
            await asyncio.wait({result_task}, timeout=poll_s)
        # The last frame shows how it ended, not the poll before the end (that poll's, with
        # how its children ended, if no worker answers for the closed workflow).
        if (final := await _query(client, handle.id) or last) is not None:
            live.update(status_tree(await with_child_ends(client, final, CLOSING_WAIT_S), {}))
    return result_task
