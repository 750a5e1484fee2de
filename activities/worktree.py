"""Git worktrees for `isolation: worktree` agents (spec R51-R53).

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

Every git call is an argument list, nothing goes through a shell, and an attempt's git
commands are killed, with the hooks they started, once the attempt has run `GIT_TIMEOUT_S`: a
hung one would hold the repository's lock, and every other agent's worktree with it, for as
long as the worker lives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field
from temporalio import activity

from activities import worktree_owners
from activities.errors import OutlastError
from activities.sandbox_tmp import remove_sandbox_tmp
from activities.workspace import (
    NO_OPTIONAL_LOCKS,
    atomic_write,
    heartbeating,
    run_blocking,
    run_git,
)
from activities.worktree_owners import WorktreeOwner
from agents.worktree_slug import (
    VALID_WORKTREE_SLUG_SEGMENT,
    InvalidWorktreeSlug,
    validate_worktree_slug,
    worktree_branch,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

WORKTREES_DIR = Path(".claude", "worktrees")
LOCK_FILE = "outlast-worktree.lock"
BASES_DIR = "outlast-worktrees"
# What `git worktree add` writes into `locked` while it runs; left behind if it was killed.
# Git runs with LC_ALL=C (`_C_LOCALE`), so the text is never translated.
_ADD_IN_PROGRESS = "initializing"
_C_LOCALE = {"LC_ALL": "C", "LANGUAGE": "C"}

GIT_TIMEOUT_S = 100.0
"""How long one attempt's git may run, from the attempt's start (waiting for the lock
included): a hung command (a post-checkout hook that waits, an LFS filter asking for
credentials, a stuck filesystem) is killed at that point, below the activities' 2-minute
limit (`workflows.worktrees.WORKTREE_OPTIONS`), so the lock is free before the attempt's
retry asks for it."""

UNDO_S = 10.0
"""How long removing what a failed `git worktree add` left may take, past `GIT_TIMEOUT_S`."""


class GitFailed(Exception):
    """A git command exited non-zero. Where that answers a question (no such branch, not a
    repository) it is caught; elsewhere the activity fails and is retried (a lock another git
    held, a hook that failed once), where a `WorktreeRefused` is not."""

    def __init__(self, args: tuple[str, ...], status: int, stderr: bytes):
        text = stderr.decode(errors="replace").strip()
        super().__init__(f"git {' '.join(args)} failed ({status}): {text}")


class GitHung(Exception):
    """A git command ran past its attempt's `GIT_TIMEOUT_S` and was killed. Never taken for
    an answer (a stuck filesystem is not "not a repository"): the attempt fails and is
    retried."""


def _deadline() -> float:
    """When the git of an attempt starting now must be done (`time.monotonic()`)."""
    return time.monotonic() + GIT_TIMEOUT_S


def _git(cwd: Path, *args: str, deadline: float, reads: bool = False) -> str:
    """`git <args>` in `cwd`, its output less the final newline; `reads`: without optional
    locks (`NO_OPTIONAL_LOCKS`).

    Raises:
        GitFailed: It exited non-zero.
        GitHung: It was still running at `deadline` and was killed, with what it started.
    """
    env = {**_C_LOCALE, **NO_OPTIONAL_LOCKS} if reads else _C_LOCALE
    try:
        done = run_git(str(cwd), *args, timeout=max(deadline - time.monotonic(), 0.1), env=env)
    except subprocess.TimeoutExpired:
        raise GitHung(
            f"git {' '.join(args)} killed, with what it started: the attempt's git has run "
            f"{GIT_TIMEOUT_S:g} s"
        ) from None
    if done.returncode != 0:
        raise GitFailed(args, done.returncode, done.stderr)
    out = done.stdout.decode(errors="surrogateescape")
    return out[:-1] if out.endswith("\n") else out


class WorktreeRefused(OutlastError):
    """A worktree cannot be made here: bad name, no git repository, or the path is taken.

    Retrying cannot help, so the agent fails at once with the reason.
    """

    retryable = False


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


@dataclass(frozen=True)
class _Repo:
    top: Path
    common: Path
    deadline: float
    """The attempt's (`_deadline`): every git command it runs ends by then."""

    def git(self, *args: str) -> str:
        return _git(self.top, *args, deadline=self.deadline)


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


def _locate(repo_root: str, deadline: float) -> _Repo:
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
        top, common = _git(
            Path(repo_root),
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
            deadline=deadline,
        ).splitlines()
    except (ValueError, GitFailed):
        raise refused from None
    return _Repo(top=Path(top), common=Path(common).resolve(), deadline=deadline)


