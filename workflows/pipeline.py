"""`PipelineWorkflow` (R87): stages run one after another, each a child `AgentWorkflow`
whose final answer becomes part of the next stage's prompt.

A stage that fails, is killed, or (for a verification stage) gives no PASS/PARTIAL verdict
ends the pipeline, and the result names that stage. A stage marked for approval waits,
durably, for a person's `decide_stage` update: approve, reject, or reject and re-run it
with feedback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, ChildWorkflowError

from agents.builtin.verification import (
    NOTHING_RAN,
    effective_verdict,
    parse_verification_report,
)
from agents.pipeline import PipelineStage, handover, stage_prompt
from workflows import search_attributes as sa
from workflows import versions
from workflows.agent_types import refuse_unknown_types
from workflows.child_agents import child_failure, ended_usage, run_agent_child
from workflows.client_input import (
    check_update_fields,
    given_input,
    refuse_unknown_fields,
    require_update_input,
)
from workflows.contracts import AgentInput, Lineage, StopRequest, Workspace
from workflows.held_handlers import answer_held, ended_text
from workflows.pattern_contracts import (
    MAX_STAGE_ATTEMPTS,
    VERIFIER_RAN_NOTHING,
    PipelineInput,
    PipelineResult,
    PipelineView,
    StageDecision,
    StageOutcome,
)
from workflows.signal_input import Refusals
from workflows.spot_checks import spot_checked
from workflows.turns import run_elapsed_ms, sum_usages

RERUN_SEES_EARLIER = "rerun-sees-earlier-attempts"
"""Patch id: a stage's re-run is told every earlier attempt's output and the feedback on each,
and that the checkout keeps their changes; it had the latest feedback only (a user test)."""

MAX_ATTEMPTS = MAX_STAGE_ATTEMPTS
"""How often one stage may run (a re-run on a reviewer's feedback is one more)."""


PIPELINE_CHECKED_PASS = "pipeline-checked-pass"
"""Patch id: a verification stage's PASS with no executed check ends the pipeline as a FAIL,
as it does a verified task; the stage's claimed PASS had let the pipeline go on."""


DECISION_EFFECT = "pipeline-decision-effect"
"""Patch: `decide_stage` answers once the pipeline has acted on the decision, with what it
did; before, it answered at once, so its completion came before the stage's next command."""

ONE_HELD = "pipeline-one-held-decision"
"""Patch id: a second decision on a stage with one held is refused at once."""
STOP_BEATS_RERUN = "pipeline-stop-beats-rerun"
"""Patch: a `stop` that came with (or before) a re-run decision ends the pipeline instead of
starting the stage again."""

KILL_CANCELS = "pipeline-kill-cancels"
"""Patch: a pipeline that is cancelled (killed) while a stage runs ends cancelled, as the
other patterns do; it used to take its stage's cancellation for a killed stage and complete
as `failed`."""

STOPPED_STAGE_WAITS = "pipeline-stopped-stage-waits"
"""Patch: a stage a person stopped (`outlast stop <pipeline>/<stage>`) waits for a decision on
it, as an approval stage does; the pipeline went on to the next stage with its half-done
output."""
KILL_ANSWERS = "pipeline-kill-answers-held"
"""Patch: a decision held when the pipeline is killed (or fails) is answered with that end;
before, the run ended under it and its sender got Temporal's "the Workflow completed before
the Update completed" (workflows/held_handlers.py)."""


NO_INPUT = PipelineInput(task="(none)", workspace=Workspace(root="/", host_queue="(none)"))
"""What a run started without an input holds until `run` refuses it."""


PIPELINE_WAITS_MARKED = "pipeline-waits-marked"
"""Patch id: a pipeline's `AgentStatus` reads `waiting_for_approval` while a stage waits for
a decision, and `running` again after; it read `running` throughout."""

STAGE_DECISION_SIGNAL = "stage-decision-signal"
"""Patch id: the `stage_decision` signal decides a stage; a worker of an earlier release
refused it as a signal it has no handler for."""

PIPELINE_SIGNALS = ("stop", "stage_decision")
"""The signals a pipeline takes (a refusal of any other names them)."""


@workflow.defn(name="PipelineWorkflow")
class PipelineWorkflow:
    @workflow.init
    def __init__(self, inp: PipelineInput | None = None) -> None:
        inp = NO_INPUT if inp is None else inp  # `run` refuses a start without one
        last = len(inp.stages) - 1
        self._approval_stages = [
            s.name
            for i, s in enumerate(inp.stages)
            if s.approval or (inp.approve_between and i < last)
        ]
        self._order = [s.name for s in inp.stages]
        self._done = False
        self._ended_as: str | None = None
        """How the pipeline ended under a held decision (`killed`, `failed`): its answer."""
        self._stages: list[StageOutcome] = []
        self._current: str | None = None
        self._awaiting: str | None = None
        self._awaiting_attempt: int | None = None
        self._running_attempt: int | None = None
        self._attempts_started: dict[str, int] = {}
        self._decision: StageDecision | None = None
        self._effect: tuple[str, int, str] | None = None
        """(stage, attempt, what its decision did): the `decide_stage` update's answer."""
        self._stop: StopRequest | None = None
        self._marks = sa.PatternMarks()
        self._waits_marked: bool | None = None
        self._refusals = Refusals()
        self._running_label = ""
        self._held: list[StageDecision] = []
        """Decisions taken on a stage still running, held until it waits (the `pipeline`
        query shows them: `show` said only that the stage ran)."""

    @workflow.run
    async def run(self, inp: PipelineInput | None = None) -> PipelineResult:
        inp = given_input("PipelineWorkflow", inp, PipelineInput)
        refuse_unknown_fields("PipelineWorkflow", inp)
        self._marks.start(inp.config.search_attributes, "pipeline")
        try:
            stages = [(f"stage {s.name}", s.agent_type) for s in inp.stages]
            await refuse_unknown_types(
                "PipelineWorkflow", inp.workspace, inp.config, stages, inp.late_agent_types
            )
            result = await self._run_stages(inp)
            self._marks.end(result.status)
            # A decision that came in as the pipeline ended gets its answer (a refusal).
            await workflow.wait_condition(workflow.all_handlers_finished)
        except BaseException as e:
            self._marks.ended_by(e)
            await answer_held(KILL_ANSWERS, e, self._mark_end)
            raise
        return result

    def _mark_end(self, ending: str) -> None:
        self._ended_as = ending

    async def _run_stages(self, inp: PipelineInput) -> PipelineResult:
        previous: tuple[str, str] | None = None
        for index, stage in enumerate(inp.stages):
            if self._stop is not None:
                return self._result("stopped", stage.name, f"stopped before stage {stage.name}")
            feedback, attempt = "", 1
            earlier: list[tuple[str, str]] = []
            while True:
                # A re-run sees every earlier attempt and the feedback on each; asked only by
                # a re-run, so no other run records it.
                if earlier and versions.patched(RERUN_SEES_EARLIER):
                    prompt = stage_prompt(stage, inp.task, previous, earlier=earlier)
                else:
                    prompt = stage_prompt(stage, inp.task, previous, feedback)
                outcome = await self._run_stage(inp, stage, prompt, attempt)
                self._stages.append(outcome)
                if problem := stage_problem(outcome):
                    return self._result("failed", stage.name, problem)
                needs_approval = stage.approval or (
                    inp.approve_between and index < len(inp.stages) - 1
                )
                # Not by the pipeline's own stop, which ends it after this stage. Asked only
                # then, so no other run records it.
                stopped = outcome.stopped and self._stop is None and not needs_approval
                if stopped and versions.patched(STOPPED_STAGE_WAITS):
                    needs_approval = True
                if not needs_approval:
                    break
                decision = await self._await_decision(stage.name, attempt, stopped)
                if decision is None:
                    return self._result("stopped", stage.name, f"stopped at stage {stage.name}")
                if decision.approve:
                    self._effect = (stage.name, attempt, "approved")
                    break
                if decision.rerun and self._stop is not None and versions.patched(STOP_BEATS_RERUN):
                    # `stop` promises no further stage starts; a re-run would be one.
                    self._effect = (stage.name, attempt, "not re-run: the pipeline was stopped")
                    return self._result("stopped", stage.name, f"stopped at stage {stage.name}")
                if not decision.rerun or attempt >= MAX_ATTEMPTS:
                    self._effect = (stage.name, attempt, rejection(decision.rerun, attempt))
                    self._stages[-1] = outcome.model_copy(update={"status": "rejected"})
                    reason = f": {decision.feedback}" if decision.feedback else ""
                    return self._result(
                        "rejected", stage.name, f"stage {stage.name} rejected{reason}"
                    )
                self._effect = (stage.name, attempt, f"re-run (attempt {attempt + 1})")
                # Rejected all the same: its output is no pipeline's result (a rejected
                # re-run ended with this attempt's text as the pipeline's; a user test).
                self._stages[-1] = outcome.model_copy(update={"status": "rejected"})
                feedback, attempt = decision.feedback, attempt + 1
                earlier.append((outcome.final_text, decision.feedback))
            previous = (stage.name, handover(outcome.final_text, outcome.stopped))
        return self._result("completed", None, "all stages completed")

    async def _run_stage(
        self, inp: PipelineInput, stage: PipelineStage, prompt: str, attempt: int
    ) -> StageOutcome:
        info = workflow.info()
        self._current, self._running_attempt = stage.name, attempt
        self._attempts_started[stage.name] = attempt
        self._running_label = f"stage **{stage.name}** ({stage.agent_type}) running"
        workflow.set_current_details(self._running_label)
        suffix = f"-{attempt}" if attempt > 1 else ""
        child_id = f"{info.workflow_id}/{stage.name}{suffix}"
        # Stages may be verification agents, which are built-ins behind a flag (R10).
        features = inp.config.features.model_copy(update={"verification_agent": True})
        child = AgentInput(
            prompt=prompt,
            workspace=inp.workspace,
            agent_type=stage.agent_type,
            model=stage.model or inp.model,
            config=inp.config.model_copy(update={"features": features}),
            max_turns=stage.max_turns,
            description=f"pipeline stage {stage.name}",
            lineage=Lineage(
                session_id=info.workflow_id,
                parent_workflow_id=info.workflow_id,
                pattern="pipeline",
            ),
        )
        base = {"name": stage.name, "agent_type": stage.agent_type, "workflow_id": child_id}
        try:
            result = await run_agent_child(
                child, child_id, f"{stage.agent_type}: pipeline stage {stage.name}"
            )
        except ChildWorkflowError as e:
            return await self._failed_stage(e, base, attempt)
        finally:
            self._current = None
        verdict, reason = None, ""
        if stage.agent_type == "verification":
            verdict, reason = stage_verdict(result.final_text, result.usage.tool_uses)
            if verdict == "PASS":
                verdict, reason = await spot_checked(
                    parse_verification_report(result.final_text),
                    verdict,
                    reason,
                    result.transcript,
                    inp.workspace.host_queue,
                )
        return StageOutcome(
            **base,
            attempt=attempt,
            status=result.status,
            final_text=result.final_text,
            error=result.error,
            verdict=verdict,
            verdict_reason=reason,
            usage=result.usage,
            stopped=result.stopped,
        )

    async def _failed_stage(self, e: ChildWorkflowError, base: dict, attempt: int) -> StageOutcome:
        """A stage that ended without a result, with what it spent (read after its end)."""
        if workflow.cancellation_reason() is not None and versions.patched(KILL_CANCELS):
            # The pipeline was killed: whatever ended the stage, the pipeline ends cancelled.
            raise asyncio.CancelledError("the pipeline was killed") from e
        status, message = child_failure(e)
        usage = await ended_usage(base["workflow_id"])
        return StageOutcome(**base, attempt=attempt, status=status, error=message, usage=usage)

    async def _await_decision(
        self, stage: str, attempt: int, stopped: bool = False
    ) -> StageDecision | None:
        self._awaiting, self._awaiting_attempt, self._decision = stage, attempt, None
        ended = "was stopped" if stopped else "finished"
        workflow.set_current_details(
            f"stage **{stage}** {ended}: waiting for approval (update `decide_stage`)"
        )
        self._mark_waiting(sa.WAITING_FOR_APPROVAL)
        await workflow.wait_condition(lambda: self._decision is not None or self._stop is not None)
        decision, self._awaiting, self._decision = self._decision, None, None
        self._awaiting_attempt = None
        self._mark_waiting("running")
        return decision

    def _mark_waiting(self, status: str) -> None:
        """`AgentStatus` while a stage waits for a person: the Web UI's filter for what waits
        on one (`waiting_for_approval`) missed pipelines (a user test, 2026-12-07). Asked at
        the first wait, so a pipeline that never waits records nothing new."""
        if not self._marks.on:
            return
        if self._waits_marked is None:
            self._waits_marked = versions.patched(PIPELINE_WAITS_MARKED)
        if self._waits_marked:
            workflow.upsert_search_attributes([sa.AGENT_STATUS.value_set(status)])

    def _result(self, status: str, stage: str | None, message: str) -> PipelineResult:
        self._done = True
        completed = [s for s in self._stages if s.status == "completed"]
        workflow.set_current_details(f"pipeline {status}: {message}")
        return PipelineResult(
            status=status,  # type: ignore[arg-type]
            stages=self._stages,
            failed_stage=stage if status != "completed" else None,
            message=message,
            final_text=completed[-1].final_text if completed else "",
            usage=sum_usages([s.usage for s in self._stages], run_elapsed_ms()),
        )

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

    @workflow.signal(name="stop")
    def stop(self, request: Any = None, *extra: Any) -> None:
        """End after the running stage; no further stage starts. Its input is checked as
        workflows/signal_input.py says."""
        checked = self._refusals.checked("stop", StopRequest, request, extra, default={})
        if checked is not None:
            self._stop = checked

    @workflow.signal(name="stage_decision")
    async def stage_decision(self, raw: Any = None, *extra: Any) -> None:
        """A stage's decision that no worker could take when it was sent (`outlast approve`
        and `reject` queue it so): the server keeps an update no worker has taken in memory
        only, so a restart lost it, and a second one refused later was seen by nobody (a
        user test, 2026-12-07). Checked and taken as the `decide_stage` update is; a refusal
        is kept in `refused_signals`."""
        if not versions.patched(STAGE_DECISION_SIGNAL):
            # A worker of an earlier release refused it so (a history it made replays so).
            hint = "a stage is decided by the `decide_stage` update"
            self._refusals.unknown_signal("PipelineWorkflow", "stage_decision", ("stop",), hint)
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

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name the pipeline has no handler for is refused, not lost unseen."""
        hint = "a stage is decided by the `decide_stage` update"
        self._refusals.unknown_signal("PipelineWorkflow", name, PIPELINE_SIGNALS, hint)

    @workflow.query(name="pipeline")
    def pipeline(self) -> PipelineView:
        return PipelineView(
            stages=self._stages,
            current=self._current,
            awaiting_approval=self._awaiting,
            awaiting_attempt=self._awaiting_attempt,
            stop_requested=self._stop is not None,
            refused_signals=self._refusals.texts,
            held_decisions=[held_text(d) for d in self._held],
        )


def held_refusal(held: StageDecision) -> str:
    """Why a second decision on a stage is refused while the first waits for its end."""
    return (
        f"stage {held.stage} has a decision held already ({held_text(held)}), taken when it "
        "ends: one decision per stage"
    )


def held_text(decision: StageDecision) -> str:
    """`approve look`, `reject look (re-run)`, for a decision held on a running stage."""
    verb = "approve" if decision.approve else "reject"
    rerun = " (re-run)" if decision.rerun and not decision.approve else ""
    attempt = f" attempt {decision.attempt}" if decision.attempt else ""
    return f"{verb} {decision.stage}{attempt}{rerun}"


def rejection(rerun_asked: bool, attempt: int) -> str:
    """What a decision that ends the pipeline as rejected did."""
    if rerun_asked:
        return f"rejected: not re-run, it ran {attempt} times already (at most {MAX_ATTEMPTS})"
    return "rejected"


def stage_verdict(report_text: str, tool_uses: int | None = None) -> tuple[str | None, str]:
    """A verification stage's verdict, as VerifiedTask reads one (R81, R82): a PASS whose
    report shows no executed check (no `**Command run:**` with its output), or whose
    verifier ran no command (`tool_uses` 0), is a FAIL, and the reason says so. None when
    the report has no verdict line."""
    report = parse_verification_report(report_text)
    if report.verdict is None:
        return None, ""
    verdict, reason = effective_verdict(report, tool_uses)
    # Each asked only where its answer changes the stage's verdict, so no other run
    # records it.
    if reason == NOTHING_RAN and not versions.patched(VERIFIER_RAN_NOTHING):
        verdict, reason = effective_verdict(report)
    if reason and not versions.patched(PIPELINE_CHECKED_PASS):
        return report.verdict, ""
    return verdict, reason


def stage_problem(outcome: StageOutcome) -> str | None:
    """Why a finished stage ends the pipeline, naming it; None if the pipeline goes on."""
    if outcome.status != "completed":
        return f"stage {outcome.name} {outcome.status}: {outcome.error or 'no error given'}"
    if outcome.agent_type == "verification":
        if outcome.verdict is None:
            return f"stage {outcome.name}: the verification report has no VERDICT line"
        if outcome.verdict == "FAIL":
            why = f" ({outcome.verdict_reason})" if outcome.verdict_reason else ""
            return f"stage {outcome.name}: VERDICT: FAIL{why}"
    return None
