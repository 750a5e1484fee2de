"""Removing an agent's worktree (spec R52, ExitWorktree T18): at its end only if it changed
nothing, on request only if nothing in it would be lost (or whatever it holds). Runs under
the repository's worktree lock (`worktree_git.serialised`), and is idempotent: a worktree
already gone is reported removed.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from temporalio import activity

from activities import worktree_owners
from activities.heartbeats import heartbeating, run_blocking
from activities.sandbox_tmp import remove_sandbox_tmp
from activities.worktree import (
    ADD_IN_PROGRESS,
    WORKTREES_DIR,
    CleanupWorktreeInput,
    WorktreeCleanup,
    WorktreeInfo,
    WorktreeRefused,
    locate,
)
from activities.worktree_git import (
    Repo,
    attempt_deadline,
    base_file,
    branch_tip,
    git,
    outlast_branches,
    read_base,
    registered,
    serialised,
)

log = logging.getLogger(__name__)


def _is_our_link(path: Path, top: Path, status_line: str) -> bool:
    """Whether a porcelain `??` line is one of the symlinks `_link_dirs` made."""
    name = status_line[3:].rstrip("/")
    link = path / name
    return "/" not in name and link.is_symlink() and link.resolve() == (top / name).resolve()


def _changes(repo: Repo, path: Path, base: str) -> list[str]:
    """What makes the worktree differ from its base: new commits, edits, untracked files."""
    found = []
    if git(path, "rev-parse", "HEAD", deadline=repo.deadline, reads=True) != base:
        since = f"{base}..HEAD"
        count = int(git(path, "rev-list", "--count", since, deadline=repo.deadline, reads=True))
        found.append(f"{count} new commit{'s' * (count != 1)}" if count else "HEAD moved")
    return found + _uncommitted(repo, path)


def _uncommitted(repo: Repo, path: Path) -> list[str]:
    """The worktree's modified and untracked files, counted (the links we made aside)."""
    found = []
    # Without optional locks: a status would otherwise rewrite the index and fail a commit
    # running meanwhile (activities/git_run.NO_OPTIONAL_LOCKS).
    args = ["status", "--porcelain", "--untracked-files=all"]
    lines = git(path, *args, deadline=repo.deadline, reads=True).splitlines()
    untracked = [ln for ln in lines if ln.startswith("??") and not _is_our_link(path, repo.top, ln)]
    modified = [ln for ln in lines if ln and not ln.startswith("??")]
    for what, items in (("modified file", modified), ("untracked file", untracked)):
        if items:
            found.append(f"{len(items)} {what}{'s' * (len(items) != 1)}")
    return found


def _nested(listed: dict[Path, dict[str, str]], path: Path) -> list[str]:
    """Worktrees inside `path` (a sub-agent's, made from a session in a worktree): removing
    `path` with `--force` would delete them, work and all."""
    return sorted(str(p) for p in listed if p != path and p.is_relative_to(path))


def _cleanup(repo: Repo, info: WorktreeInfo, dry_run: bool = False) -> WorktreeCleanup:
    """Remove the worktree and its branch if nothing changed; runs under the repository lock.
    With `dry_run`, change nothing and say what a cleanup would do (`outlast reap --dry-run`
    said "would clean up" of a worktree the real run then kept)."""
    path, branch = Path(info.worktree_path), info.worktree_branch
    base = read_base(repo, branch)
    listed = registered(repo)
    entry = listed.get(path)
    removes = entry is not None  # the directory goes, unless a check below keeps it
    if nested := _nested(listed, path):
        return WorktreeCleanup(kept=True, reason=f"worktree holds other worktrees: {nested[0]}")
    if entry is not None and entry.get("locked") == ADD_IN_PROGRESS and base is not None:
        # Git's own lock of an add that never finished (its process was killed): nobody
        # worked in it. Taken for a person's lock, it was kept, and its record forgotten.
        if not dry_run:
            repo.git("worktree", "remove", "--force", "--force", str(path))
        entry = None
        removes = True
    if entry is not None and "locked" in entry:
        return WorktreeCleanup(kept=True, reason=f"worktree is locked {entry['locked']}".strip())
    if entry is not None and path.is_dir():
        if base is None:
            return WorktreeCleanup(kept=True, reason="not created by Outlast (no recorded base)")
        changes = _changes(repo, path, base)
        if changes:
            return WorktreeCleanup(kept=True, reason="worktree has " + ", ".join(changes))
    if entry is not None and not dry_run:
        repo.git("worktree", "remove", "--force", str(path))
    tip = branch_tip(repo, branch)
    if tip is not None:
        if tip != base:
            why = "no recorded base" if base is None else "new commits"
            gone = "; its directory would be removed" if dry_run and removes else ""
            reason = f"branch {branch} kept: {why}{gone}"
            return WorktreeCleanup(kept=True, reason=reason, removes_directory=dry_run and removes)
        if not dry_run:
            repo.git("branch", "-D", branch)
    if dry_run:
        reason = "no changes; worktree and branch would go"
        return WorktreeCleanup(kept=False, reason=reason, removes_directory=removes)
    base_file(repo, branch).unlink(missing_ok=True)
    return WorktreeCleanup(kept=False, reason="no changes; worktree and branch removed")


