"""Child processes of the driver: workers and the scripted model, and what /proc says of them.

Every process here is started by the driver and stopped by its own PID (never by name): the
machine is shared, and other people's Temporal servers and workers must not be touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from venvs import HERE, OUTLAST_PYTHON, REPO, python_of


def cpu_s(pid: int | None) -> float:
    """utime+stime of a process in seconds (its children not included)."""
    if not pid:
        return float("nan")
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def vmhwm_kb(pid: int) -> int:
    """Peak resident set size (VmHWM) of a live process, in KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


BYTECODE_CACHE: Path | None = None
"""Where workers cache bytecode (set by the driver), or None to leave the environment as is.

This machine sets PYTHONDONTWRITEBYTECODE. Every workflow sandbox re-imports the workflow
modules for each workflow run, so without cached bytecode a worker compiles them from
source every time. Installed packages (the peers' libraries) come with .pyc files from pip,
but editable code (Outlast, this directory) would not: a deployed worker has them too, so
all workers get a cache, outside the checkout."""


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without PYTHONPATH (a peer venv must import only its own packages),
    with the bytecode cache if one is set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if BYTECODE_CACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE_CACHE)
    env.update(extra)
    return env


class WorkerProcess:
    """One worker child process; `pid` for /proc, `stop()` by PID with a grace period."""

    def __init__(
        self, cmd: list[str], env: dict[str, str], cwd: Path, name: str, ready_line: bool
    ) -> None:
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in stop()
            "w+", prefix=f"bench-worker-{name}-", suffix=".log", delete=False
        )
        # Only a worker that announces READY gets a pipe; anything else writes to the log,
        # so a chatty worker can never block on a full pipe.
        out = subprocess.PIPE if ready_line else self.log
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=self.log, text=True, env=env, cwd=cwd)
        self.pid = self.proc.pid

    def log_tail(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-3000:]

    async def wait_line(self, text: str, timeout: float = 120) -> None:
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), timeout)
        if text not in line:
            raise RuntimeError(f"worker did not print {text}: {line!r}\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)


def start_peer_worker(family: str, address: str, tq: str, local_model: bool, env: dict):
    cmd = [str(python_of(family)), str(HERE / "peer_worker.py"), "--family", family]
    cmd += ["--address", address, "--task-queue", tq]
    if local_model:
        cmd.append("--local-model")
    return WorkerProcess(cmd, clean_env(**env), HERE, family, ready_line=True)


def start_outlast_worker(address: str, tq: str, host_id: str, env: dict) -> WorkerProcess:
    """Outlast's production entry point, `python -m worker` (worker.build_workers), so the
    measured worker is wired exactly as deployed: sandbox passthrough, workflow cache,
    heartbeat throttle, interceptors."""
    env = clean_env(TEMPORAL_ADDRESS=address, OUTLAST_TASK_QUEUE=tq, OUTLAST_HOST_ID=host_id, **env)
    cmd = [str(OUTLAST_PYTHON), "-m", "worker"]
    return WorkerProcess(cmd, env, REPO, "outlast", ready_line=False)


async def wait_for_pollers(client: Client, queues: list[tuple[str, int]], timeout=120) -> None:
    """Until every (queue, TaskQueueType) has a poller: `python -m worker` prints nothing when
    it is ready, but the server sees its polls."""
    deadline = asyncio.get_running_loop().time() + timeout
    for name, kind in queues:
        while True:
            req = DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=name),
                task_queue_type=kind,
            )
            resp = await client.workflow_service.describe_task_queue(req)
            if resp.pollers:
                break
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"no poller on {name} after {timeout}s")
            await asyncio.sleep(0.1)


WORKFLOW_QUEUE = TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
ACTIVITY_QUEUE = TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY


@contextlib.contextmanager
def fake_model(script: dict, workdir: Path) -> Iterator[tuple[str, int]]:
    """`outlast fake-model` (Outlast's scripted Anthropic-compatible server) in its own
    process, so it does not share a GIL with any worker; yields (base URL, pid)."""
    path = workdir / "fake-model.yaml"
    path.write_text(yaml.safe_dump(script))
    exe = OUTLAST_PYTHON.parent / "outlast"
    proc = subprocess.Popen(
        [str(exe), "fake-model", "--script", str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        line = proc.stdout.readline().strip()
        if "listening on" not in line:
            raise RuntimeError(f"fake model did not start: {line!r}")
        yield line.rsplit(" ", 1)[-1], proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
