"""Where an ended agent's worktree session stood (`outlast/worktree_left.py`)."""

from __future__ import annotations

from agents.messages import Message, TextBlock, ToolResultBlock
from agents.worktree_tools import entered_text, kept_text
from outlast.worktree_left import left_worktree_note, session_worktree


def result(text: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id="t", content=text)])


def test_the_last_entry_without_a_later_exit_is_where_it_ended(tmp_path):
    entered = result(entered_text("/r/.claude/worktrees/a", "worktree-a", existed=False))
    left = result(kept_text("/r/.claude/worktrees/a", "worktree-a", "/r"))
    assert session_worktree([entered]) == ("/r/.claude/worktrees/a", "worktree-a")
    assert session_worktree([entered, left]) is None
    assert session_worktree([entered, left, entered]) == ("/r/.claude/worktrees/a", "worktree-a")
    assert left_worktree_note([entered, left], "/r") is None
    gone = left_worktree_note([entered], "/r")
    assert gone is not None and "it was removed, as nothing in it had changed" in gone
    there = tmp_path / "b"
    there.mkdir()
    note = left_worktree_note([result(entered_text(str(there), "worktree-b", True))], "/r")
    assert note is not None and "it is kept there, on branch worktree-b" in note
    assert "This run works in /r, not in the worktree; call EnterWorktree with name b" in note


def test_a_note_already_given_or_a_continued_run_s_counts_as_left():
    """The resume's own note (in the message after the person's words) and a continued
    run's note (in a system reminder) did not start the text: an agent resumed again was
    told its last run had ended in the worktree (a review, 2026-12-07)."""
    entered = result(entered_text("/r/.claude/worktrees/a", "worktree-a", existed=False))
    note = left_worktree_note([entered], "/r")
    assert note is not None
    resumed = Message(role="user", content=[TextBlock(text=f"go on\n\n{note}")])
    assert session_worktree([entered, resumed]) is None
    reminder = "<system-reminder>\nYour worktree session ended with your last answer: ..."
    assert session_worktree([entered, Message.user_text(reminder)]) is None


def test_a_checkout_on_another_host_is_not_looked_at():
    entered = result(entered_text("/r/.claude/worktrees/a", "worktree-a", existed=False))
    note = left_worktree_note([entered], "/r", here=False)
    assert note is not None and "kept there, on branch worktree-a, if it held changes" in note
