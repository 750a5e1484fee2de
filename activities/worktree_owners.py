"""Which workflow each worktree on this host belongs to, for the reaper (reliability row 4).

An agent that ends normally cleans up its own worktree. One that is terminated (or times out)
never runs that cleanup, so `create_worktree` leaves a record here naming the owner, and the
agent's own cleanup deletes it. A record still present when its owner has closed is a worktree
nobody will clean up; `outlast.reaper` handles those.

Records live in `$OUTLAST_HOME/worktree-owners/`, one JSON file per worktree path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from activities.store import state_dir
from activities.workspace import atomic_write


class WorktreeOwner(BaseModel):
    model_config = ConfigDict(frozen=True)

    workflow_id: str
    repo_root: str
    worktree_path: str
    worktree_branch: str
    head_commit: str


def _dir() -> Path:
    return state_dir().resolve() / "worktree-owners"


def _path(worktree_path: str) -> Path:
    return _dir() / f"{hashlib.sha256(worktree_path.encode()).hexdigest()[:32]}.json"


def remember(owner: WorktreeOwner) -> None:
    """Record (or re-record, after a resume) who owns the worktree."""
    atomic_write(_path(owner.worktree_path), owner.model_dump_json().encode())


def owner_of(worktree_path: str) -> WorktreeOwner | None:
    """The recorded owner of the worktree at that path, if there is a readable record."""
    try:
        return WorktreeOwner.model_validate_json(_path(worktree_path).read_bytes())
    except (OSError, ValidationError, json.JSONDecodeError):
        return None


def record_age_s(worktree_path: str) -> float | None:
    """Seconds since the record was (last) written, or None if there is none."""
    try:
        return max(0.0, time.time() - _path(worktree_path).stat().st_mtime)
    except OSError:
        return None


def forget(worktree_path: str) -> None:
    _path(worktree_path).unlink(missing_ok=True)


def recorded() -> list[WorktreeOwner]:
    """Every record on this host; unreadable ones are skipped (and left for a person)."""
    found = []
    for path in sorted(_dir().glob("*.json")) if _dir().is_dir() else []:
        with contextlib.suppress(OSError, ValidationError, json.JSONDecodeError):
            found.append(WorktreeOwner.model_validate_json(path.read_bytes()))
    return found
