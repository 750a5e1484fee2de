"""The coordinator's scratchpad (spec R63): a per-session directory outside the checkout,
where every worker may read and write, for knowledge that outlives one worker."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.workspace import run_blocking

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ScratchpadRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    """The coordinator's workflow id (may contain `/`)."""


def scratchpad_path(session_id: str) -> str:
    """`{tmp}/outlast-{uid}/{session}/scratchpad`, as Claude Code's: outside any checkout
    even when the state directory (`./.outlast` by default) is inside one."""
    name = _UNSAFE.sub("_", session_id).strip("._") or "session"
    return str(Path(tempfile.gettempdir()) / f"outlast-{os.getuid()}" / name / "scratchpad")


@activity.defn(name="workspace.create_scratchpad")
async def create_scratchpad(req: ScratchpadRequest) -> str:
    """Create (or find) the session's scratchpad; the same id always gives the same path."""
    return await run_blocking(_create, scratchpad_path(req.session_id))


def _create(path: str) -> str:
    Path(path).mkdir(parents=True, exist_ok=True)
    return str(Path(path).resolve())
