"""Fork-join fan-out: 16 forks in parallel versus 1, with 1 s of scripted model latency.

`ForkJoinWorkflow` on a local dev server; every fork makes one model call that the scripted
model (own process) answers after `--latency-ms`. Wall time is the client's execute time of
the whole fork-join (render, forks, join). Rounds alternate 1 and 16; medians in one run.

    python bench/fork_fanout.py [--rounds 3] [--latency-ms 1000]

Last line: `fanout16_vs_1=<x>` (goal: at most 1.5).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.config import ModelSettings, OutlastConfig  # noqa: E402
from bench.harness import (  # noqa: E402
    client_for,
    dev_server,
    make_repo,
    model_env,
    scripted_model_process,
    workers,
)
from workflows.contracts import ForkJoinInput, ForkJoinResult, Workspace  # noqa: E402


def script(latency_ms: int) -> dict:
    return {
        "latency_ms": latency_ms,
        "agents": [
            {
                "name": "fork",
                "turns": [
                    {"text": "unused"},  # a fork's first request already holds the forking message
                    {"text": "Scope: my part\nResult: done"},
                ],
            }
        ],
    }


async def fork_join(client, repo: Path, n: int) -> float:
    async with workers(client) as (tq, hq):
        inp = ForkJoinInput(
            workspace=Workspace(root=str(repo), host_queue=hq),
            directives=[f"check part {i}" for i in range(n)],
            context="Audit the repository, one part per fork.",
            config=OutlastConfig(model=ModelSettings(max_attempts=1)),
        )
        t0 = time.perf_counter()
        result = await client.execute_workflow(
            "ForkJoinWorkflow",
            inp,
            id=f"fanout-{uuid.uuid4().hex[:8]}",
            task_queue=tq,
            result_type=ForkJoinResult,
        )
        elapsed = time.perf_counter() - t0
        assert [f.status for f in result.forks] == ["completed"] * n, result
        return elapsed


async def main(rounds: int, latency_ms: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"README.md": "# sample\n"})
        with (
            dev_server() as server,
            scripted_model_process(script(latency_ms)) as url,
            model_env(url, Path(tmp) / "store"),
        ):
            client = await client_for(server)
            await fork_join(client, repo, 2)  # warm-up
            one, sixteen = [], []
            for r in range(rounds):
                one.append(await fork_join(client, repo, 1))
                sixteen.append(await fork_join(client, repo, 16))
                print(f"round {r + 1}: 1 fork {one[-1]:.2f} s, 16 forks {sixteen[-1]:.2f} s")
    m1, m16 = statistics.median(one), statistics.median(sixteen)
    print(f"fork_join_1_s={m1:.2f} fork_join_16_s={m16:.2f} latency_ms={latency_ms}")
    print(f"fanout16_vs_1={m16 / m1:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.latency_ms))
