"""`PipelineWorkflow` (R87): stages run one after another, each a child `AgentWorkflow`
whose final answer becomes part of the next stage's prompt.

A stage that fails, is killed, or (for a verification stage) gives no PASS/PARTIAL verdict
ends the pipeline, and the result names that stage. A stage marked for approval waits,
durably, for a person's `decide_stage` update: approve, reject, or reject and re-run it
with feedback (workflows/pipeline_decisions.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ChildWorkflowError

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
    given_input,
    refuse_unknown_fields,
)
from workflows.contracts import AgentInput, Lineage, StopRequest, Workspace
from workflows.held_handlers import answer_held
from workflows.pattern_contracts import (
    VERIFIER_RAN_NOTHING,
    PipelineInput,
    PipelineResult,
    PipelineView,
    StageDecision,
    StageOutcome,
)
from workflows.pipeline_decisions import (
    DECIDED_BY_UPDATE,
    MAX_ATTEMPTS,
    PipelineDecisions,
    held_text,
)
from workflows.signal_input import Refusals
from workflows.spot_checks import spot_checked
from workflows.turns import run_elapsed_ms, sum_usages

RERUN_SEES_EARLIER = "rerun-sees-earlier-attempts"
"""Patch id: a stage's re-run is told every earlier attempt's output and the feedback on each,
and that the checkout keeps their changes; it had the latest feedback only (a user test)."""


PIPELINE_CHECKED_PASS = "pipeline-checked-pass"
"""Patch id: a verification stage's PASS with no executed check ends the pipeline as a FAIL,
as it does a verified task; the stage's claimed PASS had let the pipeline go on."""


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


PIPELINE_SIGNALS = ("stop", "stage_decision")
"""The signals a pipeline takes (a refusal of any other names them)."""


@workflow.defn(name="PipelineWorkflow")
class PipelineWorkflow(PipelineDecisions):
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

    @workflow.signal(name="stop")
    def stop(self, request: Any = None, *extra: Any) -> None:
        """End after the running stage; no further stage starts. Its input is checked as
        workflows/signal_input.py says."""
        checked = self._refusals.checked("stop", StopRequest, request, extra, default={})
        if checked is not None:
            self._stop = checked

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name the pipeline has no handler for is refused, not lost unseen."""
        self._refusals.unknown_signal("PipelineWorkflow", name, PIPELINE_SIGNALS, DECIDED_BY_UPDATE)

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
