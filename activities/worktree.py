"""Git worktrees for `isolation: worktree` agents (spec R51-R53): the activities' contracts,
and creating one (`worktree_cleanup.py` removes them, `worktree_git.py` runs their git).

An agent's worktree lives at `<toplevel>/.claude/worktrees/<slug>` on branch
`worktree-<slug>` (`/` flattened to `+`), created from HEAD. Both activities are idempotent
and serialised per repository by an exclusive `flock` on a file in the git common dir, so a
retry racing its own timed-out attempt, or many agents starting at once, cannot interleave
their check-then-act steps.

The commit a worktree was created from (its base) is recorded in
`<common-dir>/outlast-worktrees/<branch>` *before* `git worktree add` runs, so a crash
between the two steps still leaves a record a retry can trust. Cleanup removes only
worktrees with such a record and no changes since their base; anything else (including
worktrees Claude Code itself made under the same directory) is kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities import worktree_owners
from activities.errors import OutlastError
from activities.heartbeats import heartbeating
from activities.workspace import atomic_write
from activities.worktree_git import (
    GitFailed,
    GitHung,
    Repo,
    attempt_deadline,
    base_file,
    branch_tip,
    git,
    read_base,
    registered,
    serialised,
)
from activities.worktree_owners import WorktreeOwner
from agents.worktree_slug import (
    VALID_WORKTREE_SLUG_SEGMENT,
    InvalidWorktreeSlug,
    validate_worktree_slug,
    worktree_branch,
)

log = logging.getLogger(__name__)

WORKTREES_DIR = Path(".claude", "worktrees")
# What `git worktree add` writes into `locked` while it runs; left behind if it was killed.
# Git runs with LC_ALL=C (`worktree_git.C_LOCALE`), so the text is never translated.
ADD_IN_PROGRESS = "initializing"


UNDO_S = 10.0
"""How long removing what a failed `git worktree add` left may take, past `GIT_TIMEOUT_S`."""


class WorktreeRefused(OutlastError):
    """A worktree cannot be made here: bad name, no git repository, or the path is taken.

    Retrying cannot help, so the agent fails at once with the reason.
    """

    retryable = False
    refusal = True


class CreateWorktreeInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    repo_root: str
    """Any directory inside the git work tree; the worktree goes under its toplevel."""
    slug: str
    """The worktree name (spec R51), e.g. `agent-a1b2c3d4` or `user/feature-x`."""
    symlink_dirs: list[str] = ["node_modules"]
    """Top-level directories of the main checkout linked into the worktree, not copied."""
    owner_workflow_id: str | None = None
    """The workflow that cleans the worktree up when it ends (the reaper's record); None: the
    calling workflow. A parent creates its child's worktree before the child starts."""
    exclusive: bool = Field(default=False, exclude_if=lambda v: not v)
    """EnterWorktree's (T18): a worktree or branch of that name that is not the owner's
    already (a retry of its own creation) is refused, not taken over."""


class WorktreeInfo(BaseModel):
    """A worktree as created; travels in workflow inputs and results."""

    model_config = ConfigDict(frozen=True)

    repo_root: str
    """The git toplevel the worktree belongs to."""
    worktree_path: str
    worktree_branch: str
    head_commit: str
    """The commit the worktree's branch was created from."""
    existed: bool = False


CleanupAction = Literal["cleanup", "keep", "remove", "discard"]


class CleanupWorktreeInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    info: WorktreeInfo
    # Left out when it is the default: an agent's end schedules what it always did.
    action: CleanupAction = Field(default="cleanup", exclude_if=lambda v: v == "cleanup")
    """`cleanup`, an agent's end: remove it if nothing changed, keep it otherwise. The rest
    are ExitWorktree's (T18): `keep` leaves it and its branch as they are; `remove` removes
    both unless something in them would be lost (uncommitted files, commits on no other
    branch), and then refuses; `discard` removes both whatever they hold."""


class WorktreeCleanup(BaseModel):
    model_config = ConfigDict(frozen=True)

    kept: bool
    reason: str
    """Why it was kept (what changed), or what was removed."""
    refused: bool = Field(default=False, exclude_if=lambda v: not v)
    """`remove` or `discard` did nothing (something would be lost, or the worktree is not
    one to remove); the worktree still has its owner (the reaper's record stays)."""
    unsaved: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """What `remove` refused to lose: uncommitted files, commits on no other branch."""
    removes_directory: bool = Field(default=False, exclude_if=lambda v: not v)
    """In a forecast (`cleanup_forecast`) only: the worktree's directory would go, and its
    sandbox /tmp with it (`outlast reap --dry-run` names that /tmp too)."""


def _check_request(inp: CreateWorktreeInput) -> None:
    """The pure checks, before anything touches the disk or runs git."""
    try:
        validate_worktree_slug(inp.slug)
    except InvalidWorktreeSlug as e:
        raise WorktreeRefused(str(e), slug=inp.slug) from None
    for name in inp.symlink_dirs:
        # One plain segment, so a link can only appear directly inside the worktree.
        if ".." in name or not VALID_WORKTREE_SLUG_SEGMENT.fullmatch(name) or name == ".":
            raise WorktreeRefused(f"Invalid symlink_dirs entry {name!r}: must be one plain name")


def locate(repo_root: str, deadline: float) -> Repo:
    """The toplevel and common dir of the work tree containing `repo_root`.

    Raises:
        WorktreeRefused: `repo_root` is not a directory in a git work tree.
        GitHung, OSError: git hung, or could not be started (retryable: not an answer).
    """
    refused = WorktreeRefused(
        f"{repo_root} is not a git repository; isolation: worktree needs one",
        repo_root=repo_root,
    )
    if not Path(repo_root).is_dir():
        raise refused
    try:
        # Fails in a bare repository too: it has no toplevel.
        top, common = git(
            Path(repo_root),
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
            deadline=deadline,
        ).splitlines()
    except (ValueError, GitFailed):
        raise refused from None
    return Repo(top=Path(top), common=Path(common).resolve(), deadline=deadline)


def _prepare(inp: CreateWorktreeInput, deadline: float) -> Repo:
    """The checks that need git but change nothing; the repository they found."""
    repo = locate(inp.repo_root, deadline)
    _check_branch_name(repo, worktree_branch(inp.slug))
    _worktree_path(repo, inp.slug)
    return repo


def _worktree_path(repo: Repo, slug: str) -> Path:
    path = repo.top / WORKTREES_DIR / slug
    # A committed `.claude` symlink must not move worktrees out of the repository.
    if not path.resolve().is_relative_to(repo.top.resolve()):
        raise WorktreeRefused(f"{path} resolves outside {repo.top}; refusing to create it")
    return path


def _check_branch_name(repo: Repo, branch: str) -> None:
    try:
        repo.git("check-ref-format", "--branch", branch)
    except GitFailed:
        # e.g. a slug ending in `.` or `.lock`: a valid path, but not a valid ref.
        raise WorktreeRefused(f"{branch} is not a valid git branch name") from None


def _head_commit(repo: Repo) -> str:
    try:
        return repo.git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except GitFailed:
        raise WorktreeRefused(
            f"{repo.top} has no commits yet; isolation: worktree needs one to branch from"
        ) from None


def _link_dirs(top: Path, path: Path, names: list[str]) -> None:
    """Symlink the main checkout's (usually ignored) heavy directories into the worktree."""
    for name in names:
        source, link = top / name, path / name
        # A tracked directory of that name is already checked out: keep the real one.
        if source.is_dir() and not os.path.lexists(link):
            os.symlink(source, link, target_is_directory=True)


def _info(repo: Repo, path: Path, branch: str, head: str, existed: bool) -> WorktreeInfo:
    return WorktreeInfo(
        repo_root=str(repo.top),
        worktree_path=str(path),
        worktree_branch=branch,
        head_commit=head,
        existed=existed,
    )


def _create(repo: Repo, inp: CreateWorktreeInput, owner: str = "") -> WorktreeInfo:
    """Create (or find) the worktree; runs under the repository lock."""
    path, branch = _worktree_path(repo, inp.slug), worktree_branch(inp.slug)
    entry = registered(repo).get(path)
    if inp.exclusive:
        if entry is not None or branch_tip(repo, branch) is not None:
            record = worktree_owners.owner_of(str(path))
            if record is None or record.workflow_id != owner:
                raise WorktreeRefused(
                    f"A worktree named {inp.slug} already exists ({path}, branch {branch}) "
                    "and is not this session's: choose another name.",
                    slug=inp.slug,
                )
        elif owner:
            # Its owner before any change: a retry after a crash half-way finds it its own,
            # and the reaper can find what a crash left.
            base = _head_commit(repo)
            record = WorktreeOwner(
                workflow_id=owner,
                repo_root=str(repo.top),
                worktree_path=str(path),
                worktree_branch=branch,
                head_commit=base,
            )
            worktree_owners.remember(record)
    if entry is not None and path.is_dir() and entry.get("locked") != ADD_IN_PROGRESS:
        _link_dirs(repo.top, path, inp.symlink_dirs)  # a crash may have come before the links
        _exclude_worktrees(repo)  # and before this
        head = read_base(repo, branch) or entry.get("HEAD", "")
        return _info(repo, path, branch, head, existed=True)
    if entry is not None:
        # Registered but its directory is gone, or an add was killed half-way: drop it.
        repo.git("worktree", "remove", "--force", "--force", str(path))
    elif path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise WorktreeRefused(f"{path} already exists and is not a worktree of {repo.top}")
    if branch_tip(repo, branch) is not None:
        # The branch outlived its worktree (a crash between the steps): reuse it.
        _add(repo, path, str(path), branch)
        head = read_base(repo, branch) or repo.git("rev-parse", f"refs/heads/{branch}")
    else:
        head = _head_commit(repo)
        atomic_write(base_file(repo, branch), f"{head}\n".encode())
        _add(repo, path, "-b", branch, str(path), head)
    _link_dirs(repo.top, path, inp.symlink_dirs)
    _exclude_worktrees(repo)
    return _info(repo, path, branch, head, existed=False)


EXCLUDED = "/.claude/worktrees/"
"""The line in the repository's own `info/exclude` that keeps its worktrees out of the main
checkout's `git status` (local to the clone, never committed)."""


def _exclude_worktrees(repo: Repo) -> None:
    """The main checkout listed every worktree as untracked (`?? .claude/`), and `git add
    -A` there took one for an embedded repository (a user test, 2026-12-07). A clone that
    cannot be written to keeps listing them: logged, not a refusal."""
    exclude = repo.common / "info" / "exclude"
    line = EXCLUDED.encode()
    try:
        # Bytes: a comment in another encoding is the user's, and no reason to fail.
        raw = exclude.read_bytes() if exclude.exists() else b""
        if line in raw.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("ab") as f:
            f.write((b"\n" if raw and not raw.endswith(b"\n") else b"") + line + b"\n")
    except OSError as e:
        log.warning("could not keep the worktrees out of %s's status: %s", repo.top, e)


def _add(repo: Repo, path: Path, *args: str) -> None:
    """`git worktree add <args>` for `path`. One that fails or is killed may leave a
    registered worktree whose checkout or post-checkout hook never finished: it is removed, so
    the retry checks it out afresh and runs the hook again, where it would otherwise take the
    half-made one for done."""
    try:
        repo.git("worktree", "add", *args)
    except (GitFailed, GitHung):
        # With time of its own: a hang has used up the attempt's.
        undo = dataclasses.replace(repo, deadline=time.monotonic() + UNDO_S)
        try:
            if path in registered(undo):
                undo.git("worktree", "remove", "--force", "--force", str(path))
        except (GitFailed, GitHung) as e:  # the next attempt removes it (`_create`)
            log.warning("could not remove the half-made worktree %s: %s", path, e)
        raise


@activity.defn(name="workspace.create_worktree")
async def create_worktree(inp: CreateWorktreeInput) -> WorktreeInfo:
    """Create the worktree for `inp.slug`, or return it if it already exists.

    Raises:
        WorktreeRefused: The slug or a `symlink_dirs` entry is invalid (nothing is created),
            `repo_root` is not in a git work tree, the repository has no commits, or the
            path is taken by something that is not a worktree.
    """
    _check_request(inp)
    deadline = attempt_deadline()
    async with heartbeating():
        repo = await asyncio.to_thread(_prepare, inp, deadline)
    owner = inp.owner_workflow_id or (activity.info().workflow_id if activity.in_activity() else "")
    info = await serialised(repo, lambda: _create(repo, inp, owner))
    if activity.in_activity():
        # Before the workflow hears of it: a run terminated from here on leaves a record the
        # reaper can act on.
        worktree_owners.remember(
            WorktreeOwner(workflow_id=owner, **info.model_dump(exclude={"existed"}))
        )
    return info
