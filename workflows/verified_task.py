"""`VerifiedTaskWorkflow` (R85, R89): the adversarial pattern.

An implementer agent (`<id>/implementer`) does the task. Each round a fresh verifier
(`<id>/verify-<n>`) checks the work in a disposable copy of the checkout, so its builds and
test runs never touch the implementer's files. On PASS the task is done; on FAIL or PARTIAL
the verifier's report goes back to the same implementer (a resume of its workflow id with the
report as its next message: it keeps its whole context, R60), and the next round verifies
again, up to `max_rounds`. A report without a well-formed verdict counts as FAIL.

The implementer reports the end of each of its runs by signalling this workflow
(`agent_notification`), as a sub-agent reports to its parent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue, RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    is_cancelled_exception,
)
from temporalio.workflow import ParentClosePolicy

from agents.builtin.verification import (
    NOTHING_RAN,
    effective_verdict,
    parse_verification_report,
)
from agents.canonical import sha256_hex
from agents.spawn import new_agent_id
from agents.verified_task import (
    VERIFIER_KILLED,
    findings_message,
    unchecked_message,
    verifier_prompt,
)
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.resume import AgentControl, AgentRunState, ResumeRequest
    from activities.snapshot import (
        ChangedSince,
        SnapshotRequest,
        changed_files,
        head_commit,
        remove_snapshot,
        snapshot,
    )

from workflows import search_attributes as sa
from workflows.agent_types import refuse_unknown_types
from workflows.child_agents import child_failure, ended_usage, run_agent_child
from workflows.child_endings import LIVENESS_BACKOFF, liveness_interval, spent
from workflows.client_input import given_input, refuse_unknown_fields
from workflows.contracts import (
    AgentInput,
    AgentNotification,
    AgentResult,
    AgentUsage,
    Lineage,
    MailMessage,
    ParentLink,
    Workspace,
)
from workflows.held_handlers import ending_of
from workflows.pattern_contracts import (
    VERIFIER_RAN_NOTHING,
    VerificationCheck,
    VerificationRound,
    VerifiedTaskInput,
    VerifiedTaskResult,
)
from workflows.signal_input import Refusals
from workflows.signals import cancel_workflow
from workflows.spot_checks import spot_checked
from workflows.turns import run_elapsed_ms, sum_usages

PARTIAL_ENDS_THE_TASK = "partial-ends-the-task"
"""Patch id: a PARTIAL verdict ends the task (R89); it had been sent back to the implementer
as if it were a FAIL, round after round."""
BASE_COMMIT = "verified-base-commit"
"""Patch id: the task records HEAD before the implementer starts, and each round's changed
files are those that differ from it; they were those that differ from HEAD, so a commit of
the implementer's hid its changes from the verifier's list."""
AGENT_ID = "verified-task"
"""How the implementer knows this workflow (its parent link's agent id)."""
HOST_OPTIONS = {
    "start_to_close_timeout": timedelta(minutes=10),
    "heartbeat_timeout": None,
    "retry_policy": RetryPolicy(maximum_attempts=5),
}
RESUME_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}
CANCEL_REACHES_IMPLEMENTER = "verified-cancel-reaches-implementer"
"""Patch: a cancel that lands during an activity (an `ActivityError`, not a `CancelledError`)
also cancels the implementer, which from round 2 is no child of ours; one before the
implementer exists still ends the task cancelled; a resume in flight is waited for, so the
run it starts cannot begin after the cancel was sent."""
VERIFIER_KILL_IS_A_FAIL = "verifier-kill-is-a-fail"
"""Patch: a verifier killed on its own (`outlast kill <task>/verify-N`, TaskStop) is a FAIL
round, as a verifier that failed is; its cancellation had gone up and failed the task with no
result, leaving `AgentStatus` at `running`."""
FAILED_STOPS_IMPLEMENTER = "verified-failed-stops-implementer"
"""Patch: a task that fails cancels its implementer, as a killed one does: from round 2 the
implementer is a resumed run, no child of ours, so nothing else stops it."""


STOPPED_IMPLEMENTER_CLOSES = "verified-stopped-implementer-closes"
"""Patch: the task that a stopped implementer ends waits for that implementer, still its child,
to close. It returned at the implementer's notice, and its close policy cancelled the
implementer in its end: the implementer ended CANCELED, its `AgentStatus` left `running` (a
user test, 2026-12-07)."""
IMPLEMENTER_STOP_ENDS = "verified-implementer-stop-ends"
"""Patch: an implementer a person stopped (`outlast stop <task>/implementer`, the way to stop a
verified task after the current turn) ends the task, saying so; its partial work was sent to a
verifier as if it were done."""
VERIFIER_FAILURE_ENDS = "verified-verifier-failure-ends"
"""Patch: a verifier that fails to run ends the task as failed, saying why; its failure was
a FAIL round, and the implementer was sent back to work on findings there were none of."""


