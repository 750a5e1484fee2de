"""EnterWorktree and ExitWorktree (T18): the session moves into a worktree of its own and back,
across continue-as-new, with its sub-agents; what is left at its end is cleaned up or kept."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from pathlib import Path

from temporalio.client import WorkflowFailureError

from agents.config import AgentSettings
from agents.worktree_tools import NOT_IN_WORKTREE_TEXT
from outlast.inspect import agent_tree
from outlast.tree_text import tree_lines
from tests.support import (
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from tests.workflows.test_todos import status_when
from tests.workflows.test_visibility import current_details


def branches(repo: Path) -> set[str]:
    out = subprocess.run(
        ["git", "branch", "--format=%(refname:short)"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def remove(discard: bool = False) -> dict:
    return {"name": "ExitWorktree", "input": {"action": "remove", "discard_changes": discard}}


SESSION = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": "touch from-helper.txt"}}},
                {"text": "left a file where I was started"},
            ],
        },
        {
            "name": "main",
            "turns": [
                {"tool_use": {"name": "EnterWorktree", "input": {"name": "feat"}}},
                {"tool_use": {"name": "Bash", "input": {"command": "pwd && echo hi > note.txt"}}},
                {"tool_use": spawn("helper", "leave a file", False)},
                {"delay_ms": 3000, "tool_use": remove()},
                {"tool_use": remove(discard=True)},
                {"tool_use": {"name": "Bash", "input": {"command": "pwd"}}},
                {"text": "Back where I started."},
            ],
        },
    ]
}


async def test_a_session_works_in_its_worktree_and_leaves_it(client, git_repo):
    # Two turns a run: the worktree is carried by continue-as-new, twice over.
    config = fast_config(agents=AgentSettings(turns_per_run=2))
    worktree = git_repo / ".claude" / "worktrees" / "feat"
    with scripted_model(SESSION):
        async with running_workers(client) as queues:
            inp = agent_input("work in a worktree", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            # Held in the model call of its fourth turn, in the worktree, in a later run.
            held = await status_when(handle, lambda s: s.turn >= 3 and s.state == "calling_model")
            assert held.worktree is not None and held.worktree.worktree_path == str(worktree)
            details = await current_details(client, handle.id)
            assert f"in worktree `{worktree}` (branch `worktree-feat`)" in details
            result = await asyncio.wait_for(handle.result(), timeout=90)
            final = await handle.query("status")
            runs = [r async for r in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert len(runs) >= 3, runs
    assert result.status == "completed", result.error
    entered, pwd, helper, refused, removed, back = tool_results(result)
    assert entered.content.startswith(f"Created a worktree at {worktree} on branch worktree-feat")
    assert pwd.content.strip().startswith(str(worktree)), pwd.content
    assert not helper.is_error, helper.content
    # The helper, launched from inside, worked there too: its file is the second one.
    assert refused.is_error and "2 untracked files" in refused.content, refused.content
    assert "discard_changes: true" in refused.content
    assert not removed.is_error and "discarding their changes" in removed.content
    assert back.content.strip().startswith(str(git_repo)) and ".claude" not in back.content
    assert not worktree.exists() and "worktree-feat" not in branches(git_repo)
    assert not (git_repo / "from-helper.txt").exists() and not (git_repo / "note.txt").exists()
    assert final["worktree"] is None
    assert result.worktree_path is None


# In the writer's sandbox (bubblewrap where it runs): the worktree's git metadata is the main
# checkout's, so a commit there works as it does in the checkout.
COMMIT = (
    "echo x > made.txt && git add made.txt && "
    "git -c user.name=t -c user.email=t@t commit -qm 'made it' && git log --oneline -1"
)


async def test_what_a_session_leaves_in_a_worktree_is_kept_at_its_end(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "ExitWorktree", "input": {"action": "keep"}}},
                    {"tool_use": {"name": "EnterWorktree", "input": {}}},
                    {"tool_use": {"name": "EnterWorktree", "input": {"name": "second"}}},
                    {"tool_use": {"name": "Bash", "input": {"command": "cd /"}}},
                    {"tool_use": {"name": "Bash", "input": {"command": COMMIT}}},
                    {"text": "Made a file in the worktree."},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), timeout=60)
            tree = await agent_tree(client, handle.id)
    assert result.status == "completed", result.error
    # `outlast show` says where the work is (it named no worktree; a user test).
    kept = f"worktree kept: {result.worktree_path} (branch {result.worktree_branch})"
    assert kept in tree_lines(tree)[0], tree_lines(tree)
    noop, entered, again, _, made = tool_results(result)
    assert noop.content == NOT_IN_WORKTREE_TEXT and not noop.is_error
    assert not entered.is_error and ".claude/worktrees/session-" in entered.content
    assert again.is_error and "already working in the worktree" in again.content
    # `cd /` did not take it out of the worktree: the commit is made there.
    assert not made.is_error and "made it" in made.content, made.content
    # Ended inside it with a change: kept, and the result says where.
    assert result.worktree_path is not None and "/.claude/worktrees/session-" in (
        result.worktree_path
    )
    assert (Path(result.worktree_path) / "made.txt").read_text() == "x\n"
    assert result.worktree_branch in branches(git_repo)
    assert not (git_repo / "made.txt").exists()
    assert not (git_repo / ".claude" / "worktrees" / "second").exists()


async def test_a_kept_worktree_is_not_taken_again_and_an_unchanged_one_goes(client, git_repo):
    def enter(name: str) -> dict:
        return {"tool_use": {"name": "EnterWorktree", "input": {"name": name}}}

    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    enter("idle"),
                    enter("../escape"),
                    {"tool_use": {"name": "ExitWorktree", "input": {"action": "keep"}}},
                    enter("idle"),
                    enter("../escape"),
                    enter("fresh"),
                    {"text": "Nothing to do after all."},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed", result.error
    entered, in_one, kept, taken, bad_name, fresh = tool_results(result)
    assert not entered.is_error
    assert in_one.is_error and "already working in the worktree" in in_one.content
    assert not kept.is_error and "kept at" in kept.content
    # Kept on purpose, so no longer this session's: not entered (nor removed) again.
    assert taken.is_error and "already exists" in taken.content, taken.content
    assert bad_name.is_error and "Invalid worktree name" in bad_name.content
    assert not fresh.is_error
    assert (git_repo / ".claude" / "worktrees" / "idle").is_dir()
    assert "worktree-idle" in branches(git_repo)
    # Ended inside "fresh", unchanged: removed with its branch; nothing to report.
    assert result.worktree_path is None
    assert not (git_repo / ".claude" / "worktrees" / "fresh").exists()
    assert "worktree-fresh" not in branches(git_repo)


async def test_show_names_the_worktree_a_killed_agent_kept(client, git_repo):
    """Killed in its worktree session with a change there: the worktree is kept, and no
    result names it; `show` said nothing of it, nor did anything else but `git worktree
    list` (a user test, 2026-12-07). Its memo names it (patched worktree-in-memo)."""
    hold = {"name": "Bash", "input": {"command": "echo work > w.txt && sleep 60"}}
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "EnterWorktree", "input": {"name": "kept"}}},
                    {"tool_use": hold},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await status_when(handle, lambda s: s.current_tools == ["Bash"])
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 60)
            tree = await agent_tree(client, handle.id)
    path = git_repo / ".claude" / "worktrees" / "kept"
    assert (path / "w.txt").read_text() == "work\n"
    assert f"worktree kept: {path} (branch worktree-kept)" in tree_lines(tree)[0], tree_lines(tree)
