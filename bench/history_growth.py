"""History bytes added per turn, as a conversation grows: Outlast versus the peers' way.

One agent; each turn the scripted model asks for one Read of a ~2 KB file, so each turn adds
~2 KB of tool output to the conversation. Bytes per turn are the summed sizes of the history
events between one `llm.call_model` scheduling and the next (averaged over the 10 turns
ending at turn N; a continue-as-new chain is followed run by run). The comparison runs the
same turns with the whole conversation passed as the model activity's input
(bench/naive_agent.py), for as many turns as it can stand.

    python bench/history_growth.py [--turns 500] [--naive-turns 100]

Last line: `history_bytes_per_turn_at_500=<n> growth_ratio_500_vs_10=<x>
overhead_bytes_per_turn=<m>`, where the overhead is what a turn adds beyond its own new tool
output (the Read's result as it is encoded in a JSON payload).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporalio.client import Client  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.worker import Worker  # noqa: E402

from activities.tools.base import ToolContext  # noqa: E402
from activities.tools.read import ReadInput, ReadRequest, read_sync  # noqa: E402
from agents.config import AgentSettings, ModelSettings, OutlastConfig  # noqa: E402
from bench.harness import (  # noqa: E402
    add_model_mode,
    client_for,
    dev_server,
    make_repo,
    model_call_at,
    model_env,
    model_mode,
    scripted_model_process,
    workers,
)
from bench.naive_agent import NaiveAgent, naive_model, naive_read  # noqa: E402
from workflows.contracts import AgentInput, AgentResult, Workspace  # noqa: E402

CHUNK = "".join(f"line {i:04d} of the file the agent keeps reading\n" for i in range(40))
READ_TURN = {
    "text": "Reading the chunk again.",
    "tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/chunk.txt"}},
}


def script(turns: int) -> dict:
    """`turns` Reads, then a text answer that ends the run, as the peers' workload ends: the
    run's end (its last call and the agent's result) is not in the window of turn `turns`."""
    return {"agents": [{"name": "reader", "after_last": "end", "turns": [READ_TURN] * turns}]}


MODEL_ACTIVITIES = frozenset({"llm.call_model", "bench.naive_model"})


async def run_chain_events(client: Client, workflow_id: str) -> list:
    """Every event of every run of `workflow_id`, oldest run first."""
    runs = [w async for w in client.list_workflows(f'WorkflowId = "{workflow_id}"')]
    events = []
    for run in sorted(runs, key=lambda r: r.start_time):
        handle = client.get_workflow_handle(workflow_id, run_id=run.run_id)
        events += [e async for e in handle.fetch_history_events()]
    return events


def bytes_per_turn(events: list) -> list[int]:
    """Index k: bytes of the events of turn k+1 (from its model call to the next one)."""
    turns: list[int] = []
    for event in events:
        if model_call_at(event, MODEL_ACTIVITIES) is not None:
            turns.append(0)
        if turns:
            turns[-1] += event.ByteSize()
    return turns


def tool_output_bytes(repo: Path) -> int:
    """The new tool output of one turn: the Read's text, JSON-encoded as in a payload."""
    ctx = ToolContext(workspace_root=str(repo), cwd=str(repo))
    out = read_sync(ReadRequest(ctx=ctx, input=ReadInput(file_path="chunk.txt")))
    return len(json.dumps(out.content))


def at(per_turn: list[int], n: int) -> float:
    window = per_turn[max(0, n - 10) : n]
    return sum(window) / len(window)


async def outlast(
    client: Client, repo: Path, turns: int, model: ModelSettings
) -> tuple[list[int], int]:
    async with workers(client) as (tq, hq):
        inp = AgentInput(
            prompt="Read chunk.txt, again and again.",
            workspace=Workspace(root=str(repo), host_queue=hq),
            config=OutlastConfig(model=model, agents=AgentSettings(hard_max_turns=turns + 1)),
            max_turns=turns + 1,
        )
        wid = f"growth-{uuid.uuid4().hex[:8]}"
        handle = await client.start_workflow(
            "AgentWorkflow", inp, id=wid, task_queue=tq, result_type=AgentResult
        )
        result = await handle.result()
        assert result.status == "completed" and result.turns == turns + 1, result
        runs = len([w async for w in client.list_workflows(f'WorkflowId = "{wid}"')])
        return bytes_per_turn(await run_chain_events(client, wid)), runs


async def naive(address: str, repo: Path, turns: int) -> list[int]:
    # As the peers run: plain pydantic payloads, no claim-check, so history shows the cost.
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    tq = f"naive-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client, task_queue=tq, workflows=[NaiveAgent], activities=[naive_model, naive_read]
    ):
        wid = f"naive-{uuid.uuid4().hex[:8]}"
        await client.execute_workflow(
            NaiveAgent.run, args=[str(repo), turns], id=wid, task_queue=tq
        )
        return bytes_per_turn(await run_chain_events(client, wid))


async def main(turns: int, naive_turns: int, model: ModelSettings) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"chunk.txt": CHUNK})
        with (
            dev_server() as server,
            scripted_model_process(script(turns)) as url,
            model_env(url, Path(tmp) / "store"),
        ):
            client = await client_for(server)
            ours, runs = await outlast(client, repo, turns, model)
            theirs = await naive(server.address, repo, naive_turns)
        output = tool_output_bytes(repo)
    print(f"tool output per turn: {len(CHUNK)} bytes; Outlast run chain: {runs} run(s)")
    print(f"outlast  the end (last model call, the run's close): {ours[-1]} bytes, once")
    for n in sorted({10, 100, turns}):
        if n <= len(ours):
            print(f"outlast  turn {n:4d}: {at(ours, n):9.0f} bytes of history per turn")
    for n in sorted({10, 100, naive_turns}):
        if n <= len(theirs):
            print(f"naive    turn {n:4d}: {at(theirs, n):9.0f} bytes of history per turn")
    total = sum(theirs)
    print(
        f"naive total after {len(theirs)} turns: {total / 1e6:.1f} MB "
        f"(Outlast after {len(ours)} turns: {sum(ours) / 1e6:.1f} MB)"
    )
    if len(theirs) >= 10:
        print(
            f"naive growth_ratio_{len(theirs)}_vs_10={at(theirs, len(theirs)) / at(theirs, 10):.1f}"
        )
    print(f"the Read's output as it lands in a payload: {output} bytes")
    print(
        f"history_bytes_per_turn_at_{turns}={at(ours, turns):.0f} "
        f"growth_ratio_{turns}_vs_10={at(ours, turns) / at(ours, 10):.2f} "
        f"overhead_bytes_per_turn={at(ours, turns) - output:.0f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--naive-turns", type=int, default=100)
    add_model_mode(parser)
    args = parser.parse_args()
    if args.naive_turns > args.turns:
        # One script serves both runs: past `--turns` it answers the text that ends them.
        parser.error("--naive-turns can be at most --turns")
    model = ModelSettings(max_attempts=1, local_activity=model_mode(args))
    asyncio.run(main(args.turns, args.naive_turns, model))