def _prepare(inp: CreateWorktreeInput, deadline: float) -> _Repo:
    """The checks that need git but change nothing; the repository they found."""
    repo = _locate(inp.repo_root, deadline)
    _check_branch_name(repo, worktree_branch(inp.slug))
    _worktree_path(repo, inp.slug)
    return repo


def _worktree_path(repo: _Repo, slug: str) -> Path:
    path = repo.top / WORKTREES_DIR / slug
    # A committed `.claude` symlink must not move worktrees out of the repository.
    if not path.resolve().is_relative_to(repo.top.resolve()):
        raise WorktreeRefused(f"{path} resolves outside {repo.top}; refusing to create it")
    return path


def _check_branch_name(repo: _Repo, branch: str) -> None:
    try:
        repo.git("check-ref-format", "--branch", branch)
    except GitFailed:
        # e.g. a slug ending in `.` or `.lock`: a valid path, but not a valid ref.
        raise WorktreeRefused(f"{branch} is not a valid git branch name") from None


async def _serialised(repo: _Repo, fn: Callable[[], T]) -> T:
    """Run `fn` in a thread holding the repository's worktree lock, heartbeating meanwhile.

    If the activity is cancelled while the thread still waits for the lock, the thread gives
    up once it gets the lock; if `fn` has already started it runs to completion, which is
    safe because both operations are idempotent. The lock is always released by the thread
    that took it, whatever happens to the awaiting coroutine.
    """
    abandoned = threading.Event()

    def locked() -> T | None:
        fd = os.open(repo.common / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return None if abandoned.is_set() else fn()
        finally:
            os.close(fd)  # releases the flock

    try:
        async with heartbeating():
            result = await asyncio.to_thread(locked)
    except asyncio.CancelledError:
        abandoned.set()
        raise
    return cast(T, result)  # None only when abandoned, and then CancelledError was raised


def _registered(repo: _Repo) -> dict[Path, dict[str, str]]:
    """`git worktree list --porcelain` as path -> attributes (`HEAD`, `branch`, `locked`...)."""
    found: dict[Path, dict[str, str]] = {}
    for block in repo.git("worktree", "list", "--porcelain").split("\n\n"):
        attrs = dict((line.split(" ", 1) + [""])[:2] for line in block.splitlines() if line)
        if "worktree" in attrs:
            found[Path(attrs["worktree"])] = attrs
    return found


def _base_file(repo: _Repo, branch: str) -> Path:
    return repo.common / BASES_DIR / branch


def _outlast_branches(repo: _Repo) -> list[str]:
    """The branches of worktrees Outlast made and has not removed (their base records)."""
    try:
        return [p.name for p in (repo.common / BASES_DIR).iterdir() if p.is_file()]
    except FileNotFoundError:
        return []


def _read_base(repo: _Repo, branch: str) -> str | None:
    try:
        return _base_file(repo, branch).read_text().strip() or None
    except FileNotFoundError:
        return None


def _branch_tip(repo: _Repo, branch: str) -> str | None:
    try:
        return repo.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}")
    except GitFailed:
        return None


def _head_commit(repo: _Repo) -> str:
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


def _info(repo: _Repo, path: Path, branch: str, head: str, existed: bool) -> WorktreeInfo:
    return WorktreeInfo(
        repo_root=str(repo.top),
        worktree_path=str(path),
        worktree_branch=branch,
        head_commit=head,
        existed=existed,
    )


def _create(repo: _Repo, inp: CreateWorktreeInput, owner: str = "") -> WorktreeInfo:
    """Create (or find) the worktree; runs under the repository lock."""
    path, branch = _worktree_path(repo, inp.slug), worktree_branch(inp.slug)
    entry = _registered(repo).get(path)
    if inp.exclusive:
        if entry is not None or _branch_tip(repo, branch) is not None:
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
    if entry is not None and path.is_dir() and entry.get("locked") != _ADD_IN_PROGRESS:
        _link_dirs(repo.top, path, inp.symlink_dirs)  # a crash may have come before the links
        head = _read_base(repo, branch) or entry.get("HEAD", "")
        return _info(repo, path, branch, head, existed=True)
    if entry is not None:
        # Registered but its directory is gone, or an add was killed half-way: drop it.
        repo.git("worktree", "remove", "--force", "--force", str(path))
    elif path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise WorktreeRefused(f"{path} already exists and is not a worktree of {repo.top}")
    if _branch_tip(repo, branch) is not None:
        # The branch outlived its worktree (a crash between the steps): reuse it.
        _add(repo, path, str(path), branch)
        head = _read_base(repo, branch) or repo.git("rev-parse", f"refs/heads/{branch}")
    else:
        head = _head_commit(repo)
        atomic_write(_base_file(repo, branch), f"{head}\n".encode())
        _add(repo, path, "-b", branch, str(path), head)
    _link_dirs(repo.top, path, inp.symlink_dirs)
    return _info(repo, path, branch, head, existed=False)


