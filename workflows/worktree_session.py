"""EnterWorktree and ExitWorktree in an agent's workflow (T18).

The worktree the session is in is `LoopState.worktree`, so it lasts through worker restarts
and continue-as-new; entering moves `LoopState.cwd` into it (where Bash runs and relative
paths start) and sub-agents launched from then on work in it. The worktree is made and
removed by the same activities as an `isolation: worktree` agent's, on the workspace's host,
so it is in the reaper's records from its creation until its owner decides its fate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import workflow

from agents.messages import ToolResultBlock
from agents.worktree_slug import checkout_of
from agents.worktree_tools import (
    NOT_IN_WORKTREE_TEXT,
    SCOPED_TEXT,
    EnterWorktreeInput,
    ExitWorktreeInput,
    already_in_text,
    could_not_remove_text,
    entered_text,
    kept_text,
    pinned_text,
    random_worktree_name,
    refused_removal_text,
    removed_text,
)
from workflows.contracts import Workspace
from workflows.turns import ValidCall, error_result
from workflows.worktrees import cleanup, create_worktree

with workflow.unsafe.imports_passed_through():
    from activities.worktree import WorktreeInfo

READ_ONLY_TEXT = "You are a read-only agent: a worktree is a new branch and directory; not for you."
EXIT_FAILED_TEXT = (
    "ExitWorktree failed on the workspace's host; nothing changed and you are still in the "
    "worktree. Try again later."
)


class EnteredWorktree(BaseModel):
    """The worktree a session entered, and the directory it came from."""

    model_config = ConfigDict(frozen=True)

    info: WorktreeInfo
    return_cwd: str


def session_workspace(home: Workspace, entered: EnteredWorktree | None) -> Workspace:
    """Where the agent's sub-agents work: its worktree once it has entered one."""
    if entered is None:
        return home
    return Workspace(root=entered.info.worktree_path, host_queue=home.host_queue)


class WorktreeSession:
    """One agent's EnterWorktree and ExitWorktree calls.

    `state` returns the agent's loop state (`worktree`, `cwd`), `on_change` is called after
    either moved the session, and `refusal` says why this agent may not enter one at all
    (None: it may).
    """

    def __init__(
        self,
        state: Callable,
        home: Workspace,
        on_change: Callable[[], None],
        refusal: str | None = None,
        working_inside: Callable[[str], list[str]] = lambda path: [],
    ) -> None:
        self._state = state
        self._home = home
        self._on_change = on_change
        self._refusal = refusal
        self._working_inside = working_inside
        """The sub-agents still running in a directory (whose workspace is inside it)."""

    async def enter(self, call: ValidCall) -> ToolResultBlock:
        inp: EnterWorktreeInput = call.input  # type: ignore[assignment]
        state = self._state()
        if state.worktree is not None:
            return error_result(call.block, already_in_text(state.worktree.info.worktree_path))
        if self._refusal is not None:
            return error_result(call.block, self._refusal)
        name = inp.name or random_worktree_name(workflow.uuid4().hex)
        # Never another session's (or an earlier one's kept) worktree: only what this session
        # made is its to remove.
        made = await create_worktree(self._home, name, exclusive=True)
        if isinstance(made, str):
            return error_result(call.block, made)
        state.worktree = EnteredWorktree(info=made, return_cwd=state.cwd)
        state.cwd = made.worktree_path
        self._on_change()
        text = entered_text(made.worktree_path, made.worktree_branch, made.existed)
        return ToolResultBlock(tool_use_id=call.block.id, content=text)

    async def exit(self, call: ValidCall) -> ToolResultBlock:
        inp: ExitWorktreeInput = call.input  # type: ignore[assignment]
        state = self._state()
        entered: EnteredWorktree | None = state.worktree
        if entered is None:
            return ToolResultBlock(tool_use_id=call.block.id, content=NOT_IN_WORKTREE_TEXT)
        info = entered.info
        action = "keep" if inp.action == "keep" else "discard" if inp.discard_changes else "remove"
        if action != "keep" and (busy := self._working_inside(info.worktree_path)):
            why = f"sub-agents still work in it: {', '.join(busy)}; stop them or wait for them"
            return error_result(call.block, could_not_remove_text(info.worktree_path, why))
        outcome = await cleanup(info, self._home.host_queue, action)
        if outcome is None:
            # The activity failed for good: the session stays where it is, as it was.
            return error_result(call.block, EXIT_FAILED_TEXT)
        if action != "keep" and outcome.kept and not outcome.refused:
            # A host worker of a release before ExitWorktree ran its end-of-agent cleanup.
            why = outcome.reason or "the host kept it"
            return error_result(call.block, could_not_remove_text(info.worktree_path, why))
        if outcome.refused:
            if outcome.unsaved:
                text = refused_removal_text(info.worktree_path, ", ".join(outcome.unsaved))
            else:
                text = could_not_remove_text(info.worktree_path, outcome.reason)
            return error_result(call.block, text)
        self.leave()
        if action == "keep":
            text = kept_text(info.worktree_path, info.worktree_branch, entered.return_cwd)
        else:
            text = removed_text(info.worktree_path, entered.return_cwd, action == "discard")
        return ToolResultBlock(tool_use_id=call.block.id, content=text)

    def leave(self) -> None:
        """The session back where it was before EnterWorktree."""
        state = self._state()
        if state.worktree is not None:
            state.cwd = state.worktree.return_cwd
            state.worktree = None
            self._on_change()


def worktree_refusal(pinned: str | None, scoped: bool, read_only: bool) -> str | None:
    """Why an agent may not enter a worktree at all, or None. `pinned`: the worktree it was
    started in (its own, or its parent session's)."""
    if pinned is not None:
        return pinned_text(pinned)
    if read_only:
        return READ_ONLY_TEXT
    if scoped:
        return SCOPED_TEXT
    return None


def worktree_of(root: str) -> str | None:
    """`root` if it lies in a `.claude/worktrees/` directory: a worktree already."""
    return root if checkout_of(root) is not None else None


def within(root: str, directory: str) -> bool:
    return PurePosixPath(root).is_relative_to(PurePosixPath(directory))


def left_note(entered: EnteredWorktree, kept: bool) -> str:
    """For a next generation (late mail): its last worktree session ended with its answer."""
    info = entered.info
    fate = f"kept at {info.worktree_path} (branch {info.worktree_branch})" if kept else "removed"
    return (
        f"Your worktree session ended with your last answer: the worktree was {fate}. You are "
        f"back in {entered.return_cwd}; call EnterWorktree again to work in a worktree."
    )


def worktree_session(
    inp: Any,
    sandbox: str,
    state: Callable,
    on_change: Callable[[], None],
    registry: Any,
) -> WorktreeSession:
    """An agent's EnterWorktree / ExitWorktree, with who it is deciding what it may do: an
    agent started in a worktree (its own, or a session's it was launched from), a read-only
    one or a coordinator's worker with a write scope may not enter one; a worktree its
    running sub-agents work in is not removed from under them."""
    pinned = inp.worktree.worktree_path if inp.worktree else worktree_of(inp.workspace.root)
    refusal = worktree_refusal(
        pinned=pinned, scoped=inp.write_scope is not None, read_only=sandbox == "read_only"
    )
    return WorktreeSession(
        state,
        inp.workspace,
        on_change,
        refusal,
        lambda path: [
            t.name or t.agent_id for t in registry.running() if within(t.spawn.workspace.root, path)
        ],
    )
