"""`python -m worker`'s exit status: a failed worker is a failed process (a supervisor that
restarts on failure must see it), a SIGTERM a clean stop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from workflows.contracts import host_task_queue

REPO_ROOT = Path(__file__).resolve().parents[2]


PYTHON_M_WORKER = ("-m", "worker")
OUTLAST_WORKER = ("-c", "from outlast.cli import main; main()", "worker")


async def _worker(
    address: str, entry: tuple[str, ...] = PYTHON_M_WORKER, host: str | None = None, **env: str
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *entry,
        cwd=REPO_ROOT,
        env={
            **os.environ,
            "TEMPORAL_ADDRESS": address,
            "OUTLAST_TASK_QUEUE": f"tq-{uuid.uuid4().hex[:8]}",
            "OUTLAST_HOST_ID": host or f"exit-{uuid.uuid4().hex[:6]}",
            "OUTLAST_REAP_INTERVAL_S": "0",
            "ANTHROPIC_API_KEY": "test-key",  # a worker refuses to start without credentials
            **env,
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def test_a_worker_that_fails_exits_non_zero_and_says_why(dev_server):
    proc = await _worker(dev_server.address, TEMPORAL_NAMESPACE="no-such-namespace")
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 1, out.decode()
    assert "Namespace no-such-namespace" in out.decode()


async def polled(client: Client, host: str) -> bool:
    """Whether the worker of `host` polls its tool queue (every entry point serves it)."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=host_task_queue(host)),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )
    return bool((await client.workflow_service.describe_task_queue(request)).pollers)


@pytest.mark.parametrize("entry", [PYTHON_M_WORKER, OUTLAST_WORKER], ids=["python-m-worker", "cli"])
async def test_a_sigterm_is_a_clean_exit(dev_server, client, entry):
    host = f"exit-{uuid.uuid4().hex[:6]}"
    proc = await _worker(dev_server.address, entry, host)
    # Serving: its SIGTERM handler is in place before its first poll.
    deadline = time.monotonic() + 60
    while not await polled(client, host):
        assert proc.returncode is None, "the worker stopped by itself"
        assert time.monotonic() < deadline, "the worker never polled its queue"
        await asyncio.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, out.decode()
