"""EnterWorktree / ExitWorktree (T18): their contracts and the decisions made before any git."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.permissions import plan_mode_denial
from agents.worktree_slug import validate_worktree_slug
from agents.worktree_tools import (
    EnterWorktreeInput,
    ExitWorktreeInput,
    random_worktree_name,
)
from workflows.contracts import Workspace
from workflows.loop_tools import MODE_TOOLS
from workflows.tool_pool import BASE_TOOLS, WORKFLOW_TOOL_INPUTS
from workflows.worktree_session import (
    READ_ONLY_TEXT,
    EnteredWorktree,
    left_note,
    session_workspace,
    within,
    worktree_of,
    worktree_refusal,
)

INFO = {
    "repo_root": "/r",
    "worktree_path": "/r/.claude/worktrees/w",
    "worktree_branch": "worktree-w",
    "head_commit": "abc",
}


def test_inputs_are_checked():
    assert EnterWorktreeInput().name is None
    assert EnterWorktreeInput(name="feat").name == "feat"
    with pytest.raises(ValidationError):
        EnterWorktreeInput(name="x" * 65)
    with pytest.raises(ValidationError):
        EnterWorktreeInput(path="/elsewhere")  # type: ignore[call-arg]
    assert ExitWorktreeInput(action="keep").discard_changes is False
    with pytest.raises(ValidationError):
        ExitWorktreeInput(action="delete")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ExitWorktreeInput()  # type: ignore[call-arg]


def test_a_generated_name_is_a_valid_slug():
    name = random_worktree_name("0123456789abcdef")
    assert name == "session-01234567"
    validate_worktree_slug(name)


def test_both_are_offered_and_each_runs_alone():
    assert {"EnterWorktree", "ExitWorktree", "Skill", "WebFetch"} <= set(BASE_TOOLS)
    assert {"EnterWorktree", "ExitWorktree"} <= set(WORKFLOW_TOOL_INPUTS)
    assert {"EnterWorktree", "ExitWorktree"} <= MODE_TOOLS


def test_plan_mode_refuses_entering_and_removing_but_not_keeping():
    plan = "/r/.claude/plans/p.md"
    assert "Plan mode is active" in plan_mode_denial(
        "EnterWorktree", EnterWorktreeInput(), plan, "/r"
    )
    remove = ExitWorktreeInput(action="remove")
    assert "Plan mode is active" in plan_mode_denial("ExitWorktree", remove, plan, "/r")
    assert plan_mode_denial("ExitWorktree", ExitWorktreeInput(action="keep"), plan, "/r") is None


def test_who_may_not_enter_one():
    assert worktree_refusal(None, False, False) is None
    assert "nest" in (worktree_refusal("/r/.claude/worktrees/agent-1", False, False) or "")
    assert "limited to the files" in (worktree_refusal(None, True, False) or "")
    assert worktree_refusal(None, False, True) == READ_ONLY_TEXT
    # A plan-mode helper's write scope is empty: it is read-only first of all.
    assert worktree_refusal(None, True, True) == READ_ONLY_TEXT


def test_a_workspace_in_a_worktree_is_known_by_its_path():
    assert worktree_of("/r/.claude/worktrees/feat") == "/r/.claude/worktrees/feat"
    assert worktree_of("/r/.claude/worktrees/a/b") == "/r/.claude/worktrees/a/b"
    assert worktree_of("/r") is None and worktree_of("/r/.claude/worktrees") is None
    assert within("/r/.claude/worktrees/w/sub", "/r/.claude/worktrees/w")
    assert not within("/r/.claude/worktrees/w2", "/r/.claude/worktrees/w")


def test_a_next_generation_is_told_where_it_is():
    entered = EnteredWorktree.model_validate({"info": INFO, "return_cwd": "/r"})
    assert "kept at /r/.claude/worktrees/w (branch worktree-w)" in left_note(entered, True)
    assert "was removed. You are back in /r" in left_note(entered, False)


def test_sub_agents_work_where_the_session_is():
    home = Workspace(root="/r", host_queue="h")
    assert session_workspace(home, None) == home
    entered = EnteredWorktree.model_validate({"info": INFO, "return_cwd": "/r/src"})
    assert session_workspace(home, entered) == Workspace(root=INFO["worktree_path"], host_queue="h")
