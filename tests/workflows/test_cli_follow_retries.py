"""The follows (`outlast run`, `attach`) off a terminal say what a pattern's members and an
agent's sub-agents are retrying, once per attempt (`outlast/retries.py`'s TreeRetries)."""

from __future__ import annotations

import uuid

from tests.support import agent_input, fast_config, running_workers, scripted_model, spawn, start
from tests.workflows.test_plan_mode import cli


async def test_a_pattern_follow_says_what_a_member_is_retrying(client, dev_server, git_repo):
    """`show` and an agent's live tree said what a sub-agent's model call was retrying; the
    follow of a pipeline, team, verified task or fork-join said nothing of its members'
    (a user test, 2026-12-05)."""
    from workflows.contracts import ForkJoinInput, Workspace

    script = {
        "agents": [
            {
                "name": "fork",
                # A fork's first request already holds the forking assistant message.
                "turns": [{"text": "unused"}, {"fail": [529, 529, 529], "text": "all fine"}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = ForkJoinInput(
                workspace=Workspace(root=str(git_repo), host_queue=queues.host_queue),
                directives=["check the parser"],
                context="Audit the repository.",
                config=fast_config(),
            )
            handle = await client.start_workflow(
                "ForkJoinWorkflow",
                inp,
                id=f"fj-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
            )
            code, out = await cli(dev_server.address, "attach", handle.id)
    flat = " ".join(out.split())
    assert code == 0 and "fork-1: model call retrying (attempt " in flat, out
    assert "529" in flat or "verloaded" in flat, out
    assert flat.count("(attempt 2)") <= 1, out  # once per attempt, however often it is asked


async def test_an_agent_follow_in_a_log_says_what_a_sub_agent_is_retrying(
    client, dev_server, git_repo
):
    """Off a terminal (a log, a pipe) the follow said only the agent's own retries."""
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [{"fail": [529, 529, 529], "text": "helped"}],
            },
            {
                "name": "main",
                "turns": [{"tool_use": spawn("helper", "help", False)}, {"text": "done"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            code, out = await cli(dev_server.address, "attach", handle.id)
    flat = " ".join(out.split())
    assert code == 0 and "helper: model call retrying (attempt " in flat, out
