"""Shared parts of Outlast's benchmarks: servers, workers and history reading.

Same method as ../shared/bench-peers (one dev server per run, the scripted model in its own
process, ratios taken within one run because the machine is noisy), reusing Outlast's own
launcher and worker wiring instead of the peers' per-framework configs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from activities.model_http import close_clients
from agents.config import ModelCallMode, ModelSettings, OutlastConfig
from outlast.client import connect
from outlast.devserver import DevServer
from worker import build_workers
from workflows.contracts import AgentInput, AgentResult, Workspace

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULT_TIMEOUT_S = 600
"""A run's result arrives within this, or the run fails: a dead worker must not hang a bench."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclasses.dataclass
class BenchDevServer(DevServer):
    metrics_port: int | None = None
    """Serve the server's Prometheus metrics (its `action` counter among them) here."""

    def command(self) -> list[str]:
        cmd = super().command()
        return cmd + (["--metrics-port", str(self.metrics_port)] if self.metrics_port else [])

    @property
    def pid(self) -> int:
        return int(self.pid_file.read_text())


@contextlib.contextmanager
def dev_server(
    extra_dynamic_config: dict[str, str] | None = None,
    *,
    metrics: bool = False,
    persist: bool = False,
) -> Iterator[BenchDevServer]:
    """A headless dev server, with the transfer-queue throttle lifted as Outlast's launcher
    always does (see bench-peers' main finding); `metrics`: with a metrics port; `persist`:
    on a SQLite file, exactly as `outlast dev` starts it (default: in memory)."""
    with tempfile.TemporaryDirectory() as tmp:
        server = BenchDevServer(
            state_dir=Path(tmp),
            host="127.0.0.1",
            port=free_port(),
            headless=True,
            persist=persist,
            extra_dynamic_config=extra_dynamic_config,
            metrics_port=free_port() if metrics else None,
        )
        proc = server.start(detach=False)
        try:
            yield server
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextlib.contextmanager
def scripted_model_process(script: dict[str, Any]) -> Iterator[str]:
    """`python -m outlast.scripted_model` in its own process (it must not share the GIL with
    the worker being measured); yields its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.yaml"
        path.write_text(yaml.safe_dump(script))
        proc = subprocess.Popen(
            [sys.executable, "-m", "outlast.scripted_model", "--script", str(path), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline().strip()
            if "listening on" not in line:
                raise RuntimeError(f"scripted model did not start: {line!r}")
            yield line.rsplit(" ", 1)[-1]
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@contextlib.contextmanager
def model_env(url: str, store_dir: Path) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(
        ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="bench", OUTLAST_STORE_DIR=str(store_dir)
    )
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.asynccontextmanager
async def workers(client: Client) -> AsyncIterator[tuple[str, str]]:
    tq, hq = f"bench-{uuid.uuid4().hex[:8]}", f"bench-host-{uuid.uuid4().hex[:8]}"
    ws = build_workers(client, task_queue=tq, host_queue=hq)
    tasks = [asyncio.create_task(w.run()) for w in ws]
    try:
        yield tq, hq
    finally:
        for w in ws:
            await w.shutdown()
        await asyncio.gather(*tasks, return_exceptions=True)
        await close_clients()


PYCACHE = Path(tempfile.gettempdir()) / "outlast-bench-pycache"
"""Bytecode of the worker processes' modules, kept between runs (compiled on the first)."""


