"""A resumed agent's read-file stamps (R27, R66): what its previous run read and its model
saw, it may edit without reading again."""

from __future__ import annotations

from tests.support import agent_input, running_workers, scripted_model, spawn, start
from tests.workflows.test_agent_control import resuming_parent


async def test_a_resumed_agent_may_edit_what_it_read_before_it_stopped(client, git_repo):
    """A resumed run keeps the file stamps of the run it continues: an Edit of a file that
    run read goes through without reading it again; a file it never read still needs a Read."""
    app = "{{cwd}}/src/app.py"
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [
                    {"tool_use": {"name": "Read", "input": {"file_path": app}}},
                    {"text": "read both"},
                    {
                        "tool_use": [
                            {
                                "name": "Edit",
                                "input": {
                                    "file_path": app,
                                    "old_string": "hello",
                                    "new_string": "hello again",
                                },
                            },
                            {
                                "name": "Edit",
                                "input": {
                                    "file_path": "{{cwd}}/README.md",
                                    "old_string": "sample",
                                    "new_string": "example",
                                },
                            },
                        ]
                    },
                    {"text": "edited"},
                ],
            },
            resuming_parent(spawn("helper", "read src/app.py", False), "now change it"),
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
    assert (git_repo / "src/app.py").read_text() == "def greet():\n    return 'hello again'\n"
    assert (git_repo / "README.md").read_text() == "# sample\n"  # never read by the helper
    last = [r for r in model.log if r["agent"] == "helper"][-1]["body"]["messages"][-1]
    results = [b for b in last["content"] if b["type"] == "tool_result"]
    assert len(results) == 2
    edited, refused = sorted(results, key=lambda b: bool(b.get("is_error")))
    assert not edited.get("is_error"), edited
    assert refused.get("is_error") and "has not been read" in str(refused["content"]), refused


async def test_a_read_the_turn_limit_cut_off_is_kept_and_carries_to_its_resume(client, git_repo):
    """An agent that spends its turns right after a Read ends before the result is sent to
    the model. The end keeps the result in its conversation (patched last-results-kept), so
    its resume sees the file and may edit it (R27). Before, the resume dropped the call
    (R66) and the file counted as unread: the Edit was refused."""
    agents = git_repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(
        "---\nname: reader\ndescription: reads\nmaxTurns: 1\n---\nYou read files.\n"
    )
    app = "{{cwd}}/src/app.py"
    edit = {"file_path": app, "old_string": "hello", "new_string": "hello again"}
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [
                    {"text": "Reading.", "tool_use": {"name": "Read", "input": {"file_path": app}}},
                    {"tool_use": {"name": "Edit", "input": edit}},
                ],
            },
            resuming_parent(
                spawn("helper", "read app.py", False, subagent_type="reader"), "now change it"
            ),
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
            helper = client.get_workflow_handle(f"{handle.id}/helper")
            names = [
                e.activity_task_scheduled_event_attributes.activity_type.name
                async for e in helper.fetch_history_events()
            ]
    assert "tool.edit" in names
    assert (git_repo / "src/app.py").read_text() == "def greet():\n    return 'hello again'\n"
