"""Outlast versus the peer Temporal agent integrations, on one dev server, interleaved by round.

Extends shared/bench-peers (same workload, same minimal and peer configurations, fresh worker
process per job per round) with Outlast's real `AgentWorkflow` and real tools. Each peer
worker runs with its own venv (bench/peers/.venvs/, see venvs.py); Outlast's worker is its
production entry point `python -m worker` in /work/main/.venv; the driver (this script)
runs in Outlast's venv and is every configuration's client.

    python bench/peers/run.py --setup                  # create the peer venvs (PyPI)
    python bench/peers/run.py --quick                  # smoke test: 1 round, few turns
    python bench/peers/run.py --rounds 5               # full run, writes bench/RESULTS.md
    python bench/peers/run.py --only o_outlast,c_pyd --rounds 1 --no-write
    python bench/peers/run.py --report bench/results/peers.json   # re-render a run

Per job and round: one warm-up execution, `--runs` timed executions of `--turns` turns (or
one fan-out of `--fan` agents x `--fan-turns` turns), then one execution at each of
`--history-turns` for history size. Last line: Outlast's ms/turn versus the best peer's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]  # this directory's modules, then Outlast's

import history  # noqa: E402
import outlast_cfg  # noqa: E402
import procs  # noqa: E402
import report  # noqa: E402
import venvs  # noqa: E402
from jobs import JOBS, Job  # noqa: E402
from temporalio.client import Client  # noqa: E402

from bench.harness import dev_server, make_repo, model_env  # noqa: E402
from outlast.client import connect  # noqa: E402
from workflows.contracts import AgentResult  # noqa: E402

DATA = "".join(f"line {i}\n" for i in range(40))  # the file every Read returns (as turn_overhead)
WARMUP_TURNS = 3  # distinct from every measured N, so warm-up blobs never dedupe with them
RESULTS_JSON = REPO / "bench" / "results" / "peers.json"  # bench/results/ is git-ignored
RESULTS_MD = REPO / "bench" / "RESULTS.md"


@dataclass
class Ctx:
    args: argparse.Namespace
    address: str
    workdir: Path
    repo: str
    path: str
    model_url: str
    pids: dict[str, int]
    plain: Client
    outlast: Client


@dataclass
class Slot:
    """One job's worker in one round: where its executions go."""

    name: str
    job: Job
    client: Client
    tq: str
    host_queue: str = ""


def cpu_now(ctx: Ctx, worker_pid: int) -> dict[str, float]:
    pids = {"worker": worker_pid, "server": ctx.pids["server"], "model": ctx.pids["model"]}
    return {k: procs.cpu_s(p) for k, p in pids.items()}


async def execute(ctx: Ctx, slot: Slot, n: int, t: int = 0) -> tuple[float, str, str, list]:
    """One execution: seq `n` turns, or fan `n` agents x `t` turns. Returns (seconds,
    workflow id, first run id, child workflow ids)."""
    job, fan = slot.job, slot.job.scenario == "fan"
    wid = f"{slot.name}-{uuid.uuid4().hex[:10]}"
    if job.family == "outlast":
        args = (ctx.path, ctx.repo, slot.host_queue)
        local = job.local_model
        inp = (
            outlast_cfg.fan_input(n, t, *args, local_model=local)
            if fan
            else outlast_cfg.seq_input(n, *args, local_model=local)
        )
        t0 = time.perf_counter()
        handle = await slot.client.start_workflow(
            "AgentWorkflow", inp, id=wid, task_queue=slot.tq, result_type=AgentResult
        )
        result = await asyncio.wait_for(handle.result(), ctx.args.run_timeout)
        elapsed = time.perf_counter() - t0
        outlast_cfg.check(result, None if fan else n)
        kids = [f"{wid}/{outlast_cfg.child_name(i)}" for i in range(n)] if fan else []
    else:
        t0 = time.perf_counter()
        handle = await slot.client.start_workflow(
            job.workflow, args=job.args(n, t, ctx.path), id=wid, task_queue=slot.tq
        )
        result = await asyncio.wait_for(handle.result(), ctx.args.run_timeout)
        elapsed = time.perf_counter() - t0
        # A fan-out answers once per sub-agent (and the tool mode's orchestrator once more).
        ok = all(r == "done" for r in result) and len(result) >= n if fan else result == "done"
        if not ok:
            raise RuntimeError(f"{slot.name}: unexpected result {result!r}"[:500])
        kids = [f"{wid}-c{i}" for i in range(n)] if job.children else []
    return elapsed, wid, handle.first_execution_run_id, kids


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