@workflow.defn(name="VerifiedTaskWorkflow")
class VerifiedTaskWorkflow:
    def __init__(self) -> None:
        self._liveness = timedelta(minutes=2)
        self._ends: dict[int, AgentNotification] = {}
        self._generation = 1
        """The implementer run whose end closes the current round: the round number, unless
        mail reached the implementer as it ended and a further run answered it."""
        self._rounds: list[VerificationRound] = []
        self._marks = sa.PatternMarks()
        self._refusals = Refusals()
        self._base: str | None = None
        """HEAD before the implementer started (None outside git, or in runs before it)."""
        self._verifier_failed: str | None = None
        """Why the last round's verifier failed to run, if it did (killed alone: not)."""

    @workflow.run
    async def run(self, inp: VerifiedTaskInput | None = None) -> VerifiedTaskResult:
        inp = given_input("VerifiedTaskWorkflow", inp, VerifiedTaskInput)
        refuse_unknown_fields("VerifiedTaskWorkflow", inp)
        self._marks.start(inp.config.search_attributes, "verified")
        try:
            roles = [
                ("implementer_type", inp.implementer_type),
                ("verifier_type", inp.verifier_type),
            ]
            await refuse_unknown_types(
                "VerifiedTaskWorkflow",
                inp.workspace,
                inp.config,
                roles,
                inp.late_agent_types,
                # The implementer gets the config as it is: the verification agent only with
                # its flag (the check counted it as there for every role).
                as_configured=frozenset({"implementer_type"}),
                definer="the implementer",
                writers=frozenset({"implementer_type"}),
            )
            return await self._rounds_until_verdict(inp)
        except BaseException as e:
            self._marks.ended_by(e)
            if not is_cancelled_exception(e):
                # Asked only by a task that fails: the implementer goes with it.
                # Round 1's implementer is our child: the parent close policy cancels it.
                resumed = self._generation > 1
                if (
                    resumed
                    and ending_of(e) == "failed"
                    and versions.patched(FAILED_STOPS_IMPLEMENTER)
                ):
                    with contextlib.suppress(ApplicationError):  # not started, or ended
                        await cancel_workflow(f"{workflow.info().workflow_id}/implementer")
                raise
            # From round 2 the implementer is a resumed run, not our child: cancel it by id.
            impl_id = f"{workflow.info().workflow_id}/implementer"
            if versions.patched(CANCEL_REACHES_IMPLEMENTER):
                with contextlib.suppress(ApplicationError):  # not started yet
                    await cancel_workflow(impl_id)
            elif isinstance(e, asyncio.CancelledError):
                await cancel_workflow(impl_id)
            raise

    async def _rounds_until_verdict(self, inp: VerifiedTaskInput) -> VerifiedTaskResult:
        info = workflow.info()
        self._liveness = timedelta(seconds=inp.config.agents.liveness_check_s)
        implementer = self._implementer_input(inp)
        impl_id = f"{info.workflow_id}/implementer"
        self._base = await self._head(inp)
        start_input, attributes = sa.child_start(implementer)
        child = await workflow.start_child_workflow(
            "AgentWorkflow",
            start_input,
            id=impl_id,
            result_type=AgentResult,
            # Resumed by id in later rounds; a cancelled task cancels it explicitly (run).
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            static_summary=f"{inp.implementer_type}: implementer",
            search_attributes=attributes,
        )
        usages = []
        for round_no in range(1, inp.max_rounds + 1):
            end, spent = await self._implementer_end(round_no, impl_id)
            usages.extend(spent)
            # Asked only by a stopped implementer, so no other run records it.
            if (
                end.status == "completed"
                and end.stopped
                and versions.patched(IMPLEMENTER_STOP_ENDS)
            ):
                why = f": {end.stop_reason}" if end.stop_reason else ""
                self._rounds.append(
                    VerificationRound(
                        round=round_no,
                        implementer_status="killed",
                        implementer_text=end.final_text,
                        verdict="FAIL",
                        verdict_reason=f"the implementer was stopped{why}; nothing was verified",
                    )
                )
                message = f"round {round_no}: the implementer was stopped by the user{why}"
                # Still our child (round 1) and finishing its end. Asked only then.
                if not child.done() and versions.patched(STOPPED_IMPLEMENTER_CLOSES):
                    await asyncio.wait([child])
                return self._result("failed", message, usages)
            if end.status != "completed":
                ended = implementer_ended(end)
                self._rounds.append(
                    VerificationRound(
                        round=round_no,
                        implementer_status=end.status,
                        implementer_text=end.final_text,
                        verdict="FAIL",
                        verdict_reason=f"{ended}; nothing was verified",
                    )
                )
                message = f"round {round_no}: {ended}"
                return self._result("failed", message, usages)
            verdict_round, verifier_usage = await self._verify(inp, round_no, end)
            self._rounds.append(verdict_round)
            usages.append(verifier_usage)
            # Asked only when the verifier failed (a type no definition has, its model given
            # up on): no verdict on the work, so no round for the implementer to redo.
            if self._verifier_failed is not None and versions.patched(VERIFIER_FAILURE_ENDS):
                message = f"round {round_no}: the verifier could not run: {self._verifier_failed}"
                return self._result("failed", message, usages)
            if verdict_round.verdict == "PASS":
                return self._result("passed", f"round {round_no}: VERDICT: PASS", usages)
            if (
                verdict_round.verdict == "PARTIAL"
                and round_no < inp.max_rounds
                and versions.patched(PARTIAL_ENDS_THE_TASK)
            ):
                # R85/R89: what could not be checked is the environment's, not the work's;
                # another round would meet the same limit. The user reads the report.
                message = (
                    f"round {round_no}: VERDICT: PARTIAL (the report says what it could not check)"
                )
                return self._result("partial", message, usages)
            if round_no == inp.max_rounds:
                break
            await self._send_findings(inp, implementer, impl_id, end, verdict_round)
        last = self._rounds[-1]
        status = "partial" if last.verdict == "PARTIAL" else "failed"
        message = f"no PASS after {len(self._rounds)} round(s); last VERDICT: {last.verdict}"
        if last.verifier_killed:  # no finding: nothing was checked in that round
            message += f" ({VERIFIER_KILLED})"
        return self._result(status, message, usages)

    async def _head(self, inp: VerifiedTaskInput) -> str | None:
        """HEAD as the task starts; None outside git, or if git cannot tell (the rounds then
        list what differs from HEAD, as before)."""
        if not versions.patched(BASE_COMMIT):
            return None
        try:
            return await workflow.execute_activity(
                head_commit,
                inp.workspace.root,
                task_queue=inp.workspace.host_queue,
                summary="the checkout's commit before the work",
                **HOST_OPTIONS,
            )
        except ActivityError as e:
            if is_cancelled_exception(e):
                raise
            workflow.logger.warning("HEAD unknown, changed files are from HEAD: %s", e.cause)
            return None

    def _implementer_input(self, inp: VerifiedTaskInput) -> AgentInput:
        info = workflow.info()
        # Every run of the implementer (one resume per round) is one agent in one chain, so
        # its id and chain come from the task's id: drawn here, they would shift the task's
        # later random draws on replay of a history recorded before.
        key = sha256_hex(f"{info.workflow_id}/implementer".encode())
        return AgentInput(
            prompt=inp.task,
            workspace=inp.workspace,
            agent_type=inp.implementer_type,
            model=inp.model,
            config=inp.config,
            name="implementer",
            description="implement the task",
            background=True,
            parent=ParentLink(workflow_id=info.workflow_id, agent_id=AGENT_ID),
            lineage=Lineage(
                agent_id=new_agent_id(int(key[:16], 16)),
                chain_id="-".join((key[16:24], key[24:28], key[28:32], key[32:36], key[36:48])),
                session_id=info.workflow_id,
                parent_workflow_id=info.workflow_id,
                pattern="verified",
            ),
        )

    async def _implementer_end(
        self, round_no: int, impl_id: str
    ) -> tuple[AgentNotification, list[AgentUsage]]:
        """The implementer's end of this round, and what its runs in this round spent. An end
        that says another run follows (mail reached the implementer as it ended) is not the
        round's: that run's answer is what the verifier must check, and the findings go to
        the run after it."""
        workflow.set_current_details(f"round {round_no}: the implementer is working")
        end = await self._end_of(self._generation, impl_id)
        spent = [end.usage]
        while end.continues and versions.patched("verified-follows-late-mail"):
            self._generation += 1
            end = await self._end_of(self._generation, impl_id)
            # The run that answers the mail went on from the one before (continue-as-new):
            # its figures include that one's (unless none could be read: keep those).
            if end.usage != AgentUsage():
                spent = [end.usage]
        return end, spent

    async def _end_of(self, generation: int, impl_id: str) -> AgentNotification:
        """The implementer run's end, from its signal; now and then a check that it still
        runs, since one that was terminated or crashed past its reporting cannot send it."""
        if not versions.patched("verified-task-liveness"):  # the first release waited only
            await workflow.wait_condition(lambda: generation in self._ends)
            return self._ends[generation]
        interval, checks = self._liveness, 0
        while True:
            try:
                await workflow.wait_condition(lambda: generation in self._ends, timeout=interval)
                return self._ends[generation]
            except TimeoutError:
                states: list[AgentRunState] = await workflow.execute_activity_method(
                    AgentControl.describe_agents, [impl_id], **RESUME_OPTIONS
                )
                state = states[0]
                if state.status != "RUNNING" and generation not in self._ends:
                    return AgentNotification(
                        agent_id="implementer",
                        run_generation=generation,
                        status="killed" if state.status == "CANCELED" else "failed",
                        error=state.error or f"its workflow ended {state.status.lower()}",
                        usage=spent(state),
                    )
                checks += 1
                # As an agent's wait for its children (asked after a check that found it
                # running): a long implementer run must not fill the task's history.
                if versions.patched(LIVENESS_BACKOFF):
                    base_s = self._liveness.total_seconds()
                    interval = timedelta(seconds=liveness_interval(base_s, checks))

    async def _verify(
        self, inp: VerifiedTaskInput, round_no: int, end: AgentNotification
    ) -> tuple[VerificationRound, AgentUsage]:
        """The round's verdict, and what its verifier spent."""
        self._verifier_failed = None
        info = workflow.info()
        verifier_id = f"{info.workflow_id}/verify-{round_no}"
        workflow.set_current_details(f"round {round_no}: a fresh verifier checks the work")
        host = inp.workspace.host_queue
        # A bare root without a base, as before: a host worker not yet deployed with
        # `ChangedSince` still reads it.
        since = ChangedSince(root=inp.workspace.root, base=self._base) if self._base else None
        changed = await workflow.execute_activity(
            changed_files,
            since or inp.workspace.root,
            task_queue=host,
            summary=f"{verifier_id}: the files the implementer changed",
            **HOST_OPTIONS,
        )
        copy = await workflow.execute_activity(
            snapshot,
            SnapshotRequest(root=inp.workspace.root, name=verifier_id),
            task_queue=host,
            summary=f"{verifier_id}: a snapshot of the checkout to verify",
            **HOST_OPTIONS,
        )
        features = inp.config.features.model_copy(update={"verification_agent": True})
        verifier = AgentInput(
            prompt=verifier_prompt(inp.task, changed, end.final_text, round_no),
            workspace=Workspace(root=copy, host_queue=host),
            agent_type=inp.verifier_type,
            model=inp.model,
            config=inp.config.model_copy(update={"features": features}),
            description=f"verify round {round_no}",
            workspace_is_copy=True,
            lineage=Lineage(
                session_id=info.workflow_id,
                parent_workflow_id=info.workflow_id,
                pattern="verified",
            ),
        )
        base = {
            "round": round_no,
            "implementer_status": end.status,
            "implementer_text": end.final_text,
            "changed_files": changed,
            "verifier_workflow_id": verifier_id,
        }
        failure: ChildWorkflowError | None = None
        try:
            result = await run_agent_child(
                verifier, verifier_id, f"{inp.verifier_type}: round {round_no}"
            )
        except ChildWorkflowError as e:
            if is_cancelled_exception(e) and not self._killed_alone():
                raise
            failure = e
        finally:
            await workflow.execute_activity(
                remove_snapshot,
                verifier_id,
                task_queue=host,
                summary=f"{verifier_id}: remove its snapshot",
                **HOST_OPTIONS,
            )
        if failure is not None:
            _, why = child_failure(failure)
            if not is_cancelled_exception(failure):
                self._verifier_failed = why  # not a verdict: see _rounds_until_verdict
            if is_cancelled_exception(failure):  # killed alone: no finding on the work
                failed = VerificationRound(
                    **base, verdict="FAIL", verdict_reason=VERIFIER_KILLED, verifier_killed=True
                )
            else:
                failed = VerificationRound(
                    **base, verdict="FAIL", verdict_reason=f"verifier: {why}", verifier_failed=True
                )
            return failed, await ended_usage(verifier_id)
        report = parse_verification_report(result.final_text)
        verdict, reason = effective_verdict(report, result.usage.tool_uses)
        # Asked only where the answer changes the verdict, so no other run records it.
        if reason == NOTHING_RAN and not versions.patched(VERIFIER_RAN_NOTHING):
            verdict, reason = effective_verdict(report)
        verdict, reason = await spot_checked(report, verdict, reason, result.transcript, host)
        checks = [VerificationCheck(**c.model_dump()) for c in report.checks]
        return (
            VerificationRound(
                **base,
                verdict=verdict,
                verdict_reason=reason,
                checks=checks,
                probes_found=report.probes_found,
                report=result.final_text,
            ),
            result.usage,
        )

    async def _send_findings(
        self,
        inp: VerifiedTaskInput,
        implementer: AgentInput,
        impl_id: str,
        end: AgentNotification,
        verdict_round: VerificationRound,
    ) -> None:
        """R85: FAIL or PARTIAL goes back to the same implementer, which keeps its context."""
        self._generation += 1
        generation = self._generation
        text = findings_message(
            verdict_round.verdict,
            verdict_round.verdict_reason,
            verdict_round.report,
            verdict_round.round,
        )
        if verdict_round.verifier_killed:  # the text only: the same resume as a FAIL's
            text = unchecked_message(verdict_round.round)
        resumed = implementer.model_copy(
            update={
                "prompt": "",
                "resume_from": end.transcript,
                "read_state_ref": end.read_state_ref,
                "run_generation": generation,
            }
        )
        message = MailMessage(text=text, sender="verifier", id=f"findings-{verdict_round.round}")
        resume = workflow.execute_activity_method(
            AgentControl.resume_agent,
            ResumeRequest(
                workflow_id=impl_id,
                task_queue=workflow.info().task_queue,
                input=resumed.model_dump(mode="json"),
                message=message.model_dump(mode="json"),
            ),
            **RESUME_OPTIONS,
        )
        if not versions.patched(CANCEL_REACHES_IMPLEMENTER):
            await resume
            return
        # Shielded: a cancel now must not leave a resume in flight that starts the new run
        # after `run` has cancelled the implementer (the activity does not heartbeat, so it
        # would not hear of the cancel anyway). It is waited for, and the cancel goes on.
        started = asyncio.ensure_future(resume)
        try:
            await asyncio.shield(started)
        except asyncio.CancelledError:
            with contextlib.suppress(ActivityError):
                await started
            raise

    @staticmethod
    def _killed_alone() -> bool:
        """A child's cancellation with this task not cancelled: it was killed on its own.
        Asked only then, so no other run records the patch."""
        return workflow.cancellation_reason() is None and versions.patched(VERIFIER_KILL_IS_A_FAIL)

    def _result(self, status: str, message: str, usages=()) -> VerifiedTaskResult:
        workflow.set_current_details(f"verified task {status}: {message}")
        final = next((r.implementer_text for r in reversed(self._rounds)), "")
        self._marks.end(status, self._rounds[-1].verdict if self._rounds else None)
        return VerifiedTaskResult(
            status=status,  # type: ignore[arg-type]
            rounds=self._rounds,
            message=message,
            final_text=final,
            # Its time, as a pipeline's and a fork-join's: `show` and the result gave none (a
            # user test, 2026-12-07). The result's payload only: no command changes.
            usage=sum_usages(list(usages), run_elapsed_ms()),
        )

    @workflow.signal(name="agent_notification")
    def agent_notification(self, raw: Any = None, *extra: Any) -> None:
        """The implementer's run ended (one notification per run, keyed by generation)."""
        # Checked here (signal_input.py): an input that does not fit the arguments would fail
        # every workflow task.
        end = self._refusals.checked(
            "agent_notification", AgentNotification, raw, extra, strict=False
        )
        if end is not None:
            self._ends.setdefault(end.run_generation, end)

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name the task has no handler for (`stop`) is refused, not lost."""
        hint = "a verified task has no graceful stop: a cancel (`outlast kill`) ends it"
        self._refusals.unknown_signal("VerifiedTaskWorkflow", name, ("agent_notification",), hint)

    @workflow.query(name="rounds")
    def rounds(self) -> list[VerificationRound]:
        return self._rounds

    @workflow.query(name="refused_signals")
    def refused_signals(self) -> list[str]:
        """The latest signals refused, newest last, each saying why."""
        return self._refusals.texts


def implementer_ended(end: AgentNotification) -> str:
    """How a killed or failed implementer's round ended, as its verdict's reason and the
    task's message say it: "the implementer killed: stopped" had lost the kill's words (its
    end's `error` is "stopped"; the words are its `stop_reason`; a user test, 2026-12-07)."""
    words = " ".join(end.stop_reason.split())
    error = " ".join((end.error or "").split())
    if end.status == "killed":
        # A kill the liveness check found has no words, but what its workflow's end said.
        why = words or ("" if error == "stopped" else error)
        return f"the implementer was killed: {why}" if why else "the implementer was killed"
    return f"the implementer failed: {error}" if error else "the implementer failed"
