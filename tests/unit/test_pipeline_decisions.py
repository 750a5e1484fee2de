"""What a stage decision that ends a pipeline as rejected answers."""

from __future__ import annotations

from workflows.pipeline import MAX_ATTEMPTS, rejection


def test_a_plain_rejection_says_rejected() -> None:
    assert rejection(False, 1) == "rejected"


def test_a_rerun_past_the_limit_says_it_was_not_rerun_and_why() -> None:
    assert rejection(True, MAX_ATTEMPTS) == (
        f"rejected: not re-run, it ran {MAX_ATTEMPTS} times already (at most {MAX_ATTEMPTS})"
    )