async def start_worker(ctx: Ctx, name: str, job: Job) -> tuple[procs.WorkerProcess, Slot, Path]:
    tq = f"bench-{name}-{uuid.uuid4().hex[:8]}"
    env = {"ANTHROPIC_BASE_URL": ctx.model_url, "ANTHROPIC_API_KEY": "bench"}
    # Each Outlast worker gets its own state dir and blob store: the store is
    # content-addressed, so a shared one would hide the bytes of a repeated run.
    home = ctx.workdir / f"home-{tq}"
    if job.family == "outlast":
        env.update(OUTLAST_HOME=str(home), OUTLAST_STORE_DIR=str(home / "store"))
        worker = procs.start_outlast_worker(ctx.address, tq, tq, env)
        slot = Slot(name, job, ctx.outlast, tq, host_queue=f"outlast-host-{tq}")
        try:
            await procs.wait_for_pollers(
                ctx.outlast,
                [(tq, procs.WORKFLOW_QUEUE), (slot.host_queue, procs.ACTIVITY_QUEUE)],
            )
        except Exception:
            worker.stop()
            raise
    else:
        worker = procs.start_peer_worker(job.family, ctx.address, tq, job.local_model, env)
        slot = Slot(name, job, ctx.plain, tq)
        try:
            await worker.wait_line("READY")
        except Exception:
            worker.stop()
            raise
    return worker, slot, home / "store"


async def run_job(ctx: Ctx, name: str, job: Job) -> dict:
    a = ctx.args
    worker, slot, store = await start_worker(ctx, name, job)
    try:
        fan = job.scenario == "fan"
        size = (a.fan, a.fan_turns) if fan else (a.turns, 0)
        await execute(ctx, slot, *((2, a.fan_turns) if fan else (WARMUP_TURNS, 0)))
        cpu0 = cpu_now(ctx, worker.pid)
        times = []
        for _ in range(a.runs):
            elapsed, wid, run_id, kids = await execute(ctx, slot, *size)
            times.append(elapsed)
        cpu1 = cpu_now(ctx, worker.pid)
        out = {
            "times_s": times,
            "cpu_s_per_run": {k: (cpu1[k] - cpu0[k]) / a.runs for k in cpu0},
            # Read before the history runs: the peak of the measured workload only.
            "vmhwm_kb": procs.vmhwm_kb(worker.pid),
            "hist": {str(size[0]): await history.tree_stats(ctx.plain, wid, run_id, kids)},
            "wall_s": {},
            "store_bytes": {},
        }
        if not fan:
            for n in a.history_turns:
                before = dir_bytes(store)
                elapsed, wid, run_id, _ = await execute(ctx, slot, n)
                out["wall_s"][str(n)] = elapsed
                out["hist"][str(n)] = await history.chain_stats(ctx.plain, wid, run_id)
                if job.family == "outlast":
                    out["store_bytes"][str(n)] = dir_bytes(store) - before
        if worker.proc.poll() is not None:
            raise RuntimeError(f"worker exited: {worker.log_tail()}")
        return out
    except Exception as e:
        e.add_note(worker.log_tail()[-1500:])
        raise
    finally:
        worker.stop()


def job_names(a: argparse.Namespace) -> list[str]:
    names = [n for n in JOBS if not a.only or n in a.only.split(",")]
    return [n for n in names if a.scenario in ("all", JOBS[n].scenario)]


