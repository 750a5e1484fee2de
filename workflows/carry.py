"""What an agent hands to its next run when it continues as new (R92).

Explicit, so nothing is lost silently: the conversation (by reference), turn counters and
usage, read-file state, the mailbox, the sub-agent table with its notified set, and the
prepared prompt (so the next run's requests are byte-identical and keep the cache).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, ValidationError
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
    from_run: str = ""
    """The run that handed it on: the next run's `continued_run_id`. A cron's later runs
    are continued runs too, with the client's input (`from_client`)."""


SEEN_MAIL_KEPT = 256


def from_client(carry: dict | None, continued_run_id: str | None, cron: bool) -> bool:
    """Whether `carry` came from a client, not from the run before's continue-as-new: a run
    no continue-as-new made; or a cron's run whose carry was not handed on by the run it
    continues (a cron's later runs are continued runs with the client's input: the first
    refused the carry, and every later one hung; a user test, 2026-12-05). A carry from a
    release before `from_run` in a cron's chain counts as the client's: refused only if it
    does not fit, which a carry of an older release does."""
    if continued_run_id is None:
        return True
    return cron and (carry or {}).get("from_run") != continued_run_id


def read_carry(carry: dict | None, client_start: bool) -> tuple[AgentCarry | None, str | None]:
    """The carry an agent's run starts from, or None; and, for a carry from a client
    (`from_client`) that does not fit, the sentence `run` refuses it with (`carry` is set
    only by the agent's own continue-as-new): the init's ValidationError failed the
    workflow task on every attempt, and the run hung as Running (a review, 2026-12-05). A
    continued run's carry that does not fit comes from newer code (a rolling deploy, a
    field inside its strict models): that still fails the task, which a worker that knows
    the field then takes.

    Raises:
        ValidationError: a continued run's carry does not fit.
    """
    if not carry:
        return None, None
    try:
        return AgentCarry.model_validate(carry), None
    except ValidationError as e:
        if not client_start:
            raise
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(carry)"
        return None, (
            f"carry is set only by an agent's own continue-as-new, and this one does not fit "
            f"({e.error_count()} error{'s' if e.error_count() > 1 else ''}, the first at "
            f"{where}: {first['msg']}); start without it"
        )


def should_continue_as_new(max_events: int, turns_per_run: int | None, run_turns: int) -> bool:
    """At a turn boundary: the server suggests it, the run's history is long, or the run
    spent its turn budget."""
    info = workflow.info()
    return (
        info.is_continue_as_new_suggested()
        or info.get_current_history_length() >= max_events
        or (turns_per_run is not None and run_turns >= turns_per_run)
    )
