"""The adversarial pattern (spec R85, R89) as pure texts: what a fresh verifier is told each
round, and what the implementer hears back when the verdict is not PASS."""

from __future__ import annotations

from collections.abc import Sequence

REPORT_MAX_CHARS = 20_000


def verifier_prompt(task: str, changed: Sequence[str], approach: str, round_no: int) -> str:
    """R81: the original task, the files changed and the approach taken; self-contained."""
    files = "\n".join(f"- {path}" for path in changed) or "- (no changed files were detected)"
    return (
        f"Verify an implementation (verification round {round_no}). Try to break it; do not "
        "take the implementer's word for anything.\n\n"
        f"The ORIGINAL task:\n{task}\n\n"
        f"Files changed (against the last commit):\n{files}\n\n"
        f"The implementer's report of its approach:\n<implementer-report>\n{_cap(approach)}\n"
        "</implementer-report>\n\n"
        "You work in a disposable copy of the checkout: build and run what you need. Report "
        "every check with the command you ran and the output you saw, include at least one "
        "adversarial probe, and end with the VERDICT line."
    )


def findings_message(verdict: str, reason: str, report: str, round_no: int) -> str:
    """What the implementer is sent after a FAIL or PARTIAL (continue, R60: it has the
    context of its own work)."""
    why = f" ({reason})" if reason else ""
    return (
        f"An independent verifier checked your work (round {round_no}) and reported "
        f"VERDICT: {verdict}{why}. Fix what it found, run the tests yourself, and report what "
        "you changed and how you checked it. Its report:\n\n"
        f"<verifier-report>\n{_cap(report)}\n</verifier-report>"
    )


VERIFIER_KILLED = "the verifier was killed before it reported; nothing was checked"
"""A round's `verdict_reason` when a person killed its verifier (`outlast kill TASK/verify-N`)."""


def unchecked_message(round_no: int) -> str:
    """What the implementer hears when its round's verifier was killed before it reported:
    no finding to fix. It was sent "reported VERDICT: FAIL (verifier: Cancelled)" and an empty
    report, as if its work had failed a check (a user test, 2026-12-07)."""
    return (
        f"The verifier of round {round_no} was killed by the user before it reported, so "
        "your work was not checked and there are no findings. Make sure the work is complete, "
        "run the tests yourself, and report what you changed and how you checked it: a fresh "
        "verifier checks it next."
    )


def _cap(text: str) -> str:
    if len(text) <= REPORT_MAX_CHARS:
        return text
    return text[:REPORT_MAX_CHARS] + "\n... (cut; the full text is in the agent's transcript)"
