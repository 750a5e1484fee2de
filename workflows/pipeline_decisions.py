"""A pipeline's stage decisions (R87): the `decide_stage` update, its validator, the
decisions held on a stage that still runs, and the `stage_decision` signal a client sends
when no worker can take the update yet. A mixin of `PipelineWorkflow`, over the state its
`__init__` sets up (declared here)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from workflows import versions
from workflows.client_input import check_update_fields, require_update_input
from workflows.contracts import StopRequest
from workflows.held_handlers import ended_text
from workflows.pattern_contracts import MAX_STAGE_ATTEMPTS, StageDecision, StageOutcome
from workflows.signal_input import Refusals

MAX_ATTEMPTS = MAX_STAGE_ATTEMPTS
"""How often one stage may run (a re-run on a reviewer's feedback is one more)."""

DECISION_EFFECT = "pipeline-decision-effect"
"""Patch: `decide_stage` answers once the pipeline has acted on the decision, with what it
did; before, it answered at once, so its completion came before the stage's next command."""
ONE_HELD = "pipeline-one-held-decision"
"""Patch id: a second decision on a stage with one held is refused at once."""
DECIDED_BY_UPDATE = "a stage is decided by the `decide_stage` update"
"""The hint of a refusal of a signal the pipeline has no handler for."""

STAGE_DECISION_SIGNAL = "stage-decision-signal"
"""Patch id: the `stage_decision` signal decides a stage; a worker of an earlier release
refused it as a signal it has no handler for."""


class PipelineDecisions:
    _awaiting: str | None
    _awaiting_attempt: int | None
    _decision: StageDecision | None
    _held: list[StageDecision]
    _stages: list[StageOutcome]
    _order: list[str]
    _approval_stages: list[str]
    _current: str | None
    _running_label: str
    _effect: tuple[str, int, str] | None
    _ended_as: str | None
    _done: bool
    _stop: StopRequest | None
    _refusals: Refusals
    _running_attempt: int | None
    _attempts_started: dict[str, int]

    @workflow.update(name="decide_stage")
    async def decide_stage(self, decision: StageDecision | None = None) -> str:
        """Approve or reject the stage waiting for approval. A decision on an approval stage
        that is still running is held until it finishes (approving ahead)."""
        assert decision is not None  # the validator refuses an update without one
        # Checked here, not in the validator: an update reaching a worker that does not have
        # this workflow cached is validated before the replay has caught up with its state.
        # Checked once waited: the handler may start before the run has caught up with the
        # activation that brought the update (a worker without the workflow cached).
        # Asked only by a second decision on the stage (a worker without the run cached
        # validated it before its replay held the first): both were taken, and the second
        # failed once the stage ended, which nobody saw (a user test, 2026-12-07).
        if (held := self._held_for(decision)) is not None and versions.patched(ONE_HELD):
            raise ApplicationError(held_refusal(held), type="Decided", non_retryable=True)
        self._held.append(decision)
        self._show_held()
        try:
            await workflow.wait_condition(
                lambda: (
                    self._awaiting is not None
                    or self._done
                    or self._ended_as is not None
                    or self._other_attempt(decision)
                    or self._ran_without_waiting(decision.stage)
                )
            )
        finally:
            self._held.remove(decision)
            self._show_held()
        self._refuse_if_ended(decision)
        if self._done:
            raise ApplicationError(
                f"stage {decision.stage} is not waiting for approval: the pipeline has ended",
                type="NotAwaiting",
                non_retryable=True,
            )
        self._refuse_other_attempt(decision)
        if self._ran_without_waiting(decision.stage):
            raise ApplicationError(
                f"stage {decision.stage} ended without waiting for a decision: only an "
                "approval stage, or a stage a person stops, waits for one",
                type="NotAwaiting",
                non_retryable=True,
            )
        if decision.stage != self._awaiting:
            raise ApplicationError(
                f"stage {decision.stage} is not waiting for approval (waiting: {self._awaiting})",
                type="NotAwaiting",
                non_retryable=True,
            )
        if self._decision is not None:
            raise ApplicationError(
                f"stage {decision.stage} is already decided", type="Decided", non_retryable=True
            )
        self._decision = decision
        attempt = self._awaiting_attempt or 1
        if not versions.patched(DECISION_EFFECT):
            verb = "approved" if decision.approve else ("re-run" if decision.rerun else "rejected")
            return f"stage {decision.stage} {verb}"
        # Answered with what the pipeline did, which a `stop` or the re-run limit may change.
        done = (decision.stage, attempt)
        await workflow.wait_condition(
            lambda: (
                self._ended_as is not None
                or (self._effect is not None and self._effect[:2] == done)
            )
        )
        self._refuse_if_ended(decision)
        assert self._effect is not None
        return f"stage {decision.stage} {self._effect[2]}"

    def _held_for(self, decision: StageDecision) -> StageDecision | None:
        """A decision held already on the stage (and attempt) `decision` is on."""
        for held in self._held:
            attempts = (held.attempt, decision.attempt)
            if held.stage == decision.stage and (None in attempts or len(set(attempts)) == 1):
                return held
        return None

    def _show_held(self) -> None:
        """The Web UI's details of a running stage name the decisions held on it."""
        if self._current is None or self._awaiting is not None:
            return
        held = "; ".join(held_text(d) for d in self._held)
        note = f"; decision held until it ends: {held}" if held else ""
        workflow.set_current_details(self._running_label + note)

    def _ran_without_waiting(self, stage: str) -> bool:
        """A stage that waits only when stopped, whose last attempt has its outcome and does
        not wait: its decision (taken while it ran) has nothing to wait for. Not while its
        outcome is still to come: a verification stage's PASS is spot-checked after its
        agent ends (a review, 2026-12-07)."""
        if stage in self._approval_stages or stage == self._awaiting:
            return False
        return stage in self._attempts_started and not self._unfinished(stage)

    def _unfinished(self, stage: str) -> bool:
        """The stage's last attempt has started and has no outcome yet (its agent runs, or
        its PASS is being spot-checked)."""
        ended = sum(outcome.name == stage for outcome in self._stages)
        return self._attempts_started.get(stage, 0) > ended

    def _refuse_if_ended(self, decision: StageDecision) -> None:
        if self._ended_as is not None:
            raise ApplicationError(
                f"stage {decision.stage} was not decided: the pipeline "
                f"{ended_text(self._ended_as)}",
                type="NotAwaiting",
                non_retryable=True,
            )

    def _current_attempt(self, stage: str) -> int | None:
        if stage == self._awaiting:
            return self._awaiting_attempt
        if stage == self._current:
            return self._running_attempt
        return None

    def _other_attempt(self, decision: StageDecision) -> bool:
        """The decision names an attempt other than the one of its stage that runs or
        waits: refused at once, not held until that attempt ends (a CLI would time out)."""
        current = self._current_attempt(decision.stage)
        return decision.attempt is not None and current is not None and decision.attempt != current

    def _refuse_other_attempt(self, decision: StageDecision) -> None:
        if self._other_attempt(decision):
            raise ApplicationError(
                f"stage {decision.stage} attempt {decision.attempt} is not the one to decide on: "
                f"attempt {self._current_attempt(decision.stage)} is",
                type="NotAwaiting",
                non_retryable=True,
            )

    @decide_stage.validator
    def _check_decision(self, decision: StageDecision | None = None) -> None:
        require_update_input("decide_stage", decision, StageDecision)
        check_update_fields("decide_stage", decision)
        if self._ended_as is not None:
            raise ValueError(f"the pipeline {ended_text(self._ended_as)}")
        # A stage a person stopped waits for a decision too, approval stage or not; one that
        # has no outcome yet may be that stage: a worker without this run cached validates
        # before its replay has applied the stage's end (when the run's task on that end sent
        # no command, Core hands it over with the update's), and a verifier's PASS is
        # spot-checked after its agent ends. Held, as an approval stage's decision ahead is;
        # the handler refuses it if the stage does not wait.
        waits_now = decision.stage == self._awaiting or self._unfinished(decision.stage)
        if decision.stage not in self._approval_stages and not waits_now:
            raise ValueError(
                f"stage {decision.stage} never waits for approval; stages that do: "
                f"{', '.join(self._approval_stages) or 'none'}"
            )
        if decision.approve and decision.rerun:
            # Approved, it was taken as an approval, and the re-run and its feedback were
            # dropped (a user test from a raw client, 2026-12-05; the API refused it).
            raise ValueError(
                "rerun is a rejection's: approve false with rerun true runs the stage again "
                "with the feedback"
            )
        if (why := self._not_next(decision.stage)) is not None:
            raise ValueError(why)
        if (held := self._held_for(decision)) is not None:
            raise ValueError(held_refusal(held))
        ran = self._current_attempt(decision.stage) or 0
        if decision.rerun and ran >= MAX_ATTEMPTS:
            # Taken, it ended the whole pipeline as rejected, the re-run not made (a user
            # test): refused, the stage goes on waiting for a decision it can take.
            raise ValueError(
                f"stage {decision.stage} has run {ran} times, as often as a stage may "
                f"({MAX_ATTEMPTS}): approve it, or reject it without rerun to end the pipeline"
            )

    def _not_next(self, stage: str) -> str | None:
        """Why a decision on `stage` cannot be the next one taken: a stage before it waits
        for approval first, or it has run already. Such a decision was held until the stage
        running now ended (hours, with a real model), then refused. A decision on the stage
        running, or on one only stages without approval come before, is held as before. The
        state read may be one activation old (a worker without the run cached validates
        before its replay has caught up), so at worst a decision sent as a stage ends is
        refused with the stage that was running; sent again, it is taken."""
        at = self._awaiting or self._current
        if at is None or at not in self._order:
            return None
        here, there = self._order.index(at), self._order.index(stage)
        if there < here:
            return f"stage {stage} has run and been decided: the pipeline is at stage {at}"
        first = next((s for s in self._order[here:there] if s in self._approval_stages), None)
        if first is None:
            return None
        return f"stage {stage} is not the next to decide: stage {first} waits for approval first"

    @workflow.signal(name="stage_decision")
    async def stage_decision(self, raw: Any = None, *extra: Any) -> None:
        """A stage's decision that no worker could take when it was sent (`outlast approve`
        and `reject` queue it so): the server keeps an update no worker has taken in memory
        only, so a restart lost it, and a second one refused later was seen by nobody (a
        user test, 2026-12-07). Checked and taken as the `decide_stage` update is; a refusal
        is kept in `refused_signals`."""
        if not versions.patched(STAGE_DECISION_SIGNAL):
            # A worker of an earlier release refused it so (a history it made replays so).
            self._refusals.unknown_signal(
                "PipelineWorkflow", "stage_decision", ("stop",), DECIDED_BY_UPDATE
            )
            return
        decision = self._refusals.checked("stage_decision", StageDecision, raw, extra)
        if decision is None:
            return
        try:
            self._check_decision(decision)
            await self.decide_stage(decision)
        except (ValueError, ApplicationError) as e:
            why = e.message if isinstance(e, ApplicationError) else str(e)
            why = why.removeprefix("update `decide_stage` refused: ")
            self._refusals.keep(f"signal `stage_decision` refused: {why}")


def held_refusal(held: StageDecision) -> str:
    """Why a second decision on a stage is refused while the first is held. Not "taken when it
    ends": of two decisions queued while no worker ran, the stage had ended and waited when
    both came (a chaos test, 2026-12-07)."""
    return f"stage {held.stage} was decided already ({held_text(held)}): one decision per stage"


def held_text(decision: StageDecision) -> str:
    """`approve look`, `reject look (re-run)`, for a decision held on a running stage."""
    verb = "approve" if decision.approve else "reject"
    rerun = " (re-run)" if decision.rerun and not decision.approve else ""
    attempt = f" attempt {decision.attempt}" if decision.attempt else ""
    return f"{verb} {decision.stage}{attempt}{rerun}"
