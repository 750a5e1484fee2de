"""What a resumed agent is told of the sub-agents its ended run stopped on its way out.

An agent that is killed, stopped or runs out of turns stops the background sub-agents it
leaves running (R92), and `outlast resume` cancels those a terminated run left. Their ends
reach no one: the run that waited for them has closed, and the new run does not know them.
The conversation the agent goes on from still says "You will be notified automatically
when it finishes", so a resumed coordinator waited for, or reported as running, a worker
that had been killed (a user test, 2026-12-06). The resume's message says which ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from temporalio.client import Client
from temporalio.common import SearchAttributeKey

from agents.notifications import system_reminder

END_WINDOW = timedelta(seconds=30)
"""How long before its run closed a sub-agent may have been stopped and still count as
stopped by that end (its cancel goes out first; a kill's cleanup takes seconds)."""

AGENT_NAME = SearchAttributeKey.for_keyword("AgentName")


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


async def stopped_by_the_end(
    client: Client, workflow_id: str, closed_at: datetime | None, cancelled: Iterable[str] = ()
) -> list[str]:
    """The names (else workflow ids' last parts) of `workflow_id`'s direct sub-agents that
    were killed when its run closed at `closed_at`, and those in `cancelled` (their ids)."""
    prefix = f"{workflow_id}/"
    found: dict[str, str] = {}
    if closed_at is not None:
        since = (closed_at - END_WINDOW).isoformat()
        query = (
            f"WorkflowType = 'AgentWorkflow' AND WorkflowId STARTS_WITH {_quoted(prefix)} "
            f"AND ExecutionStatus = 'Canceled' AND CloseTime >= {_quoted(since)}"
        )
        async for run in client.list_workflows(query, limit=200):
            tail = run.id[len(prefix) :] if run.id.startswith(prefix) else "/"
            if "/" not in tail:
                found[run.id] = run.typed_search_attributes.get(AGENT_NAME) or tail
    for child in cancelled:
        tail = child[len(prefix) :] if child.startswith(prefix) else "/"
        if "/" not in tail:
            found.setdefault(child, tail)
    return sorted(set(found.values()))


def stopped_note(names: list[str]) -> str:
    """The reminder the resume's message ends with; "" when there is none to name."""
    if not names:
        return ""
    return system_reminder(
        "Your previous run ended before these sub-agents did, and stopped them, so no "
        f"notification of theirs will come: {', '.join(names)} (killed). Do not wait for "
        "them; SendMessage to one continues it from where it stopped."
    )
