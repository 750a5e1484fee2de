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


SEEN_MAIL_KEPT = 256


def read_carry(
    carry: dict | None, client_start: bool, cron: bool = False
) -> tuple[AgentCarry | None, str | None]:
    """The carry an agent's run starts from, or None; and, for a start no continue-as-new
    made whose carry does not fit, the sentence `run` refuses it with. Such a carry came from
    a client (`carry` is set only by the agent's own continue-as-new): the init's
    ValidationError failed the workflow task on every attempt, and the run hung as Running
    (a review, 2026-12-05). A continued run's carry that does not fit comes from newer code
    (a rolling deploy, a field inside its strict models): that still fails the task, which a
    worker that knows the field then takes.

    `cron`: the run is one of a cron's, whose later runs are continued runs with the
    client's input: its first run refused the carry, and every later one hung (a user test,
    2026-12-05). There, a carry that fails for more than fields this worker does not know
    is the client's (one from newer code fails only for those).

    Raises:
        ValidationError: a continued run's carry does not fit.
    """
    if not carry:
        return None, None
    try:
        return AgentCarry.model_validate(carry), None
    except ValidationError as e:
        if not (client_start or (cron and not only_unknown_fields(e))):
            raise
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(carry)"
        return None, (
            f"carry is set only by an agent's own continue-as-new, and this one does not fit "
            f"({e.error_count()} error{'s' if e.error_count() > 1 else ''}, the first at "
            f"{where}: {first['msg']}); start without it"
        )


def only_unknown_fields(e: ValidationError) -> bool:
    """Whether every error is a field the model does not have: newer code's carry."""
    return all(err["type"] == "extra_forbidden" for err in e.errors())


def should_continue_as_new(max_events: int, turns_per_run: int | None, run_turns: int) -> bool:
    """At a turn boundary: the server suggests it, the run's history is long, or the run
    spent its turn budget."""
    info = workflow.info()
    return (
        info.is_continue_as_new_suggested()
        or info.get_current_history_length() >= max_events
        or (turns_per_run is not None and run_turns >= turns_per_run)
    )
