"""The agent tree as `outlast show` prints it: a line per agent, with what it spent and how it
ended. Moved out of `outlast/inspect.py`, which gathers the tree, as the tree had grown past
one concept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from outlast.question_view import plain
from workflows.contracts import QueuedWorker

if TYPE_CHECKING:
    from outlast.inspect import Node

ERROR_CHARS = 200
"""How much of a child's error a tree line shows."""


def queued_line(q: QueuedWorker) -> str:
    """`fix-mean (a1b2), implementation of calc.py: waits for doc-mean`; its coordinator's
    TaskStop takes it off the queue, and stopping the coordinator leaves it unstarted."""
    files = f" of {plain(', '.join(q.files))}" if q.files else ""
    waits = plain(", ".join(q.waits_for)) if q.waits_for else "a free slot"
    return f"{plain(q.label) or q.agent_id} ({q.agent_id}), {q.phase}{files}: waits for {waits}"


STOPPED_WITH_TEAM = "stopped with the team"
"""A member the team's stop ended, not a stop of its own (`outlast stop TEAM`)."""

SHUT_DOWN = "shut down on request"
"""A team member that approved a shutdown request."""

STOPPED_REJECTED = "stopped, rejected"
"""A stage attempt a person stopped, and then rejected."""

UNREAD_WHY = {
    "stopped": "its stop came",
    STOPPED_REJECTED: "its stop came",
    SHUT_DOWN: "its shutdown came",
    STOPPED_WITH_TEAM: "the team's stop came",
    "max turns reached": "its turns ran out",
    "killed": "its kill came",
}
"""Why an agent's messages went unread, by its outcome."""


def tree_lines(node: Node, indent: str = "") -> list[str]:
    """The tree as text lines (what `outlast show` prints without --json)."""
    row = node.row
    facts = [node.agent_type or row.pattern, row.status]
    if node.outcome and node.outcome != row.status:
        # `completed; the pipeline failed here` after the status read "completed, completed;
        # ..." (a user test, 2026-12-07).
        facts.append(node.outcome.removeprefix(f"{row.status}; "))
    if node.runs > 1:
        facts.append(f"{node.runs} runs")
    if node.turns is not None:
        facts.append(f"{node.turns} turn{'' if node.turns == 1 else 's'}")
    if node.tool_uses:
        facts.append(f"{node.tool_uses} tool use{'' if node.tool_uses == 1 else 's'}")
    if node.tokens is not None:
        facts.append(f"{node.tokens} tokens")
    if node.duration_ms:
        facts.append(f"{node.duration_ms / 1000:.1f}s")
    if node.verdict:
        facts.append(f"VERDICT: {node.verdict}")
    if node.worktree:
        facts.append(f"worktree kept: {node.worktree}")
    if node.retrying:
        facts.append(node.retrying)
    if node.unknown:
        facts.append(node.unknown)
    if n := node.unread_messages:
        # Sent before the stop or after it, alike: none was read (it said "came after its
        # stop" of a message sent before it, a user test, 2026-12-07).
        why = UNREAD_WHY.get(node.outcome or "", "it ended")
        facts.append(f"{n} message{'' if n == 1 else 's'} went unread ({why} before its next turn)")
    if n := node.undelivered:
        ends = "end" if n == 1 else "ends"
        why = UNREAD_WHY.get(node.outcome or "", "it ended")
        facts.append(f"{n} background task {ends} went unread ({why} before its next turn)")
    if node.error:
        # Whole for the workflow asked about: a refusal's end says what to do (it was cut at
        # 200 characters; a user test, 2026-12-05). A child's, cut: `show` on it has it all.
        cut = indent and len(node.error) > ERROR_CHARS
        facts.append(node.error[: ERROR_CHARS - 3] + "..." if cut else node.error)
    lines = [f"{indent}{row.workflow_id}  ({', '.join(facts)})"]
    lines += [f"{indent}  refused: {text}" for text in node.refused]
    lines += [f"{indent}  queued: {text}" for text in node.queued]
    lines += [
        f"{indent}  never started: {plain(name)} (queued for its files when it ended)"
        for name in node.unstarted
    ]
    for child in node.children:
        lines += tree_lines(child, indent + "  ")
    return lines
