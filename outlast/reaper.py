"""The reaper: cleans up worktrees whose agent closed without cleaning up (reliability row 4),
the verifiers' workspace snapshots of verifications that closed without removing them, and
the writer sandboxes' /tmp directories of workspaces that no longer exist. A worker's periodic
reap also cancels the sub-agents a closed parent left running (`outlast.orphans`).

A terminated agent never runs its own cleanup, so its worktree would stay forever. Every worker
reaps its own host's records (`activities.worktree_owners`) at start and then periodically;
`outlast reap` does it on demand. A worktree is cleaned by the same rule an agent applies
itself: removed with its branch if nothing changed since its base, kept (and reported) if
anything did, so a terminated run's work is never thrown away. A snapshot is a disposable
copy (a verifier's work is in its report, not in the copy): it is always removed. So is a
writer's sandbox /tmp once its workspace is gone (`activities.sandbox_tmp`); no workflow owns
it, and nothing can use it again. A Bash command still running for a run that has closed is
killed (`activities.tools.bash_runs`): its worker died, and no retry will come for it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict
from temporalio.api.enums.v1 import WorkflowExecutionStatus
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities import worktree_owners
from activities.sandbox_tmp import (
    SandboxTmp,
    is_orphaned,
    recorded_sandbox_tmps,
    remove_orphaned,
)
from activities.snapshot import recorded_snapshots, remove_snapshot_at
from activities.tools import bash_runs
from activities.tools.process_groups import kill_group
from activities.worktree import CleanupWorktreeInput, WorktreeInfo, WorktreeRefused
from activities.worktree_cleanup import cleanup_forecast, cleanup_worktree
from activities.worktree_git import GitFailed, GitHung
from activities.worktree_owners import WorktreeOwner
from outlast.orphans import stop_orphans

log = logging.getLogger(__name__)

WORKSPACE_GONE = "WORKSPACE_GONE"
MIN_RETENTION_S = 24 * 3600.0
"""Temporal's shortest namespace retention. A closed workflow stays findable at least this
long, so an owner the server does not know whose record is younger has not started yet (a
parent makes its child's worktree first), not closed and gone."""
REAP_INTERVAL_ENV = "OUTLAST_REAP_INTERVAL_S"
DEFAULT_REAP_INTERVAL_S = 600.0


class Reaped(BaseModel):
    """What the reaper did with one worktree, snapshot or sandbox /tmp."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["worktree", "snapshot", "sandbox-tmp", "command"] = "worktree"
    """`worktree`, `snapshot`, `sandbox-tmp` or `command` (a Bash command's process group;
    `outlast reap --json` lists sub-agents too)."""
    worktree_path: str
    """The worktree's path, the snapshot's, the sandbox /tmp's, or `process group <n>`."""
    workflow_id: str
    """The owner; "" for a sandbox /tmp, which belongs to a workspace, not to a workflow."""
    owner_status: str
    """The owner's status name (TERMINATED, TIMED_OUT...), NOT_FOUND, or WORKSPACE_GONE for a
    sandbox /tmp whose workspace no longer exists."""
    removed: bool
    reason: str


async def owner_status(client: Client, workflow_id: str) -> str | None:
    """The status of the owner's latest run; None while it runs (it will clean up itself)."""
    return await run_status(client, workflow_id, None)


async def run_status(client: Client, workflow_id: str, run_id: str | None) -> str | None:
    """The status of that run (None: the latest); None while it runs."""
    try:
        desc = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
    except RPCError as e:
        if e.status == RPCStatusCode.NOT_FOUND:
            return "NOT_FOUND"  # past the namespace's retention: long closed
        raise
    status = desc.status
    if status is None or status == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING:
        return None
    return status.name


async def reap(client: Client, *, dry_run: bool = False) -> list[Reaped]:
    """Clean up every recorded worktree of this host whose owner has closed.

    Args:
        dry_run: Report what would be cleaned, change nothing.
    """
    # The commands first: one a closed run left could still be writing in its worktree,
    # which the cleanup below checks for changes and then removes.
    done = await _reap_commands(client, dry_run=dry_run)
    tmps = await asyncio.to_thread(recorded_sandbox_tmps)
    with_worktrees: set[str] = set()  # sandbox /tmps said with their worktree's item
    for owner in worktree_owners.recorded():
        status = await owner_status(client, owner.workflow_id)
        if status is None or (status == "NOT_FOUND" and _recent(owner)):
            continue
        tmp = _sandbox_tmp_of(Path(owner.worktree_path), tmps)
        said = await _reap_worktree(owner, status, tmp, dry_run)
        if said is None:
            continue
        item, tmp_goes = said
        # Said by whoever asked: `outlast reap` prints it, a worker's reaper logs it (both
        # did, so `outlast reap` said each kept worktree twice; a user test, 2026-12-05).
        done.append(item)
        if tmp is not None and tmp_goes:
            # The cleanup removes a worktree's sandbox /tmp with it: the dry run listed that
            # /tmp of a deleted worktree as the reaper's, the real run then said nothing of
            # it (a user test, 2026-12-05). Both say it here now, under its worktree.
            done.append(_with_worktree(tmp, owner, status, dry_run))
            with_worktrees.add(tmp.path)
    done += await _reap_snapshots(client, dry_run=dry_run)
    return done + await asyncio.to_thread(_reap_sandbox_tmps, dry_run, with_worktrees)


async def _reap_worktree(
    owner: WorktreeOwner, status: str, tmp: SandboxTmp | None, dry_run: bool
) -> tuple[Reaped, bool] | None:
    """What the cleanup did (or would do) with one closed owner's worktree, and whether its
    sandbox /tmp went (would go) with it; None for a record the cleanup refuses to touch."""
    info = WorktreeInfo(**owner.model_dump(exclude={"workflow_id"}))
    try:
        if dry_run:  # what the cleanup below would do, changing nothing
            would = await asyncio.to_thread(cleanup_forecast, info)
            verb = "would keep" if would.kept else "would remove"
            item = _reaped(owner, status, removed=False, reason=f"{verb}: {would.reason}")
            there = await asyncio.to_thread(Path(owner.worktree_path).exists)
            return item, would.removes_directory or not there
        cleaned = await cleanup_worktree(CleanupWorktreeInput(info=info))
        item = _reaped(owner, status, removed=not cleaned.kept, reason=cleaned.reason)
        return item, tmp is not None and not await asyncio.to_thread(Path(tmp.path).exists)
    except WorktreeRefused as e:  # a record pointing somewhere it should not: leave it
        log.warning("%s %s: %s", "would not reap" if dry_run else "not reaping",
                    owner.worktree_path, e)  # fmt: skip
        return None
    except (GitFailed, GitHung, subprocess.TimeoutExpired, OSError) as e:
        # This worktree's git failed or hung: its record stays for the next pass, and the
        # other worktrees are not held up by it.
        if dry_run:  # not the real run's outcome: the forecast itself could not be made
            reason = f"cannot tell, git failed while looking: {e}; a real run would try"
        else:
            reason = f"not cleaned up this time, tried again at the next reap: {e}"
        return _reaped(owner, status, removed=False, reason=reason), False


async def _reap_commands(client: Client, *, dry_run: bool) -> list[Reaped]:
    """Kill the Bash commands whose workflow run has closed: their worker died under them
    (a command runs in a session of its own, to outlive it for the retry), and the run was
    then terminated or timed out, so no retry and no kill on the host came. With the writer
    sandbox a command dies with its worker; unsandboxed (`OUTLAST_WRITER_SANDBOX=off`) it ran
    on for good (a user test, 2026-12-05)."""
    done = []
    for left in await asyncio.to_thread(bash_runs.left_running):
        if left.namespace not in (None, client.namespace):
            continue  # another namespace's run: this client cannot tell whether it closed
        status = await run_status(client, left.workflow_id, left.run_id)
        # Only a run the server shows closed: NOT_FOUND may be a client of another server
        # (the same namespace's name elsewhere), whose live command this would kill.
        if status is None or status == "NOT_FOUND":
            continue
        if not dry_run:
            if not await asyncio.to_thread(bash_runs.still_running, left):
                continue  # it ended meanwhile (and its pid may be another's by now)
            await kill_group(left.pgid)
            await asyncio.to_thread(bash_runs.remove_scratch, left.path)
            left.path.unlink(missing_ok=True)
        verb = "would kill (dry run)" if dry_run else "killed"
        done.append(
            Reaped(
                kind="command",
                worktree_path=f"process group {left.pgid}",
                workflow_id=left.workflow_id,
                owner_status=status,
                removed=not dry_run,
                reason=f"{verb}: a Bash command its closed run {left.run_id} left running",
            )
        )
    return done


def _sandbox_tmp_of(worktree: Path, tmps: list[SandboxTmp]) -> SandboxTmp | None:
    """The recorded sandbox /tmp of `worktree`, by either spelling the cleanup removes."""
    spellings = {str(worktree), str(worktree.resolve())}
    return next((t for t in tmps if t.workspace in spellings), None)


def _with_worktree(tmp: SandboxTmp, owner: WorktreeOwner, status: str, dry_run: bool) -> Reaped:
    what = f" with its worktree: the sandbox /tmp of {owner.worktree_path}"
    return _removal("sandbox-tmp", tmp.path, owner.workflow_id, status, dry_run, what)


def _removal(
    kind: Literal["snapshot", "sandbox-tmp"],
    path: str,
    workflow_id: str,
    status: str,
    dry_run: bool,
    what: str,
) -> Reaped:
    """An item the reaper always removes: "removed" or "would remove (dry run)", and `what`."""
    verb = "would remove (dry run)" if dry_run else "removed"
    return Reaped(
        kind=kind,
        worktree_path=path,
        workflow_id=workflow_id,
        owner_status=status,
        removed=not dry_run,
        reason=f"{verb}{what}",
    )


def _recent(owner: WorktreeOwner) -> bool:
    """The record is younger than any closed owner could have been gone (a worker restarted
    between a parent making its child's worktree and starting the child, whose reap then
    removed the worktree the child was about to start in)."""
    age = worktree_owners.record_age_s(owner.worktree_path)
    return age is not None and age < MIN_RETENTION_S


async def _reap_snapshots(client: Client, *, dry_run: bool) -> list[Reaped]:
    done = []
    for owner in recorded_snapshots():
        status = await owner_status(client, owner.workflow_id)
        if status is None:
            continue
        if not dry_run:
            await asyncio.to_thread(remove_snapshot_at, Path(owner.path))
        what = ": a verifier's snapshot its verification did not remove"
        done.append(_removal("snapshot", owner.path, owner.workflow_id, status, dry_run, what))
    return done


def _reap_sandbox_tmps(dry_run: bool, said: set[str]) -> list[Reaped]:
    """The orphaned sandbox /tmps, but those `said` with their worktree."""
    done = []
    for tmp in recorded_sandbox_tmps():
        if tmp.path in said or not is_orphaned(tmp):
            continue
        if dry_run:
            removed, reason = False, "would remove (dry run)"
        elif remove_orphaned(tmp):
            removed, reason = True, "removed"
        else:
            removed, reason = False, "could not remove all of it; the next reap tries again"
        done.append(
            Reaped(
                kind="sandbox-tmp",
                worktree_path=tmp.path,
                workflow_id="",
                owner_status=WORKSPACE_GONE,
                removed=removed,
                reason=f"{reason}: the sandbox /tmp of {tmp.workspace}, which no longer exists",
            )
        )
    return done


def _reaped(owner: WorktreeOwner, status: str, *, removed: bool, reason: str) -> Reaped:
    return Reaped(
        worktree_path=owner.worktree_path,
        workflow_id=owner.workflow_id,
        owner_status=status,
        removed=removed,
        reason=reason,
    )


def reap_interval() -> float:
    """Seconds between a worker's reaps, from the environment; 0 turns the reaper off."""
    raw = os.environ.get(REAP_INTERVAL_ENV, "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_REAP_INTERVAL_S
    except ValueError:
        raise ValueError(f"{REAP_INTERVAL_ENV}={raw!r}: give a number of seconds") from None
    if value < 0:
        raise ValueError(f"{REAP_INTERVAL_ENV}={raw!r}: must be 0 (off) or more")
    return value


async def reap_forever(client: Client, interval: float) -> None:
    """Reap now and then every `interval` seconds, for as long as the worker runs."""
    while interval > 0:
        try:
            # Orphans first: a cancelled sub-agent cleans up its own worktree.
            for orphan in await stop_orphans(client):
                log.warning("sub-agent %s: %s", orphan.workflow_id, orphan.reason)
        except Exception:  # as below; the worktrees are reaped all the same
            log.exception("orphaned sub-agents' reaper failed; trying again in %.0f s", interval)
        try:
            for item in await reap(client):
                # Work left behind, or a cleanup that failed: for the operator to see.
                level = logging.INFO if item.removed else logging.WARNING
                verb = "reaped" if item.removed else "kept"
                owner = f"{item.workflow_id} {item.owner_status}".strip()
                log.log(level, "%s %s (%s): %s", verb, item.worktree_path, owner, item.reason)
        except Exception:  # a server hiccup must not take the worker down
            log.exception("worktree reaper failed; trying again in %.0f s", interval)
        await asyncio.sleep(interval)
