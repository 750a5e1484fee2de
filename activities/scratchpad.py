"""The coordinator's scratchpad (spec R63): a per-session directory outside the checkout,
where every worker may read and write, for knowledge that outlives one worker."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.heartbeats import run_blocking
from activities.host_tmp import host_tmp_root, private_dir

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ScratchpadRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str
    """The coordinator's workflow id (may contain `/`)."""


def _session_dir(session_id: str) -> str:
    return _UNSAFE.sub("_", session_id).strip("._") or "session"


def scratchpad_path(session_id: str) -> str:
    """`{tmp}/outlast-{uid}/{session}/scratchpad`, as Claude Code's: outside any checkout
    even when the state directory (`./.outlast` by default) is inside one."""
    return str(host_tmp_root() / _session_dir(session_id) / "scratchpad")


@activity.defn(name="workspace.create_scratchpad")
async def create_scratchpad(req: ScratchpadRequest) -> str:
    """Create (or find) the session's scratchpad; the same id always gives the same path."""
    return await run_blocking(_create, req.session_id)


def _create(session_id: str) -> str:
    """Raises `HostTmpRefused` where a level is not this user's own: another user would read
    and write what the workers keep there."""
    return str(private_dir(_session_dir(session_id), "scratchpad").resolve())