def _add(repo: _Repo, path: Path, *args: str) -> None:
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
            if path in _registered(undo):
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
    deadline = _deadline()
    async with heartbeating():
        repo = await asyncio.to_thread(_prepare, inp, deadline)
    owner = inp.owner_workflow_id or (activity.info().workflow_id if activity.in_activity() else "")
    info = await _serialised(repo, lambda: _create(repo, inp, owner))
    if activity.in_activity():
        # Before the workflow hears of it: a run terminated from here on leaves a record the
        # reaper can act on.
        worktree_owners.remember(
            WorktreeOwner(workflow_id=owner, **info.model_dump(exclude={"existed"}))
        )
    return info


def _is_our_link(path: Path, top: Path, status_line: str) -> bool:
    """Whether a porcelain `??` line is one of the symlinks `_link_dirs` made."""
    name = status_line[3:].rstrip("/")
    link = path / name
    return "/" not in name and link.is_symlink() and link.resolve() == (top / name).resolve()


def _changes(repo: _Repo, path: Path, base: str) -> list[str]:
    """What makes the worktree differ from its base: new commits, edits, untracked files."""
    found = []
    if _git(path, "rev-parse", "HEAD", deadline=repo.deadline, reads=True) != base:
        since = f"{base}..HEAD"
        count = int(_git(path, "rev-list", "--count", since, deadline=repo.deadline, reads=True))
        found.append(f"{count} new commit{'s' * (count != 1)}" if count else "HEAD moved")
    return found + _uncommitted(repo, path)


def _uncommitted(repo: _Repo, path: Path) -> list[str]:
    """The worktree's modified and untracked files, counted (the links we made aside)."""
    found = []
    # Without optional locks: a status would otherwise rewrite the index and fail a commit
    # running meanwhile (activities/workspace.NO_OPTIONAL_LOCKS).
    args = ["status", "--porcelain", "--untracked-files=all"]
    lines = _git(path, *args, deadline=repo.deadline, reads=True).splitlines()
    untracked = [ln for ln in lines if ln.startswith("??") and not _is_our_link(path, repo.top, ln)]
    modified = [ln for ln in lines if ln and not ln.startswith("??")]
    for what, items in (("modified file", modified), ("untracked file", untracked)):
        if items:
            found.append(f"{len(items)} {what}{'s' * (len(items) != 1)}")
    return found


def _nested(registered: dict[Path, dict[str, str]], path: Path) -> list[str]:
    """Worktrees inside `path` (a sub-agent's, made from a session in a worktree): removing
    `path` with `--force` would delete them, work and all."""
    return sorted(str(p) for p in registered if p != path and p.is_relative_to(path))


def _cleanup(repo: _Repo, info: WorktreeInfo) -> WorktreeCleanup:
    """Remove the worktree and its branch if nothing changed; runs under the repository lock."""
    path, branch = Path(info.worktree_path), info.worktree_branch
    base = _read_base(repo, branch)
    registered = _registered(repo)
    entry = registered.get(path)
    if nested := _nested(registered, path):
        return WorktreeCleanup(kept=True, reason=f"worktree holds other worktrees: {nested[0]}")
    if entry is not None and "locked" in entry:
        return WorktreeCleanup(kept=True, reason=f"worktree is locked {entry['locked']}".strip())
    if entry is not None and path.is_dir():
        if base is None:
            return WorktreeCleanup(kept=True, reason="not created by Outlast (no recorded base)")
        changes = _changes(repo, path, base)
        if changes:
            return WorktreeCleanup(kept=True, reason="worktree has " + ", ".join(changes))
    if entry is not None:
        repo.git("worktree", "remove", "--force", str(path))
    tip = _branch_tip(repo, branch)
    if tip is not None:
        if tip != base:
            why = "no recorded base" if base is None else "new commits"
            return WorktreeCleanup(kept=True, reason=f"branch {branch} kept: {why}")
        repo.git("branch", "-D", branch)
    _base_file(repo, branch).unlink(missing_ok=True)
    return WorktreeCleanup(kept=False, reason="no changes; worktree and branch removed")


