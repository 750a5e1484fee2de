"""The fork message and the fallback recursion guard (R46, R48-R50)."""

from agents.builtin.fork import (
    FORK_PLACEHOLDER_RESULT,
    directive_text,
    fork_message,
    is_in_fork_child,
)
from agents.messages import Message, TextBlock, ToolResultBlock


def test_placeholder_is_the_spaced_em_dash_form():
    assert FORK_PLACEHOLDER_RESULT == "Fork started \u2014 processing in background"


def test_fork_message_has_one_placeholder_per_tool_use_then_the_directive():
    message = fork_message(["t1", "t2", "t3"], "fix the parser")
    *results, directive = message.content
    assert [r.tool_use_id for r in results] == ["t1", "t2", "t3"]
    assert all(
        isinstance(r, ToolResultBlock) and r.content == FORK_PLACEHOLDER_RESULT for r in results
    )
    assert isinstance(directive, TextBlock)
    assert directive.text.startswith("<fork-boilerplate>")
    assert directive.text.endswith("Fork directive: fix the parser")
    siblings = fork_message(["t1", "t2", "t3"], "write the docs")
    assert siblings.content[:3] == message.content[:3]  # only the directive differs


def test_boilerplate_rules():
    text = directive_text("x")
    for rule in (
        "do NOT spawn sub-agents",
        'Begin it with "Scope:"',
        "under 500 words",
        "Files changed:",
        "commit",
    ):
        assert rule in text


def test_worktree_note_names_both_directories():
    text = directive_text("x", worktree=("/repo", "/repo/.claude/worktrees/agent-a1b2c3d4"))
    assert "parent working in /repo" in text
    assert "worktree at /repo/.claude/worktrees/agent-a1b2c3d4" in text


def test_fallback_guard_scans_for_the_boilerplate():
    assert is_in_fork_child([Message.user_text("task"), fork_message(["t"], "d")])
    assert not is_in_fork_child([Message.user_text("mentions fork-boilerplate without a tag")])