async def bench(a: argparse.Namespace) -> dict:
    names = job_names(a)
    results = {"meta": report.meta(a, names), "rounds": []}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        workdir = Path(tmp)
        repo = make_repo(workdir / "repo", {"data.txt": DATA})
        path = str(repo / "data.txt")
        turn_counts = [a.turns, a.fan_turns, WARMUP_TURNS, *a.history_turns]
        script = outlast_cfg.script(path, turn_counts, [(a.fan, a.fan_turns), (2, a.fan_turns)])
        if not a.no_bytecode_cache:
            procs.BYTECODE_CACHE = workdir / "pycache"
        with (
            dev_server(persist=not a.in_memory) as server,
            procs.fake_model(script, workdir) as (url, model_pid),
            model_env(url, workdir / "store"),
        ):
            pids = {"server": int(server.pid_file.read_text()), "model": model_pid}
            print(f"dev server {server.address} pid={pids['server']}; fake model {url}", flush=True)
            results["meta"]["dev_server_command"] = server.command()
            ctx = Ctx(
                a, server.address, workdir, str(repo), path, url, pids,
                plain=await Client.connect(server.address),
                outlast=await connect(server.address),
            )  # fmt: skip
            for rnd in range(a.rounds):
                # Rotate the order each round so slow drift (the other user of this machine,
                # the server's growing state) spreads over all jobs instead of a few.
                order = names[rnd % len(names) :] + names[: rnd % len(names)]
                row = {}
                for name in order:
                    t0 = time.time()
                    try:
                        row[name] = await run_job(ctx, name, JOBS[name])
                        msg = " ".join(f"{t * 1000:.0f}ms" for t in row[name]["times_s"])
                    except Exception as e:  # record it and go on with the other jobs
                        row[name] = {"error": f"{type(e).__name__}: {e}"}
                        notes = "\n".join(getattr(e, "__notes__", []))
                        msg = f"ERROR {row[name]['error'][:300]}\n{notes[-800:]}"
                    print(f"round {rnd} {name:14s} {time.time() - t0:5.1f}s  {msg}", flush=True)
                results["rounds"].append(row)
                results["meta"]["loadavg_at_end"] = os.getloadavg()
                if a.out:
                    save(results, Path(a.out))
    return results


def save(results: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--setup", action="store_true", help="create/update the peer venvs, exit")
    p.add_argument("--quick", action="store_true", help="smoke test: 1 round, few turns")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=2, help="timed executions per job per round")
    p.add_argument("--turns", type=int, default=50)
    p.add_argument("--history-turns", default="10,100", help="extra runs for history size")
    p.add_argument("--fan", type=int, default=20)
    p.add_argument("--fan-turns", type=int, default=5)
    p.add_argument("--only", default="", help="comma-separated job names (see jobs.py)")
    p.add_argument("--scenario", default="all", choices=["all", "seq", "fan"])
    p.add_argument("--run-timeout", type=float, default=300)
    p.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE for the workers (see procs.BYTECODE_CACHE)",
    )
    p.add_argument(
        "--in-memory",
        action="store_true",
        help="an in-memory dev server (default: a SQLite file, as `outlast dev` starts it)",
    )
    p.add_argument("--out", default="", help=f"results JSON (default {RESULTS_JSON})")
    p.add_argument("--md", default="", help=f"Markdown report (default {RESULTS_MD})")
    p.add_argument("--no-write", action="store_true", help="print only, write no files")
    p.add_argument("--report", default="", help="re-render a results JSON and exit")
    a = p.parse_args()
    if a.quick:
        a.rounds, a.runs, a.turns, a.fan, a.fan_turns = 1, 1, 10, 4, 2
        a.history_turns = "5,20"
        a.no_write = a.no_write or not (a.out or a.md)
    a.history_turns = [int(x) for x in a.history_turns.split(",") if x]
    if not a.no_write:
        a.out, a.md = a.out or str(RESULTS_JSON), a.md or str(RESULTS_MD)
    return a


def main() -> None:
    a = parse_args()
    if a.setup:
        venvs.setup()
        return
    if a.report:
        results = json.loads(Path(a.report).read_text())
    else:
        venvs.check({JOBS[n].family for n in job_names(a)})
        results = asyncio.run(bench(a))
    text = report.render(results)
    if a.md:
        Path(a.md).write_text(report.keep_tail(Path(a.md), text))
        print(f"wrote {a.md}")
    print(text)
    print(report.summary_line(results))


if __name__ == "__main__":
    # Outlast's worker module warns that the Temporal client's native threads can hang
    # CPython's teardown (temporalio sdk-python#300); a benchmark that has printed its
    # results must not hang there either.
    main()
    sys.stdout.flush()
    os._exit(0)
