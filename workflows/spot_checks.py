"""R82's spot-check as a verified task and a pipeline's verification stage take it: a PASS
stands only if the verifier ran what its passing checks show (agents/spot_check.py)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, is_cancelled_exception

from agents.builtin.verification import Verdict, VerificationReport
from agents.transcript import TranscriptRef
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.spot_check import SpotCheckInput, spot_check

VERIFIER_SPOT_CHECK = "verifier-spot-check"
"""Patch id: a PASS is checked against the commands the verifier ran; a report that made up
a check or its output had passed (a user test, 2026-12-06)."""

SPOT_CHECK_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=60),
    # Fails open in time too: a host worker that is gone holds no verdict up for long.
    "schedule_to_close_timeout": timedelta(minutes=5),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}


async def spot_checked(
    report: VerificationReport,
    verdict: Verdict,
    reason: str,
    transcript: TranscriptRef,
    host_queue: str,
) -> tuple[Verdict, str]:
    """`verdict` and `reason`, or a FAIL saying which passing check the verifier's own
    conversation does not back. Asked only of a PASS, so no other run records the patch.
    Fails open: the store out of reach is no finding against the verifier."""
    if verdict != "PASS" or not versions.patched(VERIFIER_SPOT_CHECK):
        return verdict, reason
    passing = [c for c in report.checks if c.result == "PASS"]
    try:
        why = await workflow.execute_activity(
            spot_check,
            SpotCheckInput(transcript=transcript, checks=passing),
            task_queue=host_queue,
            summary=f"spot-check {len(passing)} passing check(s) against the verifier's runs",
            **SPOT_CHECK_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        workflow.logger.warning("spot-check not made: %s", e.cause or e)
        return verdict, reason
    return ("FAIL", why) if why else (verdict, reason)
