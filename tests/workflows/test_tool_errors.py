"""Mistakes in tool calls reach the model as is_error results and the loop goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.activities.test_tool_bash import snapshot
from tests.support import agent_input, running_workers, scripted_model, start, tool_results


async def test_bad_calls_are_errors_the_model_sees(client, git_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (git_repo / "etc-link").symlink_to("/etc")
    (git_repo / "out-link").symlink_to(outside)
    (git_repo / "dup.txt").write_text("alpha\nalpha\n")
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Frobnicate", "input": {}},
                            {"name": "Read", "input": {"limit": "many"}},
                            {"name": "Read", "input": {"file_path": "../../etc/passwd"}},
                            {"name": "Read", "input": {"file_path": "{{cwd}}/etc-link/passwd"}},
                            {
                                "name": "Write",
                                "input": {"file_path": "{{cwd}}/out-link/evil.txt", "content": "x"},
                            },
                            {"name": "Read", "input": {"file_path": "{{cwd}}/dup.txt"}},
                            {
                                "name": "Edit",
                                "input": {
                                    "file_path": "{{cwd}}/dup.txt",
                                    "old_string": "alpha",
                                    "new_string": "beta",
                                },
                            },
                            {"name": "Read", "input": {"file_path": "{{cwd}}/missing.py"}},
                        ]
                    },
                    {"text": "I saw the errors."},
                ],
            }
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("try things", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "I saw the errors."
    results = tool_results(result)
    assert len(results) == 8
    expect_error = [True, True, True, True, True, False, True, True]
    assert [r.is_error for r in results] == expect_error
    texts = [r.content for r in results]
    assert "No such tool available: Frobnicate" in texts[0]
    assert "file_path" in texts[1] and "limit" in texts[1]
    assert "outside the workspace" in texts[2] and "outside the workspace" in texts[3]
    assert "outside the workspace" in texts[4]
    assert "Found 2 matches" in texts[6]
    assert "does not exist" in texts[7]
    assert list(outside.iterdir()) == []
    assert (git_repo / "dup.txt").read_text() == "alpha\nalpha\n"
    assert model.log[1]["outcome"] == "completed"  # the API accepted every tool_result


async def test_explore_agent_cannot_write_through_bash(client, git_repo):
    script = {
        "agents": [
            {
                "name": "explore",
                "match": {"agent_type": "Explore"},
                "turns": [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": "echo x > f && echo wrote"},
                        }
                    },
                    {"text": "The sandbox refused the write."},
                ],
            }
        ]
    }
    (git_repo / "CLAUDE.md").write_text("House rules MARKER-4410")
    before = sorted(p.name for p in Path(git_repo).iterdir())
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("look around", git_repo, queues, agent_type="Explore")
            handle = await start(client, inp, queues)
            result = await handle.result()
    bash = tool_results(result)[0]
    assert bash.is_error and "Read-only file system" in bash.content
    assert sorted(p.name for p in Path(git_repo).iterdir()) == before
    assert "MARKER-4410" not in str(model.log[0]["body"]["system"])  # R15: no CLAUDE.md
    assert "Current branch" not in str(model.log[0]["body"]["system"])
    offered = model.log[0]["tools"]
    assert "Bash" in offered and not {"Edit", "Write", "Agent"} & set(offered)


WRITE_ATTEMPTS = [
    "echo x > README.md",
    "sed -i s/a/b/ README.md",
    "echo x | tee new.txt",
    "python3 -c \"open('new.txt', 'w').write('x')\"",
    "printf 'echo pwned' > .git/hooks/pre-commit",
]


@pytest.mark.parametrize("agent_type", ["Explore", "Plan"])
async def test_read_only_built_ins_change_no_byte_end_to_end(client, git_repo, agent_type):
    """Reliability row 15 through the whole loop: every write attempt of a read-only built-in
    agent's Bash fails, Write and Edit are not even offered, and no file's hash changes."""
    script = {
        "agents": [
            {
                "name": "reader",
                "match": {"agent_type": agent_type},
                "turns": [
                    {
                        "tool_use": [
                            {"name": "Bash", "input": {"command": command}}
                            for command in WRITE_ATTEMPTS
                        ]
                    },
                    {"tool_use": {"name": "Write", "input": {"file_path": "x", "content": "x"}}},
                    {"text": "Nothing could be written."},
                ],
            }
        ]
    }
    before = snapshot(git_repo)
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("look around", git_repo, queues, agent_type=agent_type)
            result = await (await start(client, inp, queues)).result()
    *bashes, write = tool_results(result)
    assert len(bashes) == len(WRITE_ATTEMPTS)
    for command, out in zip(WRITE_ATTEMPTS, bashes, strict=True):
        assert out.is_error and "Read-only file system" in out.content, (command, out.content)
    assert write.is_error and "No such tool available: Write" in write.content
    assert not {"Edit", "Write"} & set(model.log[0]["tools"])
    assert snapshot(git_repo) == before
