"""Worktree names (spec R51): the accepted forms and the exact refusal messages."""

from __future__ import annotations

import pytest

from agents.worktree_slug import (
    MAX_WORKTREE_SLUG_LENGTH,
    InvalidWorktreeSlug,
    agent_worktree_slug,
    validate_worktree_slug,
    worktree_branch,
)

DOTS = 'Invalid worktree name "{}": must not contain "." or ".." path segments'
SEGMENT = (
    'Invalid worktree name "{}": each "/"-separated segment must be non-empty and contain only '
    "letters, digits, dots, underscores, and dashes"
)


@pytest.mark.parametrize(
    "slug", ["agent-a1b2c3d4", "user/feature-x", "a.b", "A_b-9", "x" * MAX_WORKTREE_SLUG_LENGTH]
)
def test_accepts(slug: str) -> None:
    validate_worktree_slug(slug)


@pytest.mark.parametrize(
    ("slug", "template"),
    [
        ("../x", DOTS),
        ("a..b", DOTS),
        ("a/./b", DOTS),
        (".", DOTS),
        ("..", DOTS),
        ("x/..", DOTS),
        ("/abs", SEGMENT),
        ("/etc", SEGMENT),
        ("a//b", SEGMENT),
        ("x/", SEGMENT),
        ("", SEGMENT),
        ("a b", SEGMENT),
        ("a;b", SEGMENT),
        ("a\n", SEGMENT),
        ("é", SEGMENT),
    ],
)
def test_rejects_with_exact_message(slug: str, template: str) -> None:
    with pytest.raises(InvalidWorktreeSlug) as err:
        validate_worktree_slug(slug)
    assert str(err.value) == template.format(slug)


def test_length_is_checked_first() -> None:
    with pytest.raises(InvalidWorktreeSlug) as err:
        validate_worktree_slug("a" * 65)
    assert str(err.value) == "Invalid worktree name: must be 64 characters or fewer (got 65)"
    with pytest.raises(InvalidWorktreeSlug, match=r"\(got 70\)"):
        validate_worktree_slug("../" + "a" * 67)


def test_is_a_value_error() -> None:
    assert issubclass(InvalidWorktreeSlug, ValueError)


def test_agent_slug_and_branch() -> None:
    assert agent_worktree_slug("a1b2c3d4e5f6") == "agent-a1b2c3d4"
    assert worktree_branch("agent-a1b2c3d4") == "worktree-agent-a1b2c3d4"
    assert worktree_branch("user/feature-x") == "worktree-user+feature-x"
