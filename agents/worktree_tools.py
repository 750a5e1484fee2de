"""`EnterWorktree` and `ExitWorktree` (spec T18): an agent moves its session into a git
worktree of its own, on a new branch from HEAD, and back out of it.

Carried out by the workflow (workflows/worktree_session.py): the worktree it is in is
workflow state, so it lasts through worker restarts and continue-as-new, and the agent's end
cleans it up like an `isolation: worktree` agent's (removed if unchanged, kept otherwise).
Only the contract, the texts and the pure decisions live here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.worktree_slug import MAX_WORKTREE_SLUG_LENGTH

ENTER_WORKTREE_TOOL = "EnterWorktree"
EXIT_WORKTREE_TOOL = "ExitWorktree"
WORKTREE_TOOLS = frozenset({ENTER_WORKTREE_TOOL, EXIT_WORKTREE_TOOL})


class EnterWorktreeInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = Field(
        default=None,
        max_length=MAX_WORKTREE_SLUG_LENGTH,
        description="A name for the new worktree (letters, digits, `.`, `_`, `-`; `/` "
        "separates parts). If not given, a random name is generated.",
    )


class ExitWorktreeInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Literal["keep", "remove"] = Field(
        description='"keep" leaves the worktree directory and its branch on disk; "remove" '
        "deletes both."
    )
    discard_changes: bool = Field(
        default=False,
        description='Only with action "remove": remove the worktree even though it has '
        "uncommitted files or commits that are on no other branch. Set it only after the user "
        "has confirmed that those changes may go.",
    )


def random_worktree_name(hex_digits: str) -> str:
    """A name for a worktree the model did not name (from the workflow's deterministic
    random source, so a replay picks the same one)."""
    return f"session-{hex_digits[:8]}"


def entered_text(path: str, branch: str, existed: bool) -> str:
    how = "Switched to the existing worktree" if existed else "Created a worktree"
    return (
        f"{how} at {path} on branch {branch}. The session now works in the worktree: "
        "relative paths and Bash commands start there, and file paths must point into it "
        "for your changes to land on that branch. Use ExitWorktree to leave it (keep or "
        "remove); when you end while still in it, it is removed if you changed nothing and "
        "kept otherwise."
    )


def already_in_text(path: str) -> str:
    return (
        f"You are already working in the worktree {path}; call ExitWorktree before entering "
        "another."
    )


def pinned_text(path: str) -> str:
    return (
        f"You were started in a worktree of your own ({path}); EnterWorktree would nest "
        "another inside it. Work where you are."
    )


SCOPED_TEXT = (
    "Your writes are limited to the files you were given, in this checkout; a worktree would "
    "put your changes outside them. Work where you are."
)
NOT_IN_WORKTREE_TEXT = (
    "No worktree session is active: EnterWorktree was not called in this session (or its "
    "worktree was left already). Nothing was changed."
)


def kept_text(path: str, branch: str, back_to: str) -> str:
    return (
        f"Left the worktree; it is kept at {path} on branch {branch}. The session is back in "
        f"{back_to}."
    )


def removed_text(path: str, back_to: str, discarded: bool) -> str:
    what = (
        "Removed the worktree and its branch, discarding their changes"
        if discarded
        else ("Removed the worktree and its branch")
    )
    return f"{what} ({path}). The session is back in {back_to}."


def refused_removal_text(path: str, changes: str) -> str:
    return (
        f"The worktree {path} was not removed: it has {changes}. Confirm with the user that "
        'these may be lost, then call ExitWorktree again with action "remove" and '
        'discard_changes: true; or use action "keep" to leave it on disk. You are still in '
        "the worktree."
    )


def could_not_remove_text(path: str, reason: str) -> str:
    return (
        f"The worktree {path} could not be removed ({reason}). You are still in the worktree; "
        'use action "keep" to leave it as it is.'
    )


ENTER_WORKTREE_DESCRIPTION = """\
Use this tool ONLY when the user explicitly asks to work in a worktree (for example "start a \
worktree", "work in a worktree", "use a worktree"), or when the project's instructions \
(CLAUDE.md) tell you to. It creates an isolated git worktree and switches this session into it.

## When not to use it
- The user asks to create or switch a branch: use git commands instead.
- The user asks to fix a bug or build a feature: use the normal git workflow, unless a \
worktree is asked for.

## Requirements
- The working directory must be in a git repository with at least one commit.
- You must not already be in a worktree session: call ExitWorktree first.

## Behaviour
- Creates a new git worktree in `.claude/worktrees/<name>` of the repository, on a new \
branch `worktree-<name>` from the current HEAD.
- Switches the session's working directory to the new worktree: Bash commands and relative \
paths start there. Sub-agents you launch afterwards work in it too.
- Use ExitWorktree to leave it (keep or remove). If you end while still in it, it is removed \
when nothing in it changed, and kept (and reported) otherwise.

## Parameters
- `name` (optional): a name for the worktree. If not given, a random one is generated."""

EXIT_WORKTREE_DESCRIPTION = """\
Exit a worktree session created by EnterWorktree and return the session to the original \
working directory.

## Scope
This tool ONLY acts on the worktree EnterWorktree created in this session. It does not \
touch worktrees made with `git worktree add`, nor the directory you started in. Called \
outside an EnterWorktree session, it does nothing and says so.

## When to use it
- The user asks to exit or leave the worktree, or to go back.
- Do NOT call it proactively: only when the user asks.

## Parameters
- `action` (required): `"keep"` or `"remove"`.
  - `"keep"`: leave the worktree directory and its branch on disk, for the user to come back \
to, or when there are changes to preserve.
  - `"remove"`: delete the worktree directory and its branch, for a clean exit when the work \
is done (merged) or abandoned.
- `discard_changes` (optional, default false): only with `"remove"`. If the worktree has \
uncommitted files, or commits that are on no other branch, the tool REFUSES to remove it \
and lists them, unless this is true. Confirm with the user before calling again with \
`discard_changes: true`.

## Behaviour
Restores the session's working directory to where it was before EnterWorktree. Once \
exited, EnterWorktree can be called again for a fresh worktree."""
