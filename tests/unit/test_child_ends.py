"""An ended agent's child's end, read from its own workflow, as the parent's table would
have it (`outlast/child_ends.py`)."""

from __future__ import annotations

from temporalio.client import WorkflowExecutionStatus as S

from outlast.child_ends import child_end


def test_a_running_child_has_no_end_yet():
    assert child_end(S.RUNNING) is None and child_end(None) is None


def test_a_cancelled_child_was_killed_and_one_that_closed_otherwise_failed():
    assert child_end(S.CANCELED) == "killed"
    assert [child_end(s) for s in (S.FAILED, S.TERMINATED, S.TIMED_OUT)] == ["failed"] * 3


def test_a_completed_child_ends_as_its_result_says_and_a_stopped_one_killed():
    assert child_end(S.COMPLETED, {"status": "completed"}) == "completed"
    assert child_end(S.COMPLETED, {"status": "failed", "error": "x"}) == "failed"
    assert child_end(S.COMPLETED, {"status": "completed", "stopped": True}) == "killed"
    # A result of another release, or none to read: it completed.
    assert child_end(S.COMPLETED, {"status": "passed"}) == "completed"
    assert child_end(S.COMPLETED, None) == "completed"
