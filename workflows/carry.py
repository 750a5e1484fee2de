"""What an agent hands to its next run when it continues as new (R92).

Explicit, so nothing is lost silently: the conversation (by reference), turn counters and
usage, read-file state, the mailbox, the sub-agent table with its notified set, and the
prepared prompt (so the next run's requests are byte-identical and keep the cache).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field
from temporalio import workflow

from agents.transcript import TranscriptRef
from workflows.agent_setup import Prepared
from workflows.contracts import MailMessage
from workflows.loop_types import LoopState
from workflows.registry import ChildRegistry
from workflows.team_member import TeamCounters


class AgentCarry(BaseModel):
    state: LoopState
    prepared: Prepared
    registry: ChildRegistry = Field(default_factory=ChildRegistry)
    mailbox: list[MailMessage] = Field(default_factory=list)
    seen_mail: list[str] = Field(default_factory=list)
    started_at: datetime
    """When the agent's first run started: durations span the whole chain."""
    background: bool = False
    runs: int = 1
    """How many runs the chain had before this one."""
    base: TranscriptRef = TranscriptRef()
    team_counts: TeamCounters = Field(default_factory=TeamCounters)


SEEN_MAIL_KEPT = 256


def should_continue_as_new(max_events: int, turns_per_run: int | None, run_turns: int) -> bool:
    """At a turn boundary: the server suggests it, the run's history is long, or the run
    spent its turn budget."""
    info = workflow.info()
    return (
        info.is_continue_as_new_suggested()
        or info.get_current_history_length() >= max_events
        or (turns_per_run is not None and run_turns >= turns_per_run)
    )
