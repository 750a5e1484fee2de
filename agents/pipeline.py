"""The pipeline pattern (spec R87): stages whose output feeds the next stage's prompt.

Pure: the default stages and how a stage's prompt is put together. Each stage's prompt is
self-contained, since a stage agent sees nothing but its prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

STAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
HANDOVER_MAX_CHARS = 40_000
"""A previous stage's output beyond this is cut (the whole text stays in its transcript)."""


class PipelineStage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Unique within the pipeline; the stage agent's workflow id is `<pipeline id>/<name>`."""
    agent_type: str
    instructions: str = Field(min_length=1)
    """What this stage does; the task and the previous stage's output are added to it."""
    approval: bool = False
    """Wait for a person to approve this stage's output before the next stage starts."""
    model: str | None = None
    max_turns: int | None = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not STAGE_NAME.match(value):
            raise ValueError(
                f"stage name '{value}' must start with a letter or digit and contain only "
                "letters, digits, '_' and '-'"
            )
        return value


DEFAULT_STAGES: tuple[PipelineStage, ...] = (
    PipelineStage(
        name="explore",
        agent_type="Explore",
        instructions=(
            "Find the code this task touches. Report the relevant files with absolute paths, "
            "the functions and line numbers involved, how they fit together, and how the "
            "project runs its tests. Do not modify files. Thoroughness: medium."
        ),
    ),
    PipelineStage(
        name="plan",
        agent_type="Plan",
        instructions=(
            "Design the implementation of this task from the exploration report below: the "
            "exact changes, file by file, in order, and how to verify them. Do not modify "
            "files."
        ),
    ),
    PipelineStage(
        name="implement",
        agent_type="general-purpose",
        instructions=(
            "Implement this task by following the plan below. Run the project's tests "
            "afterwards. Report the files you changed, what you changed in each, and the test "
            "results."
        ),
    ),
    PipelineStage(
        name="verify",
        agent_type="verification",
        instructions=(
            "Verify the implementation of this task. The original task is below, then the "
            "implementer's report (the files changed and the approach taken). Try to break "
            "it; end with the VERDICT line."
        ),
    ),
)


def stage_prompt(
    stage: PipelineStage,
    task: str,
    previous: tuple[str, str] | None,
    feedback: str = "",
    earlier: Sequence[tuple[str, str]] = (),
) -> str:
    """The stage's whole prompt: its instructions, the task, and what the stage before it
    (`(name, output)`) handed over. A re-run gets the reviewer's `feedback` on the attempt
    before, or, given `earlier` (each rejected attempt's `(output, feedback)`), every earlier
    attempt with the feedback on it, and that the checkout keeps what they changed."""
    parts = [stage.instructions, f"The task:\n{task}"]
    if previous is not None:
        name, output = previous
        parts.append(
            f'Output of the previous stage, "{name}":\n<stage-output>\n{_cut(output)}\n'
            "</stage-output>"
        )
    if earlier:
        attempts = "\n".join(
            f'<attempt n="{n}">\n<output>\n{_cut(output)}\n</output>\n'
            f"<feedback>\n{said or '(none given)'}\n</feedback>\n</attempt>"
            for n, (output, said) in enumerate(earlier, 1)
        )
        parts.append(
            f"This stage ran {len(earlier)} time(s) before, and the reviewer sent it back each "
            "time. The checkout keeps whatever those attempts changed: go on from it, not from "
            f"scratch. The attempts, each with the reviewer's feedback on it:\n{attempts}"
        )
    elif feedback:
        parts.append(f"Feedback from the reviewer on an earlier attempt:\n{feedback}")
    return "\n\n".join(parts)


def handover(output: str, stopped: bool) -> str:
    """What a stage hands the next: its output, and, if a person stopped it before it
    finished (and approved it as it was), that it may be incomplete. The next stage got an
    empty report with no word of why (a user test, 2026-12-07)."""
    if not stopped:
        return output
    said = output.strip() or "(It wrote no report.)"
    return (
        "(This stage was stopped by the user before it finished, and approved as it was: "
        f"its work may be incomplete.)\n\n{said}"
    )


def _cut(output: str) -> str:
    if len(output) > HANDOVER_MAX_CHARS:
        return output[:HANDOVER_MAX_CHARS] + "\n... (cut; the full report is longer)"
    return output


def stage_names_problem(stages: list[PipelineStage]) -> str | None:
    names = [s.name for s in stages]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        return f"stage names must be unique; repeated: {', '.join(repeated)}"
    return None