@contextlib.contextmanager
def worker_process(
    address: str,
    model_url: str,
    store_dir: Path,
    *,
    bytecode_cache: bool = True,
    argv: list[str] | None = None,
) -> Iterator[WorkerProcess]:
    """`python -m worker` in a process of its own (fresh queues), so its memory and CPU are
    its own: `/proc/<pid>` tells its peak RSS (VmHWM) and CPU time.

    `bytecode_cache`: let it cache bytecode (in PYCACHE, not in the checkout) even where
    PYTHONDONTWRITEBYTECODE is set, as an installed worker would: the workflow sandbox
    imports the workflow modules again for every workflow, and without a cache it compiles
    them from source every time. `argv`: another worker command (default `python -m worker`),
    configured by the same environment."""
    host = f"bench-{uuid.uuid4().hex[:8]}"
    tq = f"bench-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "OUTLAST_TASK_QUEUE": tq,
        "OUTLAST_HOST_ID": host,
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "bench",
        "OUTLAST_STORE_DIR": str(store_dir),
    }
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    proc = subprocess.Popen(argv or [sys.executable, "-m", "worker"], cwd=REPO_ROOT, env=env)
    try:
        yield WorkerProcess(proc.pid, tq, f"outlast-host-{host}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclasses.dataclass(frozen=True)
class WorkerProcess:
    pid: int
    task_queue: str
    host_queue: str

    def status_kb(self, field: str) -> int:
        """A `/proc/<pid>/status` field in kB (VmHWM: peak RSS, VmRSS: current RSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
        raise KeyError(field)

    def cpu_s(self) -> float:
        return process_cpu_s(self.pid)


def process_cpu_s(pid: int) -> float:
    """utime + stime of a process so far (its threads included, not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def client_for(server: DevServer) -> Client:
    return await connect(server.address)


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root.resolve()


MODEL_CALL = "llm.call_model"
LOCAL_HELP = "call the model as a local activity (config model.local_activity)"


def add_model_mode(parser: argparse.ArgumentParser) -> None:
    """The model call's mode (`model.local_activity`): regular unless one of these is given."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--model-local-activity", action="store_true", help=LOCAL_HELP)
    mode.add_argument(
        "--model-auto",
        action="store_true",
        help="model.local_activity: auto (local after a call under a second, capped at 5 s)",
    )


def model_mode(args: argparse.Namespace) -> ModelCallMode:
    return "auto" if args.model_auto else args.model_local_activity


def model_call_at(event: Any, names: frozenset[str] = frozenset({MODEL_CALL})) -> float | None:
    """When the model call that `event` records was scheduled (seconds), or None if it records
    none: a regular activity's scheduled event, or a local activity's marker (with
    `--model-local-activity`), which carries its first attempt's schedule time."""
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        if event.activity_task_scheduled_event_attributes.activity_type.name in names:
            return event.event_time.ToDatetime().timestamp()
        return None
    if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
        attrs = event.marker_recorded_event_attributes
        if attrs.marker_name == "core_local_activity":
            data = json.loads(attrs.details["data"].payloads[0].data)
            # A marker with `backoff` records a retry scheduled on a timer, not a call.
            if data["activity_type"] in names and not data.get("backoff"):
                at = data["original_schedule_time"]
                return at["seconds"] + at.get("nanos", 0) / 1e9
    return None


async def model_call_times(handle: WorkflowHandle) -> list[float]:
    """Scheduled time (seconds) of every `llm.call_model`, in order."""
    return [
        at
        async for event in handle.fetch_history_events()
        if (at := model_call_at(event)) is not None
    ]


def gaps_ms(times: list[float]) -> list[float]:
    return [(b - a) * 1000 for a, b in zip(times, times[1:], strict=False)]


async def agent_turn_gaps(
    client: Client,
    task_queue: str,
    host_queue: str,
    repo: Path,
    prompt: str,
    turns: int,
    model: ModelSettings,
) -> list[float]:
    """One `AgentWorkflow` of exactly `turns` turns (the scripted model never ends it):
    milliseconds between consecutive model calls."""
    inp = AgentInput(
        prompt=prompt,
        workspace=Workspace(root=str(repo), host_queue=host_queue),
        config=OutlastConfig(model=model),
        max_turns=turns,
    )
    handle = await client.start_workflow(
        "AgentWorkflow",
        inp,
        id=f"bench-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
        result_type=AgentResult,
    )
    result = await asyncio.wait_for(handle.result(), RESULT_TIMEOUT_S)
    if result.turns != turns or not result.max_turns_reached:
        raise RuntimeError(f"unexpected result: {result!r}"[:500])
    return gaps_ms(await model_call_times(handle))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
