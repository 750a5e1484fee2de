"""`python -m worker`'s exit status: a failed worker is a failed process (a supervisor that
restarts on failure must see it), a SIGTERM a clean stop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


async def _worker(address: str, **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "worker",
        cwd=REPO_ROOT,
        env={
            **os.environ,
            "TEMPORAL_ADDRESS": address,
            "OUTLAST_TASK_QUEUE": f"tq-{uuid.uuid4().hex[:8]}",
            "OUTLAST_HOST_ID": f"exit-{uuid.uuid4().hex[:6]}",
            "OUTLAST_REAP_INTERVAL_S": "0",
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


async def test_a_sigterm_is_a_clean_exit(dev_server):
    proc = await _worker(dev_server.address)
    await asyncio.sleep(8)  # imports, connection, pollers
    assert proc.returncode is None, "the worker stopped by itself"
    proc.send_signal(signal.SIGTERM)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, out.decode()
