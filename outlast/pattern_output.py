"""What `outlast run` prints when a pattern's workflow ends: how it ended, a line for each
part (stage, member, task, round, fork), the usage added up, and the text it ended with."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from agents.builtin.verification import NOTHING_RAN
from outlast.progress import count, print_result, print_text, usage_text
from outlast.question_view import plain
from workflows.contracts import AgentResult, ForkJoinResult
from workflows.pattern_contracts import PipelineResult, TeamResult, VerifiedTaskResult
from workflows.turns import sum_usages


def print_pattern_result(
    pattern: str, result: Any, console: Console, workflow_id: str | None = None
) -> None:
    """The result's summary: how it ended, each part's line, the usage added up, then the
    text it ended with. What a model or a person wrote (stage and member names, task
    subjects, texts) is shown as written, never read as markup. `workflow_id`: the
    workflow's, for the commands that go on with it."""
    if isinstance(result, AgentResult):
        print_result(result, console, workflow_id)
        return

    def line(text: str, style: str | None = None) -> None:
        indent = text[: len(text) - len(text.lstrip(" "))]
        console.print(indent + plain(text), style=style, markup=False, highlight=False)

    if isinstance(result, PipelineResult):
        line(f"{result.status}: {result.message}", _colour(result.status == "completed"))
        ended_at = [s for s in result.stages if s.name == result.failed_stage][-1:]
        for s in result.stages:
            verdict = f", VERDICT: {s.verdict}" if s.verdict else ""
            # The attempt that ended it, where its agent completed: it read plain
            # `completed` (a verification report with no VERDICT line; a user test).
            here = bool(ended_at) and ended_at[0] is s and s.status == "completed"
            ended = f"; the pipeline {result.status} here" if here else ""
            # A stage stopped by hand read `completed` (a user test, 2026-12-07), as `show`
            # and a team's member do not.
            status = "stopped" if s.stopped else s.status
            line(f"  {s.name} ({s.agent_type}, attempt {s.attempt}): {status}{verdict}{ended}")
        line(f"  {count(len(result.stages), 'stage run')}, {usage_text(result.usage)}")
        final = result.final_text
        done = [s for s in result.stages if s.status == "completed"]
        if final and result.status != "completed" and done:
            # Not the pipeline's result: a rejected pipeline printed its last completed
            # stage's output under "rejected" as if it were (a user test, 2026-12-07).
            attempt = f" (attempt {done[-1].attempt})" if done[-1].attempt > 1 else ""
            how = "stopped before it finished" if done[-1].stopped else "the last that completed"
            line(f"The output of stage {done[-1].name}{attempt}, {how}:")
    elif isinstance(result, TeamResult):
        lost, undone = result.lead_lost(), result.unfinished()
        colour = "green" if result.status == "completed" and not (lost or undone) else "yellow"
        but = f" ({result.lead_lost_text()})" if lost else ""
        if undone and not lost:
            but = f" ({len(undone)} of {count(len(result.tasks), 'task')} not done)"
        line(f"{result.status}{but}: {count(result.messages, 'message')} inside the team", colour)
        for m in result.members:
            unread = f", {count(m.unread_messages, 'message')} unread" if m.unread_messages else ""
            status = "stopped" if m.stopped else m.status
            # As `show` says it, and a fork's line here: it read plain `completed`.
            turns = " (max turns reached)" if m.max_turns_reached else ""
            turns += " (shut down on request)" if m.shutdown_approved else ""
            # Why a member failed: only `show` said it (a user test, 2026-12-07).
            why = f": {first_line(m.error)}" if m.status == "failed" and m.error else ""
            line(f"  {m.name} ({m.agent_type}): {status}{turns}{unread}{why}")
        for t in result.tasks:
            owner = f" ({t.owner})" if t.owner else ""
            line(f"  task #{t.id} {t.subject}: {t.status}{owner}")
        # The members' own totals (a killed or failed member's from its last report): the
        # team's time is its members' overlapping time, so none is shown.
        usage = sum_usages([m.usage for m in result.members], 0)
        line(f"  {count(len(result.members), 'member')}, {usage_text(usage)}")
        final = result.lead_text
    elif isinstance(result, VerifiedTaskResult):
        line(f"{result.status}: {result.message}", _colour(result.status == "passed"))
        for r in result.rounds:
            # Checks a verifier that called no tool wrote as run, it did not run.
            ran = (
                0 if r.verdict_reason == NOTHING_RAN else sum(c.result != "skip" for c in r.checks)
            )
            why = f": {r.verdict_reason}" if r.verdict_reason else ""
            if not r.verified:
                line(f"  round {r.round}: not verified{why}")
                continue
            line(f"  round {r.round}: VERDICT: {r.verdict} ({count(ran, 'check')} run){why}")
        line(f"  {count(len(result.rounds), 'round')}, {usage_text(result.usage)}")
        final = result.final_text
        if final and result.status != "passed":
            # Not a result: it read as one under a failed task (a user test, 2026-12-07).
            line("The implementer's last report (not verified):")
    elif isinstance(result, ForkJoinResult):
        for f in result.forks:
            how = (
                " (stopped)" if f.stopped else " (max turns reached)" if f.max_turns_reached else ""
            )
            line(f"  fork {f.index + 1}: {f.status}{how}")
        also = " and the synthesis" if result.synthesis else ""
        line(f"  {count(len(result.forks), 'fork')}{also}, {usage_text(result.usage)}")
        final = result.synthesis
    else:
        return
    if final:
        print_text(final, console)


def first_line(text: str, limit: int = 160) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _colour(good: bool) -> str:
    return "green" if good else "red"
