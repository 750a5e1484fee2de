"""Worker settings: pollers, the workflow cache and eager activities, against Outlast's own.

Each setting is a set of `temporalio.worker.Worker` arguments passed to `build_workers`
(`main_options` for the main-queue worker, `tool_options` for the host's tool worker) over
Outlast's defaults (the table is in bench/tuned_worker.py). Per setting and round, a fresh
worker process (bench/tuned_worker.py: `python -m worker` with that setting) runs, on one dev
server started as `outlast dev` starts it:

- fan-out: bench/fanout.py's 20x5 (20 sync sub-agents of 5 Read turns each): wall, and the
  worker's and the dev server's CPU seconds;
- one agent, `--seq-turns` turns of one Read each: ms per turn (median gap between model
  calls, as bench/turn_overhead.py takes it);
- one agent, `--seq-turns` turns of 8 parallel Reads each: ms per turn. Read is
  concurrency-safe, so a turn's 8 calls run as one batch (workflows/turns.py `batch_calls`):
  this row against the one before is what a turn's parallel tool calls cost.

Settings take turns within each round (rotated), so drift on this noisy machine spreads over
all of them; compare within one run.

    python bench/worker_settings.py [--rounds 3] [--only default,cache-10] [--model-local-activity]

Last line: `default_fanout_s=<x> default_turn_ms=<y> parallel8_turn_ms=<z>
best_fanout=<setting>:<s> best_turn=<setting>:<ms>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporalio.client import Client  # noqa: E402

from agents.config import ModelSettings  # noqa: E402
from bench.fanout import NOTES, fan_out  # noqa: E402
from bench.fanout import script as fan_script  # noqa: E402
from bench.harness import (  # noqa: E402
    add_model_mode,
    agent_turn_gaps,
    client_for,
    dev_server,
    make_repo,
    median,
    model_mode,
    process_cpu_s,
    scripted_model_process,
    worker_process,
)
from bench.tuned_worker import SETTINGS  # noqa: E402

SEQ_MARK = "settings bench: read notes.txt once per turn"
PAR_MARK = "settings bench: read notes.txt eight times per turn"
PARALLEL = 8


def script(agents: int, turns: int) -> dict:
    """bench/fanout.py's script plus the two single-agent workloads."""
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/notes.txt"}}
    data = fan_script([2, agents], turns)
    data["agents"] += [
        {
            "name": "seq",
            "match": {"prompt_contains": SEQ_MARK},
            "after_last": "repeat_last",
            "turns": [{"tool_use": read}],
        },
        {
            "name": "par",
            "match": {"prompt_contains": PAR_MARK},
            "after_last": "repeat_last",
            "turns": [{"tool_use": [read] * PARALLEL}],
        },
    ]
    return data


# ---- the driver side -------------------------------------------------------------------------


@dataclass
class Measured:
    fan_s: list[float] = field(default_factory=list)
    worker_cpu_s: list[float] = field(default_factory=list)
    server_cpu_s: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    par_turn_ms: list[float] = field(default_factory=list)
    peak_rss_mb: list[float] = field(default_factory=list)


async def one_setting(
    client: Client, server, url: str, store: Path, repo: Path, name: str, a, out: Measured
) -> None:
    argv = [sys.executable, str(Path(__file__).resolve().parent / "tuned_worker.py"), name]
    model = ModelSettings(max_attempts=1, local_activity=model_mode(a))
    with worker_process(server.address, url, store, argv=argv) as worker:
        await fan_out(client, worker, repo, 2, model)  # warm-up: imports, sandbox, connections
        cpu0, srv0 = worker.cpu_s(), process_cpu_s(server.pid)
        run = await fan_out(client, worker, repo, a.agents, model)
        out.worker_cpu_s.append(worker.cpu_s() - cpu0)
        out.server_cpu_s.append(process_cpu_s(server.pid) - srv0)
        out.fan_s.append(run.wall_s)
        for marker, into in ((SEQ_MARK, out.turn_ms), (PAR_MARK, out.par_turn_ms)):
            gaps = await agent_turn_gaps(
                client, worker.task_queue, worker.host_queue, repo, marker, a.seq_turns, model
            )
            into.append(median(gaps))
        out.peak_rss_mb.append(worker.status_kb("VmHWM") / 1024)


def fmt(values: list[float], spec: str = ".2f") -> str:
    if not values:
        return "-"
    return f"{median(values):{spec}} ({min(values):{spec}}-{max(values):{spec}})"


async def main(a) -> None:
    names = [n for n in SETTINGS if not a.only or n in a.only.split(",")]
    results = {n: Measured() for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "repo", {"notes.txt": NOTES, "README.md": "# sample\n"})
        with (
            dev_server(persist=True) as server,
            scripted_model_process(script(a.agents, a.turns)) as url,
        ):
            client = await client_for(server)
            for r in range(a.rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                for name in order:
                    t0 = time.perf_counter()
                    store = Path(tmp) / f"store-{r}-{name}"
                    await one_setting(client, server, url, store, repo, name, a, results[name])
                    m = results[name]
                    print(
                        f"round {r + 1} {name:15s} fan {m.fan_s[-1]:.2f} s, "
                        f"turn {m.turn_ms[-1]:.1f} ms, 8 parallel {m.par_turn_ms[-1]:.1f} ms "
                        f"({time.perf_counter() - t0:.0f} s)",
                        flush=True,
                    )
    print()
    print(
        f"| setting | fan-out {a.agents}x{a.turns} wall (s) | worker CPU (s) | dev server CPU (s) "
        f"| ms/turn, 1 Read | ms/turn, {PARALLEL} parallel Reads | worker peak RSS (MB) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, m in results.items():
        print(
            f"| {name} | {fmt(m.fan_s)} | {fmt(m.worker_cpu_s)} | {fmt(m.server_cpu_s)} "
            f"| {fmt(m.turn_ms, '.1f')} | {fmt(m.par_turn_ms, '.1f')} "
            f"| {fmt(m.peak_rss_mb, '.0f')} |"
        )
    best_fan = min(results, key=lambda n: median(results[n].fan_s))
    best_turn = min(results, key=lambda n: median(results[n].turn_ms))
    base = results.get("default") or results[names[0]]
    print(
        f"default_fanout_s={median(base.fan_s):.2f} default_turn_ms={median(base.turn_ms):.1f} "
        f"parallel{PARALLEL}_turn_ms={median(base.par_turn_ms):.1f} "
        f"best_fanout={best_fan}:{median(results[best_fan].fan_s):.2f} "
        f"best_turn={best_turn}:{median(results[best_turn].turn_ms):.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--seq-turns", type=int, default=30)
    parser.add_argument("--only", default="", help=f"comma-separated, of: {', '.join(SETTINGS)}")
    add_model_mode(parser)
    args = parser.parse_args()
    unknown = [n for n in args.only.split(",") if n and n not in SETTINGS]
    if unknown:
        parser.error(f"unknown setting {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    asyncio.run(main(args))