def _check_place(info: WorktreeInfo) -> None:
    """Raises WorktreeRefused: `info.worktree_path` is not under the repository's worktree
    directory."""
    home, path = Path(info.repo_root) / WORKTREES_DIR, Path(info.worktree_path)
    # `is_relative_to` is lexical, so `..` parts must be refused separately.
    if ".." in path.parts or path == home or not path.is_relative_to(home):
        raise WorktreeRefused(f"{info.worktree_path} is not a worktree under {home}")


def cleanup_forecast(info: WorktreeInfo) -> WorktreeCleanup:
    """What the end-of-agent cleanup would do with this worktree, changing nothing (for
    `outlast reap --dry-run`; blocking: run it in a thread). Without the repository's lock:
    a forecast, which a cleanup running meanwhile may change.

    Raises:
        WorktreeRefused: as `cleanup_worktree` does, for a path it would not touch.
    """
    _check_place(info)
    try:
        repo = locate(info.repo_root, attempt_deadline())
    except WorktreeRefused:
        return WorktreeCleanup(kept=False, reason=f"{info.repo_root} is no longer a git repository")
    return _cleanup(repo, info, dry_run=True)


def _unsaved(repo: Repo, path: Path | None, branch: str, base: str) -> list[str]:
    """What removing the worktree (`path`, None if it is gone) would lose: uncommitted files,
    and commits since its base that are on no other branch (merged ones are kept by the
    branch they were merged into)."""
    found = _uncommitted(repo, path) if path is not None else []
    heads = (["HEAD"] if path is not None else []) + (
        [f"refs/heads/{branch}"] if branch_tip(repo, branch) is not None else []
    )
    if heads:
        # `--exclude` before `--branches` leaves this branch, and the other worktrees' own
        # branches (temporary: each goes with its worktree), out of "the other branches".
        temporary = {branch, *outlast_branches(repo)}
        excludes = [f"--exclude={b}" for b in sorted(temporary)]
        args = ["rev-list", "--count", *heads, "--not", *excludes, "--branches", base]
        where = path if path is not None else repo.top
        count = int(git(where, *args, deadline=repo.deadline, reads=True))
        if count:
            found.insert(0, f"{count} commit{'s' * (count != 1)} on no other branch")
    return found


def _remove(repo: Repo, info: WorktreeInfo, discard: bool) -> WorktreeCleanup:
    """ExitWorktree's removal; runs under the repository lock."""
    path, branch = Path(info.worktree_path), info.worktree_branch
    base = read_base(repo, branch)
    listed = registered(repo)
    entry = listed.get(path)
    if nested := _nested(listed, path):
        why = f"it holds other worktrees ({', '.join(nested)}), which would go with it"
        return WorktreeCleanup(kept=True, refused=True, reason=why)
    if entry is not None and "locked" in entry:
        why = f"worktree is locked {entry['locked']}".strip()
        return WorktreeCleanup(kept=True, refused=True, reason=why)
    if base is None and (entry is not None or branch_tip(repo, branch) is not None):
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
    if branch_tip(repo, branch) is not None:
        repo.git("branch", "-D", branch)
    base_file(repo, branch).unlink(missing_ok=True)
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
    _check_place(info)
    path = Path(info.worktree_path)
    if inp.action == "keep":
        worktree_owners.forget(info.worktree_path)  # kept on purpose: not the reaper's
        return WorktreeCleanup(kept=True, reason="kept, as asked")
    async with heartbeating():
        try:
            repo = await asyncio.to_thread(locate, info.repo_root, attempt_deadline())
        except WorktreeRefused:
            worktree_owners.forget(info.worktree_path)
            await run_blocking(_drop_sandbox_tmp_if_gone, path)
            reason = f"{info.repo_root} is no longer a git repository"
            return WorktreeCleanup(kept=False, reason=reason)
    if inp.action == "cleanup":
        outcome = await serialised(repo, lambda: _cleanup(repo, info))
    else:
        discard = inp.action == "discard"
        outcome = await serialised(repo, lambda: _remove(repo, info, discard))
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