def _unsaved(repo: _Repo, path: Path | None, branch: str, base: str) -> list[str]:
    """What removing the worktree (`path`, None if it is gone) would lose: uncommitted files,
    and commits since its base that are on no other branch (merged ones are kept by the
    branch they were merged into)."""
    found = _uncommitted(repo, path) if path is not None else []
    heads = (["HEAD"] if path is not None else []) + (
        [f"refs/heads/{branch}"] if _branch_tip(repo, branch) is not None else []
    )
    if heads:
        # `--exclude` before `--branches` leaves this branch, and the other worktrees' own
        # branches (temporary: each goes with its worktree), out of "the other branches".
        temporary = {branch, *_outlast_branches(repo)}
        excludes = [f"--exclude={b}" for b in sorted(temporary)]
        args = ["rev-list", "--count", *heads, "--not", *excludes, "--branches", base]
        where = path if path is not None else repo.top
        count = int(_git(where, *args, deadline=repo.deadline, reads=True))
        if count:
            found.insert(0, f"{count} commit{'s' * (count != 1)} on no other branch")
    return found


def _remove(repo: _Repo, info: WorktreeInfo, discard: bool) -> WorktreeCleanup:
    """ExitWorktree's removal; runs under the repository lock."""
    path, branch = Path(info.worktree_path), info.worktree_branch
    base = _read_base(repo, branch)
    registered = _registered(repo)
    entry = registered.get(path)
    if nested := _nested(registered, path):
        why = f"it holds other worktrees ({', '.join(nested)}), which would go with it"
        return WorktreeCleanup(kept=True, refused=True, reason=why)
    if entry is not None and "locked" in entry:
        why = f"worktree is locked {entry['locked']}".strip()
        return WorktreeCleanup(kept=True, refused=True, reason=why)
    if base is None and (entry is not None or _branch_tip(repo, branch) is not None):
        why = "it was not created by Outlast (no recorded base)"
        return WorktreeCleanup(kept=True, refused=True, reason=why)
    if not discard and base is not None:
        present = path if entry is not None and path.is_dir() else None
        lost = _unsaved(repo, present, branch, base)
        if lost:
            why = "it has " + ", ".join(lost)
            return WorktreeCleanup(kept=True, refused=True, reason=why, unsaved=lost)
    if entry is not None:
        repo.git("worktree", "remove", "--force", str(path))
    if _branch_tip(repo, branch) is not None:
        repo.git("branch", "-D", branch)
    _base_file(repo, branch).unlink(missing_ok=True)
    return WorktreeCleanup(kept=False, reason="worktree and branch removed")


@activity.defn(name="workspace.cleanup_worktree")
async def cleanup_worktree(inp: CleanupWorktreeInput) -> WorktreeCleanup:
    """Remove an agent's worktree and branch if it changed nothing; otherwise keep both.
    ExitWorktree's actions (`inp.action`) keep it, or remove it if nothing would be lost, or
    whatever it holds.

    Idempotent: a worktree that is already gone reports `kept=False`.

    Raises:
        WorktreeRefused: `info.worktree_path` is not under the repository's worktree directory.
    """
    info = inp.info
    home, path = Path(info.repo_root) / WORKTREES_DIR, Path(info.worktree_path)
    # `is_relative_to` is lexical, so `..` parts must be refused separately.
    if ".." in path.parts or path == home or not path.is_relative_to(home):
        raise WorktreeRefused(f"{info.worktree_path} is not a worktree under {home}")
    if inp.action == "keep":
        worktree_owners.forget(info.worktree_path)  # kept on purpose: not the reaper's
        return WorktreeCleanup(kept=True, reason="kept, as asked")
    async with heartbeating():
        try:
            repo = await asyncio.to_thread(_locate, info.repo_root, _deadline())
        except WorktreeRefused:
            worktree_owners.forget(info.worktree_path)
            await run_blocking(_drop_sandbox_tmp_if_gone, path)
            reason = f"{info.repo_root} is no longer a git repository"
            return WorktreeCleanup(kept=False, reason=reason)
    if inp.action == "cleanup":
        outcome = await _serialised(repo, lambda: _cleanup(repo, info))
    else:
        discard = inp.action == "discard"
        outcome = await _serialised(repo, lambda: _remove(repo, info, discard))
        if outcome.refused:
            return outcome
    # Removed or kept, the owner has decided; the reaper has nothing left to do.
    worktree_owners.forget(info.worktree_path)
    await run_blocking(_drop_sandbox_tmp_if_gone, path)
    return outcome


def _drop_sandbox_tmp_if_gone(path: Path) -> None:
    """A removed worktree's sandbox /tmp goes with it; a kept one keeps its own. Never fails
    the cleanup, whose outcome is decided: what is left keeps its record, for the reaper."""
    try:
        if path.exists():
            return
        for spelling in {str(path), str(path.resolve())}:
            remove_sandbox_tmp(spelling)
    except OSError as e:
        log.warning("left the sandbox /tmp of %s to the reaper: %s", path, e)
