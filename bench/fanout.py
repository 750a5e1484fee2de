"""Sub-agent fan-out: one Outlast agent spawns 20 sub-agents in parallel, each works 5 turns.

Workload ("20x5", as Claude Code fans out): a parent `AgentWorkflow` whose first model answer
holds 20 parallel `Agent` tool calls (sync sub-agents, the default); each child makes 5 model
calls that each ask for one `Read` of a small file in a real (temporary) git repository, then
a 6th call that answers; when all 20 have answered, the parent's second model call ends the
task. The scripted model runs in its own process with zero latency; the worker runs in its own
process (`python -m worker`, a fresh one per scenario) so its peak RSS is its own (`VmHWM`
from /proc); the dev server has the transfer-queue throttle lifted (bench/harness.py).
Wall time is the client's, from the start request to the parent's result. One warm-up run,
then `--rounds` timed runs; the median is reported with the worker's peak RSS over them, and
the worker's and the dev server's CPU seconds per run (on 2 cores the run is CPU-bound).
The worker caches bytecode (outside the checkout) even where PYTHONDONTWRITEBYTECODE is set,
as an installed worker does; `--no-bytecode-cache` shows what recompiling the workflow
modules for every sandboxed workflow costs. `--py-spy BIN` samples the worker's stacks
during the timed rounds (raw collapsed stacks under `--profile-dir`), only the thread holding
the GIL: py-spy cannot tell idle threads here, and without `--gil` the executor's idle threads
were three quarters of the samples and a thread waiting for the GIL was counted where it
waited.

Second scenario: `--inflight` (default 100) sub-agents of the same parent at once, on a fresh
worker: peak RSS, wall time, and how many children really overlapped (from the parent's
history). The parent's concurrency limit (`agents.max_concurrent`, default 16) is raised to
the fan-out's width through `OutlastConfig`, as a user would.

(bench/fork_fanout.py is a different measure: how a `ForkJoinWorkflow`'s wall time scales
from 1 to 16 forks under 1 s of model latency. This one is the orchestration cost of many
busy sub-agents at once, with a zero-latency model, so the CPU of worker and server decides.)

    python bench/fanout.py [--agents 20] [--turns 5] [--rounds 5] [--inflight 100]

Last line: `fanout_20x5_s=<median wall> peak_rss_mb=<worker VmHWM>` (goals: <= 2.0 s,
<= 100 MB; with 100 in flight: <= 300 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporalio.api.enums.v1 import EventType  # noqa: E402
from temporalio.client import Client  # noqa: E402

from agents.config import AgentSettings, ModelSettings, OutlastConfig  # noqa: E402
from bench.harness import (  # noqa: E402
    RESULT_TIMEOUT_S,
    WorkerProcess,
    add_model_mode,
    client_for,
    dev_server,
    make_repo,
    median,
    model_mode,
    process_cpu_s,
    scripted_model_process,
    worker_process,
)
from workflows.contracts import AgentInput, AgentResult, Workspace  # noqa: E402

CHILD_MARK = "fanout child"
NOTES = "".join(f"note {i}: the module keeps its state in one small file\n" for i in range(20))


def parent_prompt(width: int) -> str:
    return f"Fan out to {width} sub-agents, one per area, and sum up what they found."


def child_spawn(i: int) -> dict:
    return {
        "name": "Agent",
        "input": {
            "description": f"survey area {i}",
            "prompt": f"{CHILD_MARK} {i}: read notes.txt and report on area {i}.",
            "subagent_type": "general-purpose",
        },
    }


def script(widths: list[int], turns: int) -> dict:
    """Children: `turns` Reads then an answer; one parent entry per fan-out width."""
    read = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/notes.txt"}}}
    child = {
        "name": "child",
        "match": {"prompt_contains": CHILD_MARK},
        "turns": [read] * turns + [{"text": "Area surveyed: nothing unusual."}],
    }
    parents = [
        {
            "name": f"parent-{w}",
            "match": {"prompt_contains": parent_prompt(w)},
            "turns": [
                {"text": f"Spawning {w} agents.", "tool_use": [child_spawn(i) for i in range(w)]},
                {"text": f"All {w} areas surveyed."},
            ],
        }
        for w in widths
    ]
    return {"agents": [child, *parents]}


@dataclass
class Run:
    wall_s: float
    max_overlap: int
    children: int


async def fan_out(
    client: Client, worker: WorkerProcess, repo: Path, width: int, model: ModelSettings
) -> Run:
    config = OutlastConfig(
        model=model,
        agents=AgentSettings(max_concurrent=max(width, 16)),
    )
    inp = AgentInput(
        prompt=parent_prompt(width),
        workspace=Workspace(root=str(repo), host_queue=worker.host_queue),
        config=config,
    )
    t0 = time.perf_counter()
    handle = await client.start_workflow(
        "AgentWorkflow",
        inp,
        id=f"fanout-{uuid.uuid4().hex[:8]}",
        task_queue=worker.task_queue,
        result_type=AgentResult,
    )
    result = await asyncio.wait_for(handle.result(), RESULT_TIMEOUT_S)
    wall = time.perf_counter() - t0
    assert result.status == "completed" and result.final_text.startswith("All"), result
    overlap, ends = await child_overlap(client, handle)
    if ends["completed"] != width:
        raise RuntimeError(f"{handle.id}: of {width} sub-agents, {dict(ends)}")
    return Run(wall, overlap, width)


async def child_overlap(client: Client, handle) -> tuple[int, Counter[str]]:
    """Most children running at once (from each child's start and close time), and how they
    ended. The children's own records, not the parent's history: a sync child reports its end
    by signal, so the parent may finish before its history records the child's completion."""
    ids = [
        e.child_workflow_execution_started_event_attributes.workflow_execution.workflow_id
        async for e in handle.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED
    ]
    edges: list[tuple[float, int]] = []
    ends: Counter[str] = Counter()
    for wid in ids:
        child = client.get_workflow_handle(wid, result_type=AgentResult)
        try:
            result = await child.result()
            ends[result.status + (f" ({result.error})" if result.error else "")] += 1
        except Exception as e:  # noqa: BLE001 - reported, and the run is refused
            ends[f"workflow {type(e).__name__}: {e}"] += 1
        desc = await child.describe()
        edges += [(desc.start_time.timestamp(), 1), (desc.close_time.timestamp(), -1)]
    running = peak = 0
    for _, step in sorted(edges):  # at equal times a close (-1) sorts before a start
        running += step
        peak = max(peak, running)
    return peak, ends


PROFILE: dict[str, str] = {}
"""`--py-spy BIN --profile-dir DIR`: sample the worker during the timed rounds."""


def start_profiler(pid: int, width: int) -> subprocess.Popen | None:
    if not PROFILE:
        return None
    out = Path(PROFILE["dir"]) / f"worker-{width}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        PROFILE["bin"],
        "record",
        "-p",
        str(pid),
        "-o",
        str(out),
        "-f",
        "raw",
        "-r",
        "200",
        "--gil",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)  # py-spy attaches
    return proc


