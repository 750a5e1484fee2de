"""A follow in a log or a pipe (`outlast run` off a terminal) prints every turn's text: it
printed the text of the turn it happened to poll in, and a turn quicker than a poll (0.2 s)
was not printed at all (noticed by a user test, 2026-12-07). Turns that end the run before
the next poll are printed after it."""

from __future__ import annotations

from rich.console import Console

from outlast.progress import follow
from tests.support import agent_input, running_workers, scripted_model, start

QUICK = {"name": "Bash", "input": {"command": "true"}}
TURNS = 12


def step_script(turns: int) -> dict:
    """An agent whose turns each say `STEP-n done.`, all but the last with a quick Bash."""
    said = [{"text": f"STEP-{n} done.", "tool_use": QUICK} for n in range(1, turns)]
    return {"agents": [{"name": "main", "turns": [*said, {"text": f"STEP-{turns} done."}]}]}


async def test_a_follow_prints_the_text_of_every_turn(client, git_repo):
    script = step_script(TURNS)
    console = Console(record=True, width=200, force_terminal=False)
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await follow(handle, console)
    assert result is not None and result.turns == TURNS
    printed = [line for line in console.export_text().splitlines() if "STEP-" in line]
    steps = [line.split("STEP-")[1].split()[0] for line in printed if line.startswith("general")]
    # The last turn's is the answer, which `run` prints whole after the follow: a poll may
    # have seen it before the run ended, the poll after the result leaves it out.
    every = [str(n) for n in range(1, TURNS + 1)]
    assert steps in (every, every[:-1]), printed


async def test_turns_that_end_the_run_before_a_poll_are_printed_after_it(
    client, git_repo, monkeypatch
):
    """With polls far apart, the run ends before one sees its turns: the follow asks once
    more after the result (it printed none of them)."""
    from outlast import progress

    monkeypatch.setattr(progress, "POLL_S", 30.0)
    turns = 6
    script = step_script(turns)
    console = Console(record=True, width=200, force_terminal=False)
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await follow(handle, console)
    assert result is not None and result.turns == turns
    printed = [line for line in console.export_text().splitlines() if "STEP-" in line]
    assert printed == [f"general-purpose: STEP-{n} done." for n in range(1, turns)], printed


async def test_a_follow_of_an_ended_run_says_where_its_older_turns_are(client, git_repo):
    """`attach` to an ended agent printed its last turns and nothing of the ones before
    (a user test, 2026-12-07): the status keeps the last eight. And its answer twice."""
    script = step_script(TURNS)
    console = Console(record=True, width=200, force_terminal=False)
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
            await follow(handle, console)
    text = console.export_text()
    first = TURNS - 8 + 1  # the status's eight: the last turn's is the answer
    assert f"(turns 1-{first - 1}: `outlast transcript {handle.id}`)" in text, text
    steps = [line.split("STEP-")[1].split()[0] for line in text.splitlines() if "STEP-" in line]
    # Its answer once, by the result `run` and `attach` print (a turn's line printed it too).
    assert steps == [str(n) for n in range(first, TURNS)], text
