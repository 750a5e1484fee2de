"""A standing team's history over many messages: events per message, and whether it stays
bounded (the team continues as new, patched `team-continues`).

A lead and two teammates; a person mails the teammates in turn (`message_member`), and each
answers with one model turn and goes idle again. Before `team-continues` a team never
continued as new: ~10 events a message took it to Temporal's limit (51,200 events, where the
server terminates it) in about 5,000 messages. Events are counted over every run of the
team's chain; a run's own count is what the limit applies to.

    python bench/team_history.py [--messages 300] [--continue-at 1000]

Last line: `team_messages=<n> team_runs=<r> max_run_events=<m> events_per_message=<x>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.config import AgentSettings, OutlastConfig  # noqa: E402
from bench.harness import (  # noqa: E402
    client_for,
    dev_server,
    make_repo,
    model_env,
    scripted_model_process,
    workers,
)
from workflows.contracts import Workspace  # noqa: E402
from workflows.pattern_contracts import (  # noqa: E402
    TeamInput,
    TeamMail,
    TeammateSpec,
    TeamResult,
    TeamView,
)

NAMES = ("lead", "b", "c")
SCRIPT = {
    "agents": [
        {
            "name": f"{name}-idle",
            "match": {"agent_name": name},
            "turns": [{"text": f"{name} read it"}],
            "after_last": "repeat_last",
        }
        for name in NAMES
    ]
}


async def wait_idle(handle, counts: dict[str, int] | None = None) -> TeamView:
    """Every member idle (and, given `counts`, each having received that many)."""
    while True:
        try:
            view = await handle.query("team", result_type=TeamView)
            states = {m.name: (m.state, m.received) for m in view.members}
            if all(s == "idle" for s, _ in states.values()) and all(
                states[n][1] >= k for n, k in (counts or {}).items()
            ):
                return view
        except Exception:  # noqa: BLE001 - the run is handing on, or not taken up yet
            pass
        await asyncio.sleep(0.05)


async def main(messages: int, continue_at: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"a.txt": "a\n"})
        with (
            dev_server() as server,
            scripted_model_process(SCRIPT) as url,
            model_env(url, Path(tmp) / "store"),
        ):
            client = await client_for(server)
            async with workers(client) as (task_queue, host_queue):
                # Each member takes a turn per message: past `hard_max_turns` (1,000 by
                # default, counted over a member's life) it would end out of turns.
                agents = AgentSettings(continue_as_new_events=continue_at, hard_max_turns=10**6)
                config = OutlastConfig(agents=agents)
                inp = TeamInput(
                    team_name="long",
                    workspace=Workspace(root=str(repo), host_queue=host_queue),
                    lead=TeammateSpec(name="lead", prompt="Wait for mail."),
                    teammates=[TeammateSpec(name=n, prompt="Answer mail.") for n in NAMES[1:]],
                    end_when_quiet=False,
                    config=config,
                )
                wf_id = f"bench-team-{uuid.uuid4().hex[:8]}"
                handle = await client.start_workflow(
                    "TeamWorkflow", inp, id=wf_id, task_queue=task_queue, result_type=TeamResult
                )
                await wait_idle(handle)
                counts = {n: 0 for n in NAMES[1:]}
                started = time.monotonic()
                for i in range(messages):
                    to = NAMES[1 + i % 2]
                    mail = TeamMail(to=to, text=f"message {i}")
                    await handle.execute_update("message_member", mail, result_type=str)
                    counts[to] += 1
                    await wait_idle(handle, counts)
                wall = time.monotonic() - started
                await handle.signal("shutdown", {"reason": "bench done"})
                await handle.result()
                runs = [r async for r in client.list_workflows(f'WorkflowId = "{wf_id}"')]
                sizes = []
                for run in sorted(runs, key=lambda r: r.start_time):
                    run_handle = client.get_workflow_handle(wf_id, run_id=run.run_id)
                    sizes.append(len([e async for e in run_handle.fetch_history_events()]))
    total = sum(sizes)
    print(f"runs' events: {sizes}; {wall:.1f} s for {messages} messages")
    print(
        f"team_messages={messages} team_runs={len(sizes)} max_run_events={max(sizes)} "
        f"events_per_message={total / messages:.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--continue-at", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.continue_at))
