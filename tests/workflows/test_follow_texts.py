"""A follow in a log or a pipe (`outlast run` off a terminal) prints every turn's text: it
printed the text of the turn it happened to poll in, and a turn quicker than a poll (0.3 s)
was not printed at all (noticed by a user test, 2026-12-07)."""

from __future__ import annotations

from rich.console import Console

from outlast.progress import follow
from tests.support import agent_input, running_workers, scripted_model, start

QUICK = {"name": "Bash", "input": {"command": "true"}}
TURNS = 12


async def test_a_follow_prints_the_text_of_every_turn(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    *({"text": f"STEP-{n} done.", "tool_use": QUICK} for n in range(1, TURNS)),
                    {"text": f"STEP-{TURNS} done."},
                ],
            }
        ]
    }
    console = Console(record=True, width=200, force_terminal=False)
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await follow(handle, console)
    assert result is not None and result.turns == TURNS
    printed = [line for line in console.export_text().splitlines() if "STEP-" in line]
    steps = [line.split("STEP-")[1].split()[0] for line in printed if line.startswith("general")]
    assert steps == [str(n) for n in range(1, TURNS + 1)], printed
