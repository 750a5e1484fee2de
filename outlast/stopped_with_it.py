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

from activities.earlier_agents import direct_child, quoted, sub_agents_query
from agents.notifications import system_reminder
from workflows import search_attributes as sa
from workflows.contracts import UNSTARTED_MEMO

END_WINDOW = timedelta(seconds=30)
"""How long before its run closed a sub-agent may have been stopped and still count as
stopped by that end (its cancel goes out first; a kill's cleanup takes seconds)."""


async def stopped_by_the_end(
    client: Client,
    workflow_id: str,
    closed_at: datetime | None,
    cancelled: Iterable[str] = (),
    told: list[str] | None = None,
) -> list[str]:
    """The names (else workflow ids' last parts) of `workflow_id`'s direct sub-agents that
    were killed when its run closed at `closed_at`, and those in `cancelled` (their ids).
    `told`: the ones the run's result says its end stopped (names, else agent ids), which
    stand for those killed near its close: a worker the user killed a moment before a
    completed coordinator ended, and was told of, was named as stopped by the end (a user
    test, 2026-12-06). A run without a result (killed, failed) says none: the window then."""
    found: dict[str, str] = {f"told:{name}": name for name in told or []}
    if closed_at is not None and told is None:
        since = quoted((closed_at - END_WINDOW).isoformat())
        query = sub_agents_query(
            workflow_id, f"ExecutionStatus = 'Canceled' AND CloseTime >= {since}"
        )
        async for run in client.list_workflows(query, limit=200):
            if (tail := direct_child(workflow_id, run.id)) is not None:
                found[run.id] = run.typed_search_attributes.get(sa.AGENT_NAME) or tail
    for child in cancelled:
        if (tail := direct_child(workflow_id, child)) is not None:
            found.setdefault(child, tail)
    return sorted(set(found.values()))


def stopped_note(names: list[str]) -> str:
    """The reminder the resume's message ends with; "" when there is none to name."""
    if not names:
        return ""
    return system_reminder(
        # Not "and stopped them": a terminated run stopped none; the resume did.
        "Your previous run ended before these sub-agents did, and they were stopped, so no "
        f"notification of theirs will come: {', '.join(names)} (killed). Do not wait for "
        "them; SendMessage to one continues it from where it stopped."
    )


def unstarted_of(result: object, memo: dict) -> list[str]:
    """The queued workers a coordinator's ended run never started: its result says
    (`AgentResult.unstarted_workers`), a killed or failed run's memo (`UNSTARTED_MEMO`)."""
    said = result.get("unstarted_workers") if isinstance(result, dict) else memo.get(UNSTARTED_MEMO)
    return [str(name) for name in said] if isinstance(said, list) else []


def unstarted_note(names: list[str]) -> str:
    """The reminder that says so to the resumed coordinator; "" when there is none. Its
    conversation says each "starts by itself ... you will be notified" (a user test)."""
    if not names:
        return ""
    return system_reminder(
        "Your previous run ended while these workers were still queued for their files, so "
        f"they never started and never will: {', '.join(names)}. Spawn again any you still "
        "need."
    )
