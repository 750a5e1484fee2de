"""Worktree names (spec R51): a security boundary, checked before any side effect.

A slug becomes a directory under `.claude/worktrees/` and part of a branch name, so it must
never reach outside that directory. Workflow code checks it before scheduling the create
activity, and the activity checks it again. Pure and stdlib-only: safe in the workflow sandbox.
"""

from __future__ import annotations

import re

MAX_WORKTREE_SLUG_LENGTH = 64
VALID_WORKTREE_SLUG_SEGMENT = re.compile(r"[a-zA-Z0-9._-]+")
WORKTREE_BRANCH_PREFIX = "worktree-"


class InvalidWorktreeSlug(ValueError):
    """A worktree name that could escape `.claude/worktrees/` or is not a plain path."""


def validate_worktree_slug(slug: str) -> None:
    """Check a worktree name; return quietly if it is safe to use as a path below the root.

    Nested names (`user/feature`) are allowed. Stricter than Claude Code in one respect: `..`
    is refused anywhere in the name (`a..b` too), not only as a whole segment.

    Args:
        slug: The name as the model or the user gave it.

    Raises:
        InvalidWorktreeSlug: The name is too long, has a `.`/`..` part, an empty segment
            (leading, trailing or doubled `/`, or the empty string) or a character outside
            letters, digits, `.`, `_` and `-`.
    """
    if len(slug) > MAX_WORKTREE_SLUG_LENGTH:
        raise InvalidWorktreeSlug(
            f"Invalid worktree name: must be {MAX_WORKTREE_SLUG_LENGTH} characters or fewer "
            f"(got {len(slug)})"
        )
    for segment in slug.split("/"):
        if segment in (".", "..") or ".." in segment:
            raise InvalidWorktreeSlug(
                f'Invalid worktree name "{slug}": must not contain "." or ".." path segments'
            )
        # fullmatch, not `^...$` with match: `$` also matches before a trailing newline.
        if not VALID_WORKTREE_SLUG_SEGMENT.fullmatch(segment):
            raise InvalidWorktreeSlug(
                f'Invalid worktree name "{slug}": each "/"-separated segment must be non-empty '
                "and contain only letters, digits, dots, underscores, and dashes"
            )


def agent_worktree_slug(agent_id: str) -> str:
    """The worktree name of an agent started with `isolation: worktree`."""
    return f"agent-{agent_id[:8]}"


def worktree_branch(slug: str) -> str:
    """The branch a worktree is created on; `/` is flattened so nested names stay one ref level."""
    return WORKTREE_BRANCH_PREFIX + slug.replace("/", "+")


def checkout_of(path: str) -> str | None:
    """The checkout whose `.claude/worktrees/` `path` lies in (the nearest, for a worktree
    made from inside another), or None: `path` is in no worktree."""
    parts = path.rstrip("/").split("/")
    for i in range(len(parts) - 3, 0, -1):  # a name below `worktrees`, not itself
        if parts[i : i + 2] == [".claude", "worktrees"]:
            return "/".join(parts[:i]) or "/"
    return None
