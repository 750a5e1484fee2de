"""What a long Bash command costs in heartbeats, and how soon a kill stops it.

Each activity heartbeat that reaches the server is a request and, on Temporal Cloud, a billed
action; a Bash command running tests for minutes is the usual long activity. Tools heartbeat
every 5 s (spec R93's default) since a killed run kills its command on the host itself
(`tool.bash_kill`); before, they heartbeat every second, as the cancel reached the command
only in a heartbeat response. This script measures both settings in one run, interleaved:

- cost: one agent whose only tool call is `sleep <seconds>` in Bash (default 20 s); the
  heartbeats are the dev server's own count (its `action` metric, RecordActivityTaskHeartbeat);
- kill: an agent whose Bash runs `sleep 600` is cancelled once the command runs; the time from
  the cancel request to the moment no process of the command is left (polled in /proc).

The "1 s" setting is the previous code's: heartbeats every second, no kill on the host (the
patch is answered "no", as for a run from before it).

    python bench/bash_heartbeats.py [--seconds 20] [--rounds 3]

Last line: `bash_heartbeats_per_min=<x> kill_s=<y> before_heartbeats_per_min=<x>
before_kill_s=<y>` (medians).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import worker  # noqa: E402
from activities import heartbeats as beats  # noqa: E402
from agents.config import ModelSettings, OutlastConfig  # noqa: E402
from bench.cost_model import HEARTBEATS, settled_scrape  # noqa: E402
from bench.harness import (  # noqa: E402
    RESULT_TIMEOUT_S,
    client_for,
    dev_server,
    make_repo,
    median,
    model_env,
    scripted_model_process,
    workers,
)
from workflows import loop_tools  # noqa: E402
from workflows.contracts import AgentInput, Workspace  # noqa: E402


def script(command: str) -> dict:
    return {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": command}}},
                    {"text": "done"},
                ],
            }
        ]
    }


@contextlib.contextmanager
def setting(before: bool) -> Iterator[None]:
    """The previous code's heartbeat interval and kill path, or this code's."""
    saved = (
        beats.HEARTBEAT_INTERVAL_S,
        worker.HEARTBEAT_THROTTLE,
        loop_tools.versions.patched,
    )
    if before:
        beats.HEARTBEAT_INTERVAL_S = 1.0
        worker.HEARTBEAT_THROTTLE = timedelta(seconds=1)
        real = loop_tools.versions.patched
        # Workflow modules are passed through the sandbox, so the workflows see this one.
        loop_tools.versions.patched = lambda pid: pid != loop_tools.KILL_ON_HOST and real(pid)
    try:
        yield
    finally:
        beats.HEARTBEAT_INTERVAL_S, worker.HEARTBEAT_THROTTLE = saved[:2]
        loop_tools.versions.patched = saved[2]


def live(mark: str) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"sleep {mark}" in cmd and state != "Z":
            return True
    return False


def agent(repo: Path, hq: str) -> AgentInput:
    return AgentInput(
        prompt="run it",
        workspace=Workspace(root=str(repo), host_queue=hq),
        config=OutlastConfig(model=ModelSettings(max_attempts=1)),
    )


async def heartbeats(server, client, repo: Path, seconds: float) -> tuple[int, float]:
    """Heartbeats the server counted for one `sleep seconds` Bash call, and its wall time."""
    before = await settled_scrape(server)
    async with workers(client) as (tq, hq):
        t0 = time.perf_counter()
        handle = await client.start_workflow(
            "AgentWorkflow", agent(repo, hq), id=f"hb-{uuid.uuid4().hex[:8]}", task_queue=tq
        )
        await asyncio.wait_for(handle.result(), RESULT_TIMEOUT_S)
        wall = time.perf_counter() - t0
    after = await settled_scrape(server)
    return sum(after[k] - before[k] for k in HEARTBEATS), wall


async def kill(client, repo: Path, mark: str) -> float:
    """Seconds from the cancel request to no process of the command left."""
    async with workers(client) as (tq, hq):
        handle = await client.start_workflow(
            "AgentWorkflow", agent(repo, hq), id=f"kill-{uuid.uuid4().hex[:8]}", task_queue=tq
        )
        deadline = time.monotonic() + 30
        while not live(mark):
            if time.monotonic() > deadline:
                raise RuntimeError("the command never started")
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # running for a while, as a command being killed would be
        t0 = time.perf_counter()
        await handle.cancel()
        while live(mark):
            await asyncio.sleep(0.02)
        gone = time.perf_counter() - t0
        with contextlib.suppress(Exception):
            await asyncio.wait_for(handle.result(), 60)
    return gone


async def main(seconds: float, rounds: int) -> None:
    cost = {False: [], True: []}
    killed = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"a.txt": "a\n"})
        mark = f"600.{random.randint(10**6, 10**7)}"
        with dev_server(metrics=True, persist=True) as server:
            client = await client_for(server)
            for r in range(rounds):
                for before in (False, True):
                    name = "1 s, heartbeat kill" if before else "5 s, kill on host"
                    with setting(before):
                        with (
                            scripted_model_process(script(f"sleep {seconds}")) as url,
                            model_env(url, Path(tmp) / "store"),
                        ):
                            beats, wall = await heartbeats(server, client, repo, seconds)
                        with (
                            scripted_model_process(script(f"sleep {mark}")) as url,
                            model_env(url, Path(tmp) / "store"),
                        ):
                            gone = await kill(client, repo, mark)
                    per_min = beats / seconds * 60
                    cost[before].append(per_min)
                    killed[before].append(gone)
                    print(
                        f"round {r + 1} ({name}): {beats} heartbeats over a {seconds:g} s "
                        f"command ({wall:.1f} s run, {per_min:.1f}/min); killed in {gone:.2f} s"
                    )
    print(
        f"bash_heartbeats_per_min={median(cost[False]):.1f} kill_s={median(killed[False]):.2f} "
        f"before_heartbeats_per_min={median(cost[True]):.1f} "
        f"before_kill_s={median(killed[True]):.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.rounds))
