"""A parent's end's words, down its tree: a child its parent's kill or stop ended says
`stopped by workflow PARENT, which was killed: WORDS` in `outlast show`, where it said only
the parent's id. Moved out of `outlast/inspect.py`, the tree, which had grown past one
concept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio.client import Client
from temporalio.service import RPCError

from agents.notifications import CALLER_STOPPED
from outlast.end_reasons import BY_WORKFLOW, REASON, cancel_request, end_requested_at, end_words
from outlast.question_view import plain

if TYPE_CHECKING:
    from outlast.inspect import Node


async def pass_on_the_reason(
    client: Client,
    node: Node,
    words: str = "",
    how: str = "",
    parent: str = "",
    parent_run: str | None = None,
    parent_resumed: bool = False,
) -> None:
    """A child its parent's kill or stop ended says `stopped by workflow PARENT`: the words
    the person gave that kill or stop follow, down the tree (`outlast kill TEAM --reason`
    read only on the team's own line: a user test, 2026-12-07). `words` and `how` are those
    of the end of `parent`, the parent's id. Only to a child whose cancel came once that end
    was asked for: one the parent's own TaskStop ended before reads the same (a review)."""
    said = node.error.removeprefix(REASON) if node.error and node.error.startswith(REASON) else ""
    by_parent = bool(parent) and said == f"{BY_WORKFLOW}{' '.join(plain(parent).split())}"
    told = None
    if by_parent and (words or parent_resumed):  # else nothing to tell: no history read
        told = await _parent_end(client, node, parent, parent_run, words, how)
    if told is not None:
        words, _ = told
        node.error = f"{node.error}, which was {told[1]}: {words}"
    elif said == CALLER_STOPPED and words:
        # A sync sub-agent its parent's stop reached (the same user test).
        node.error, by_parent = f"{node.error}: {words}", True
    else:
        by_parent = False
    own = words if by_parent else ("" if said.startswith(BY_WORKFLOW) else said)
    how = "killed" if node.row.status == "canceled" else "stopped" if said else ""
    for child in node.children:
        await pass_on_the_reason(
            client,
            child,
            own if how else "",
            how,
            node.row.workflow_id,
            node.row.run_id,
            node.runs > 1 or node.row.run > 1,
        )


async def _parent_end(
    client: Client, node: Node, parent: str, parent_run: str | None, words: str, how: str
) -> tuple[str, str] | None:
    """The words and the how of the parent's end that cancelled `node`, if its cancel was
    requested once that end was asked for. By event ids in the parent's history: a TaskStop
    sent just before a kill came is earlier there, whatever the clocks. Of the parent's run
    that requested it: after a resume, the run shown (`words`, `how`) is a later one, and a
    worker its killed run had stopped read as stopped by the run that completed (a user
    test, 2026-12-07)."""
    try:
        child = client.get_workflow_handle(node.row.workflow_id, run_id=node.row.run_id)
        _, requested_in_parent, run = await cancel_request(child)
        if requested_in_parent is None:
            return None
        ended = client.get_workflow_handle(parent, run_id=run or parent_run)
        if run and run != parent_run:
            words, how = await end_words(ended)
            # That run's own kill came from its parent: its words are no person's.
            words = "" if words.startswith(BY_WORKFLOW) else words
        asked = await end_requested_at(ended) if words else None
    except RPCError:
        return None
    return (words, how) if asked is not None and requested_in_parent > asked else None
