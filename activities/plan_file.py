"""The plan file of an agent in plan mode (spec R76, R79): where it lives and what it says.

Plans live outside the checkout, in `$OUTLAST_HOME/plans/<slug>.md` (Claude Code's
`~/.claude/plans`), so planning never dirties the working tree.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.heartbeats import run_blocking
from activities.small_files import read_head, text_of
from activities.store import state_dir

PLAN_MAX_CHARS = 100_000


class PlanFileRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    slug: str


class PlanText(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    text: str | None
    """None: no plan file yet (or it is a symlink, which a plan may never be)."""


def plans_dir() -> Path:
    return state_dir() / "plans"


NAME_ATTEMPTS = 10
"""R76: names tried before settling for a random one, to avoid another agent's plan."""


@activity.defn(name="plan.prepare_plan_file")
async def prepare_plan_file(req: PlanFileRequest) -> str:
    """The plan file's absolute path, a name no file has yet (another agent's plan would be
    this agent's at ExitPlanMode); its directory exists afterwards."""
    return await run_blocking(_prepare, req.slug)


def _prepare(slug: str) -> str:
    directory = plans_dir()
    directory.mkdir(parents=True, exist_ok=True)
    names = [f"{slug}.md", *(f"{slug}-{n}.md" for n in range(2, NAME_ATTEMPTS + 1))]
    for name in names:
        path = directory.resolve() / name
        if not path.exists() and not path.is_symlink():
            return str(path)
    return str(directory.resolve() / f"{slug}-{uuid.uuid4().hex[:12]}.md")


@activity.defn(name="plan.read_plan")
async def read_plan(path: str) -> PlanText:
    return await run_blocking(_read, path)


def _read(path: str) -> PlanText:
    plan = Path(path)
    head = None if plan.is_symlink() else read_head(plan, 4 * PLAN_MAX_CHARS)
    if head is None:
        return PlanText(path=path, text=None)
    return PlanText(path=path, text=text_of(head)[:PLAN_MAX_CHARS])
