"""The markdown a `ForkJoinWorkflow` keeps as its *current details* (Temporal UI, `temporal
workflow describe`): each fork and how it stands, the join's step, the signals it refused.
It kept none at all, while every other workflow type had them (a user test, 2026-12-07).

Pure; ids, states and the directives' first line only, never a fork's report.
"""

from __future__ import annotations

from workflows.contracts import ForkOutcome

DIRECTIVE_CHARS = 60


def fork_state(outcome: ForkOutcome | None, started: bool) -> str:
    """A fork's state as its row reads it."""
    if outcome is None:
        return "running" if started else "starting"
    if outcome.stopped:
        return "stopped"
    return "out of turns" if outcome.max_turns_reached else outcome.status


def render_fork_details(
    directives: list[str],
    children: dict[int, tuple[str, str]],
    outcomes: dict[int, ForkOutcome],
    started: set[int],
    step: str,
    refused: list[str],
) -> str:
    """`children`: index -> (agent id, workflow id) of each fork started or starting;
    `step`: what the fork-join itself does now (`forking`, `joining`, ...)."""
    ended = len(outcomes)
    lines = [f"fork-join: {len(directives)} forks, {ended} ended · {step}", ""]
    lines += ["| fork | directive | state | workflow |", "|---|---|---|---|"]
    for i, directive in enumerate(directives):
        first = (directive.strip().splitlines() or [""])[0]
        if len(first) > DIRECTIVE_CHARS:
            first = first[: DIRECTIVE_CHARS - 1] + "…"
        first = first.replace("|", "\\|")
        state = fork_state(outcomes.get(i), i in started) if i in children else "not started"
        workflow_id = f"`{children[i][1]}`" if i in children else ""
        lines.append(f"| {i + 1} | {first} | {state} | {workflow_id} |")
    if refused:
        lines += ["", "Refused signals (their input did not fit):"]
        lines += [f"- {text}" for text in refused]
    return "\n".join(lines)
