"""The markdown an agent workflow keeps as its *current details* (Temporal UI, `temporal
workflow describe`): what it is doing now, what it has spent, its todo list, its children, a
waiting plan.

Pure: built from the `status` answer, so the UI and `outlast show` never disagree. Ids, types,
counts, the children's short descriptions and the todo items the model wrote for people to
read; never a prompt or file contents.
"""

from __future__ import annotations

from agents.todos import render_todos
from workflows.contracts import AgentStatus, ChildSummary

MAX_CHILDREN = 20
"""Rows of the children table; the rest are counted (the UI shows details as one block)."""

_DOING = {
    "starting": "starting",
    "calling_model": "calling the model",
    "waiting": "waiting",
    "finishing": "finishing",
    "finished": "finished",
}


def web_searches(n: int) -> str:
    """`3 web searches`, or nothing for none: billed per search, so shown once there is one
    (here and on `outlast run`'s summary line)."""
    return f"{n:,} web search{'es' if n != 1 else ''}" if n else ""


def tool_uses(n: int) -> str:
    """`1 tool use`, `3 tool uses` (also `0 tool uses`: unlike a search, always shown)."""
    return f"{n:,} tool use{'s' if n != 1 else ''}"


def chain_note(runs_before: int, first_run_id: str) -> str:
    """The line a continued run shows: Temporal gives a continued run no static summary or
    details (`continue_as_new` takes none), so the UI's page of the current run said nothing
    of the task; this says where it is."""
    return (
        f"run {runs_before + 1} of this workflow id (continued as new): the task's summary and "
        f"details are on its first run, `{first_run_id}`"
    )


def starting_details(agent_type: str, agent_id: str, host_queue: str) -> str:
    """What the Web UI shows until the agent's first steps are done: they run on its
    checkout's host, and a host no worker serves held it here with empty details (a user
    test, 2026-12-07)."""
    return (
        f"**{agent_type}** `{agent_id}` · starting: its first steps run on task queue "
        f"`{host_queue}`, which only the worker on its checkout's host serves (`outlast show` "
        "says when none does)"
    )


def render_details(
    status: AgentStatus, plan_note: str | None = None, chain: str | None = None
) -> str:
    head = f"**{status.agent_type}** `{status.agent_id}`"
    lines = [f"{head} · turn {_turn(status)} · {_doing(status)}"]
    t = status.usage.tokens
    lines.append(
        f"tokens {status.usage.total_tokens:,} (input {t.input_tokens:,} · output "
        f"{t.output_tokens:,} · cache read {t.cache_read_input_tokens:,} · cache write "
        f"{t.cache_creation_input_tokens:,}) · {tool_uses(status.usage.tool_uses)} · "
        f"{web_searches(t.web_search_requests) + ' · ' if t.web_search_requests else ''}"
        f"model `{status.model or '?'}`"
    )
    flags = _flags(status)
    if status.worktree is not None:
        w = status.worktree
        flags.append(f"in worktree `{w.worktree_path}` (branch `{w.worktree_branch}`)")
    if flags:
        lines.append(" · ".join(flags))
    if status.todos:
        lines += ["", render_todos(status.todos)]
    if status.children:
        lines += ["", _children_table(status.children)]
    if status.queued:
        # No workflow yet, so no row above: the Web UI showed none (a user test, 2026-12-07).
        lines += ["", f"**Queued workers** ({len(status.queued)}, waiting for their files)", ""]
        for q in status.queued[-MAX_CHILDREN:]:
            waits = ", ".join(q.waits_for) or "a free slot"
            label = _cell(q.label or q.agent_id)
            lines.append(f"- {label} ({q.phase}): waits for {_cell(waits)}")
    if status.refused_signals:
        lines += ["", "Refused signals (their input did not fit):"]
        lines += [f"- {text}" for text in status.refused_signals]
    if chain:
        lines += ["", chain]
    if plan_note:
        # What waits for a person comes first: it is what the reader has to act on.
        lines = [plan_note, "", "---", "", *lines]
    return "\n".join(lines)


def _turn(status: AgentStatus) -> int:
    # A model call belongs to the turn it starts; tools run in the turn that asked for them.
    return status.turn + 1 if status.state == "calling_model" else max(status.turn, 1)


def _doing(status: AgentStatus) -> str:
    if status.state == "running_tools":
        return "running " + ", ".join(f"`{t}`" for t in status.current_tools)
    return _DOING.get(status.state, status.state)


def _flags(status: AgentStatus) -> list[str]:
    flags = []
    if status.mode != "default":
        flags.append(f"mode {status.mode}")
    if status.background:
        flags.append("background")
    if status.stop_requested:
        flags.append("stop requested")
    if status.pending_notifications:
        flags.append(f"{status.pending_notifications} notification(s) waiting")
    if status.mailbox:
        flags.append(f"{status.mailbox} message(s) waiting")
    return flags


def _children_table(children: list[ChildSummary]) -> str:
    running = sum(c.status == "running" for c in children)
    rows = [
        f"**Sub-agents** ({running} running of {len(children)})",
        "",
        "| agent | type | status | mode | workflow |",
        "|---|---|---|---|---|",
    ]
    for c in children[-MAX_CHILDREN:]:
        label = _cell(c.name or c.description or c.agent_id)
        rows.append(f"| {label} | {c.agent_type} | {c.status} | {c.mode} | `{c.workflow_id}` |")
    if len(children) > MAX_CHILDREN:
        rows.append(f"| … {len(children) - MAX_CHILDREN} earlier | | | | |")
    return "\n".join(rows)


def _cell(text: str, width: int = 60) -> str:
    flat = " ".join(text.split()).replace("|", "/")
    return flat if len(flat) <= width else flat[: width - 1] + "…"
