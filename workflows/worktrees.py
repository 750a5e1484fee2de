"""Worktree isolation from the workflow's side (R51-R53): validate, create, clean up."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.worktree_slug import InvalidWorktreeSlug, validate_worktree_slug

with workflow.unsafe.imports_passed_through():
    from activities.errors import NON_RETRYABLE
    from activities.worktree import (
        CleanupAction,
        CleanupWorktreeInput,
        CreateWorktreeInput,
        WorktreeCleanup,
        WorktreeInfo,
    )
    from activities.worktree import create_worktree as create_worktree_activity
    from activities.worktree_cleanup import cleanup_worktree

from workflows.contracts import Workspace

WORKTREE_OPTIONS = {
    "start_to_close_timeout": timedelta(minutes=2),
    "heartbeat_timeout": timedelta(seconds=30),
    # Creation is idempotent by path, cleanup by state: retrying either is safe.
    "retry_policy": RetryPolicy(
        maximum_attempts=5, non_retryable_error_types=[*NON_RETRYABLE, "WorktreeRefused"]
    ),
}


def _cause(error: ActivityError) -> str:
    return error.cause.message if isinstance(error.cause, ApplicationError) else str(error.cause)


async def create_worktree(
    workspace: Workspace, slug: str, owner: str | None = None, exclusive: bool = False
) -> WorktreeInfo | str:
    """The worktree, or a message for the model; nothing is created for a bad slug.

    `owner`: the workflow that will clean it up (a child about to start), if not this one.
    `exclusive`: one of that name that is not this workflow's is refused (EnterWorktree).
    """
    try:
        validate_worktree_slug(slug)
    except InvalidWorktreeSlug as e:
        return str(e)
    try:
        return await workflow.execute_activity(
            create_worktree_activity,
            CreateWorktreeInput(
                repo_root=workspace.root, slug=slug, owner_workflow_id=owner, exclusive=exclusive
            ),
            task_queue=workspace.host_queue,
            summary=f"create worktree {slug}",
            **WORKTREE_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return f"Could not create the worktree: {_cause(e)}"


async def cleanup(
    info: WorktreeInfo, host_queue: str, action: CleanupAction = "cleanup"
) -> WorktreeCleanup | None:
    """Remove the worktree if the agent changed nothing (or as `action` says, for
    ExitWorktree); None if cleanup itself failed (the worktree is then simply kept: losing
    work is worse than leaving a directory)."""
    try:
        return await workflow.execute_activity(
            cleanup_worktree,
            CleanupWorktreeInput(info=info, action=action),
            task_queue=host_queue,
            summary=f"{action} worktree {info.worktree_path}",
            **WORKTREE_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise  # a kill while cleaning up is still a kill; the kill path cleans up again
        workflow.logger.warning("worktree cleanup failed, keeping it: %s", _cause(e))
        return None
