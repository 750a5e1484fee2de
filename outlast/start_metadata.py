"""What the Temporal UI shows of a task from the start: a one-line static summary and a
markdown static details block. These are the only places a task's text goes outside the
workflow input: memo and search attributes stay free of it (visibility lists them)."""

from __future__ import annotations

from typing import Any

from workflows.pattern_contracts import TeamInput

SUMMARY_CHARS = 120
DETAILS_CHARS = 4000


def task_text(inp: Any) -> str:
    """The task as the user gave it, whatever the pattern's input calls it."""
    if isinstance(inp, TeamInput):
        return inp.lead.prompt
    for field in ("task", "prompt", "context", "description"):
        value = getattr(inp, field, None)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def start_metadata(pattern: str, task: str, workspace: str) -> tuple[str, str]:
    """The static summary (one line) and details (markdown) the Temporal UI shows."""
    first = next((line.strip() for line in task.splitlines() if line.strip()), "(no task)")
    if len(first) > SUMMARY_CHARS:
        first = first[: SUMMARY_CHARS - 1] + "…"
    body = task.strip()
    if len(body) > DETAILS_CHARS:
        body = body[:DETAILS_CHARS] + f"\n\n… ({len(task) - DETAILS_CHARS:,} more characters)"
    details = f"**Outlast {pattern}** on `{workspace}`\n\n{body or '(no task)'}"
    return f"{pattern}: {first}", details
