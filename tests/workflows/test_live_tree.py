"""`outlast run` / `attach` on a terminal: the live tree follows a parent and its children."""

from __future__ import annotations

from rich.console import Console

from outlast.progress import follow
from tests.support import agent_input, running_workers, scripted_model, spawn, start

SCRIPT = {
    "agents": [
        {
            "name": "scout",
            "match": {"agent_name": "scout"},
            "turns": [
                {"text": "looking", "tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}},
                {"text": "found it"},
            ],
        },
        {
            "name": "main",
            "turns": [
                {"text": "sending a scout", "tool_use": spawn("scout", "look around", False)},
                {"text": "all done"},
            ],
        },
    ]
}


async def test_live_tree_draws_children_as_they_run_and_end(client, git_repo):
    console = Console(force_terminal=True, record=True, width=160, color_system=None)
    with scripted_model(SCRIPT):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("scout", git_repo, queues), queues)
            result = await follow(handle, console, client)
    assert result is not None and result.status == "completed"
    text = console.export_text()
    assert "scout (general-purpose, sync) turn 1: running Bash" in text, text
    assert "✓ scout (general-purpose, sync) completed" in text, text