def stop_profiler(proc: subprocess.Popen | None) -> None:
    if proc is not None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


async def task_timeouts(client: Client) -> tuple[int, int]:
    """Workflow tasks that timed out in every run on the server, and how many runs."""
    timed_out = runs = 0
    async for wf in client.list_workflows():
        runs += 1
        handle = client.get_workflow_handle(wf.id, run_id=wf.run_id)
        async for event in handle.fetch_history_events():
            timed_out += event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
    return timed_out, runs


def mb(kb: int) -> float:
    return kb / 1024


async def scenario(
    client: Client,
    worker: WorkerProcess,
    repo: Path,
    width: int,
    rounds: int,
    server_pid: int,
    model: ModelSettings,
) -> tuple[list[Run], float, float, float]:
    """Warm-up, then `rounds` runs; also the worker's peak RSS and its and the server's CPU
    seconds per run."""
    await fan_out(client, worker, repo, 2, model)  # warm-up: imports, sandbox, connections
    print(f"  worker pid {worker.pid}, RSS after warm-up: {mb(worker.status_kb('VmRSS')):.0f} MB")
    cpu0, srv0 = worker.cpu_s(), process_cpu_s(server_pid)
    runs = []
    profiler = start_profiler(worker.pid, width)
    for r in range(rounds):
        run = await fan_out(client, worker, repo, width, model)
        runs.append(run)
        print(
            f"  round {r + 1}: {width} sub-agents, wall {run.wall_s:.2f} s, "
            f"max children in flight {run.max_overlap}, "
            f"worker RSS now {mb(worker.status_kb('VmRSS')):.0f} MB"
        )
    stop_profiler(profiler)
    worker_cpu = (worker.cpu_s() - cpu0) / rounds
    server_cpu = (process_cpu_s(server_pid) - srv0) / rounds
    return runs, mb(worker.status_kb("VmHWM")), worker_cpu, server_cpu


