"""The coordinator's phase rules (spec R59) as pure functions over declared file sets.

Research workers read and may all run at once. An implementation worker declares the files
it will change; a verification worker, the files it will check. Two workers conflict when
their file sets overlap and at least one of them writes: same-file writes are serialised,
and a check never runs on files that are still being changed. The workflow keeps the
claims and waits; these functions only decide.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Phase = Literal["research", "implementation", "verification"]


class Claim(BaseModel):
    """One worker's declared phase and files (workspace-relative, normalised)."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    phase: Phase = "research"
    files: tuple[str, ...] = ()
    label: str = ""
    """How the coordinator knows the worker (its name or description), for messages."""
    name: str | None = Field(default=None, exclude_if=lambda v: v is None)
    agent_type: str = Field(default="", exclude_if=lambda v: not v)
    description: str = Field(default="", exclude_if=lambda v: not v)
    """What the `tasks` query says of a worker still queued (empty in claims carried by
    runs before it did)."""


class ClaimTable(BaseModel):
    """Claims of started workers, and spawns still waiting for their files, oldest first."""

    held: dict[str, Claim] = Field(default_factory=dict)
    waiting: list[Claim] = Field(default_factory=list)


def normalize_claim_path(root: str, path: str) -> str | None:
    """A declared path relative to the workspace root; None if it leaves the workspace."""
    path = path.strip()
    if not path:
        return None
    if posixpath.isabs(path):
        root = posixpath.normpath(root)
        normal = posixpath.normpath(path)
        if normal != root and not normal.startswith(root.rstrip("/") + "/"):
            return None
        path = posixpath.relpath(normal, root)
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return None
    return normal


def _overlap(a: str, b: str) -> bool:
    """Equal paths, or one is a directory containing the other (`.` is the whole tree)."""
    if a == b or a == "." or b == ".":
        return True
    return a.startswith(b + "/") or b.startswith(a + "/")


def shared_files(a: Claim, b: Claim) -> list[str]:
    """The files over which `a` and `b` conflict (empty: they may run together)."""
    if "implementation" not in (a.phase, b.phase) or "research" in (a.phase, b.phase):
        return []
    # Of two overlapping paths, the narrower one is what both touch.
    return sorted({max(x, y, key=len) for x in a.files for y in b.files if _overlap(x, y)})


def blockers(claim: Claim, ahead: Iterable[Claim]) -> list[tuple[Claim, list[str]]]:
    """The claims `claim` must wait for, with the files each conflict is about."""
    found = []
    for other in ahead:
        if other.agent_id != claim.agent_id and (files := shared_files(claim, other)):
            found.append((other, files))
    return found


def claim_problem(phase: Phase, files: Sequence[str], root: str) -> str | None:
    """Why a declared claim cannot be accepted, as a message the model can act on."""
    if phase == "implementation" and not files:
        return (
            "An implementation worker must declare the files it will change: set `files` to "
            "their repository-relative paths, so workers changing the same files do not run "
            "at the same time."
        )
    outside = [f for f in files if normalize_claim_path(root, f) is None]
    if outside:
        return f"Declared files must be inside the repository: {', '.join(outside)}"
    return None


GLOB_CHARS = "*?["


def glob_problem(files: Sequence[str]) -> str | None:
    """Why declared files that are patterns cannot be accepted: a claim and a write scope
    take each as a path, so `src/*.py` neither kept a worker changing `src/app.py` from
    running beside it nor let it write a file (a user test, 2026-12-07)."""
    globs = [f for f in files if any(c in f for c in GLOB_CHARS)]
    if not globs:
        return None
    return (
        f"Declared files are paths, not patterns: {', '.join(globs)}. List each file the "
        "worker will change, or the directory that holds them (a directory covers "
        "everything in it)."
    )


def queued_text(claim: Claim, waits_for: Sequence[tuple[Claim, list[str]]]) -> str:
    """Appended to the launch result of a worker that waits for others' files."""
    parts = [f"{c.label or c.agent_id} ({', '.join(files)})" for c, files in waits_for]
    return (
        "\nQueued: its files overlap with workers still running or queued ahead of it: "
        f"{'; '.join(parts)}. It starts by itself when they have finished; you will be "
        "notified when it ends, as for any worker."
    )