async def main(
    agents: int, turns: int, rounds: int, inflight: int, bytecode: bool, model: ModelSettings
) -> None:
    widths = sorted({2, agents, *([inflight] if inflight else [])})
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"notes.txt": NOTES, "README.md": "# sample\n"})
        store = Path(tmp) / "store"
        with (
            dev_server(persist=True) as server,
            scripted_model_process(script(widths, turns)) as url,
        ):
            client = await client_for(server)
            print(f"{agents}x{turns}: {agents} sub-agents, {turns} tool turns + 1 answer each")
            with worker_process(server.address, url, store, bytecode_cache=bytecode) as worker:
                runs, peak, cpu, srv = await scenario(
                    client, worker, repo, agents, rounds, server.pid, model
                )
            wall = median([r.wall_s for r in runs])
            print(
                f"fanout {agents}x{turns}: median wall {wall:.2f} s over {rounds} rounds; "
                f"worker peak RSS {peak:.0f} MB; CPU per run: worker {cpu:.2f} s, "
                f"dev server {srv:.2f} s"
            )
            if inflight:
                print(f"{inflight} in flight: {inflight} sub-agents of one parent, fresh worker")
                with worker_process(server.address, url, store, bytecode_cache=bytecode) as worker:
                    big, big_peak, big_cpu, big_srv = await scenario(
                        client, worker, repo, inflight, 1, server.pid, model
                    )
                print(
                    f"inflight_{inflight}_peak_rss_mb={big_peak:.0f} "
                    f"wall_s={big[0].wall_s:.2f} max_in_flight={big[0].max_overlap} "
                    f"worker_cpu_s={big_cpu:.2f} server_cpu_s={big_srv:.2f}"
                )
            timed_out, runs_seen = await task_timeouts(client)
            print(
                f"workflow tasks timed out: {timed_out} in {runs_seen} runs (a sticky worker "
                "that did not take its task in time, or a task that ran over its timeout)"
            )
    print(f"fanout_{agents}x{turns}_s={wall:.2f} peak_rss_mb={peak:.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inflight", type=int, default=100, help="0: skip that scenario")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE for the worker (the sandbox recompiles per workflow)",
    )
    parser.add_argument("--py-spy", help="py-spy binary: profile the worker (timed rounds)")
    parser.add_argument("--profile-dir", default="bench/results/fanout-profile")
    add_model_mode(parser)
    args = parser.parse_args()
    model = ModelSettings(max_attempts=1, local_activity=model_mode(args))
    if args.py_spy:
        PROFILE.update(bin=args.py_spy, dir=args.profile_dir)
    asyncio.run(
        main(
            args.agents,
            args.turns,
            args.rounds,
            args.inflight,
            not args.no_bytecode_cache,
            model,
        )
    )
