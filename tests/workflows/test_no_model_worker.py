"""`outlast worker --no-model`: a worker without model credentials, on the queue
`OUTLAST_TASK_QUEUE` names. The demo tells its user to start one to see a finished run's
details in the Web UI (a query); `outlast worker` served only Outlast's default queue and
refused to start without a key, so that hint answered nothing (2026-12-07)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from tests.support import (
    CREDENTIAL_VARS,
    FAST_MODEL,
    Queues,
    agent_input,
    fast_config,
    patch_ids,
    running_workers,
    scripted_model,
    start,
)
from tests.workflows.test_plan_mode import cli
from workflows.contracts import AgentResult, AgentStatus

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = {"agents": [{"name": "main", "turns": [{"text": "done, nothing to change"}]}]}


class NoModelWorker:
    """`outlast worker --no-model` in a process of its own, with no model credentials at
    all, serving `queue` and the tool queue of `host`."""

    def __init__(self, address: str, queue: str, host: str, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS}
        env.pop("ANTHROPIC_BASE_URL", None)
        env |= {
            "TEMPORAL_ADDRESS": address,
            "OUTLAST_TASK_QUEUE": queue,
            "OUTLAST_HOST_ID": host,
            "OUTLAST_REAP_INTERVAL_S": "0",
            "HOME": str(home),  # no Anthropic profile of this machine's user either
            "COLUMNS": "300",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "outlast.cli", "worker", "--no-model"],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.said: list[str] = []

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """What it printed up to the line holding `text`."""
        watchdog = threading.Timer(timeout, self.proc.kill)
        watchdog.start()
        try:
            for line in self.proc.stdout:
                self.said.append(line)
                if text in line:
                    return "".join(self.said)
        finally:
            watchdog.cancel()
        raise AssertionError(f"it never said {text!r}: {''.join(self.said)}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _queues() -> tuple[Queues, str]:
    host = f"nomodel-{uuid.uuid4().hex[:6]}"
    return Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}"), host


async def test_a_finished_run_on_its_own_queue_is_answered_by_a_worker_without_a_key(
    dev_server, client: Client, git_repo, tmp_path
):
    queues, host = _queues()
    with scripted_model(SCRIPT):
        async with running_workers(client, queues=queues):
            handle = await start(client, agent_input("look around", git_repo, queues), queues)
            assert (await asyncio.wait_for(handle.result(), 60)).status == "completed"
    worker = NoModelWorker(dev_server.address, queues.task_queue, host, tmp_path)
    try:
        said = worker.wait_for("--no-model:")
        assert f"worker serving task queues {queues.task_queue} and outlast-host-{host}" in said
        status = await asyncio.wait_for(handle.query("status", result_type=AgentStatus), 60)
        assert status.state == "finished" and status.outcome == "completed", status
        assert status.last_text == "done, nothing to change", status
    finally:
        worker.stop()


async def _pending_model_call(handle: WorkflowHandle, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pending in (await handle.describe()).raw_description.pending_activities:
            if pending.activity_type.name == "llm.call_model":
                return pending
        await asyncio.sleep(0.2)
    raise AssertionError("no model call was ever scheduled")


async def test_a_worker_without_a_key_leaves_the_model_call_to_one_that_has_it(
    dev_server, client: Client, git_repo, tmp_path
):
    """It runs the workflow task that schedules the model call, but does not take the call:
    that waits, no attempt spent, until a worker with credentials comes."""
    queues, host = _queues()
    worker = NoModelWorker(dev_server.address, queues.task_queue, host, tmp_path)
    try:
        worker.wait_for("--no-model:")
        handle = await start(client, agent_input("look around", git_repo, queues), queues)
        await _pending_model_call(handle)
        # Long enough for a worker that took it to fail it and for its retry (1 s) to start.
        await asyncio.sleep(4)
        pending = await _pending_model_call(handle)
        assert pending.attempt == 1 and not pending.HasField("last_failure"), pending
        # `show` says why (the worker answers its queries, so nothing else did; a review).
        code, out = await cli(dev_server.address, "show", handle.id)
        said = " ".join(out.split())
        assert code == 0 and f"no worker with model credentials polls {queues.task_queue}" in said
        with scripted_model(SCRIPT):
            async with running_workers(client, queues=queues):
                result = await asyncio.wait_for(handle.result(), 60)
        assert result.status == "completed" and result.final_text == "done, nothing to change"
    finally:
        worker.stop()


async def local_model_call_on_a_worker_without_a_key(
    client: Client, address: str, repo, home: Path, wf_id: str | None = None
) -> tuple[WorkflowHandle, AgentResult, object]:
    """An agent whose model calls are local activities, first taken up by a `--no-model`
    worker alone; then a worker with credentials comes. The end, and the model call that
    waited, as the server listed it."""
    queues, host = _queues()
    local = fast_config(model=FAST_MODEL.model_copy(update={"local_activity": True}))
    worker = NoModelWorker(address, queues.task_queue, host, home)
    try:
        worker.wait_for("--no-model:")
        inp = agent_input("look around", repo, queues, config=local)
        handle = await start(client, inp, queues, wf_id)
        waited = await _pending_model_call(handle)
    finally:
        worker.stop()
    with scripted_model(SCRIPT):
        async with running_workers(client, queues=queues):
            result = await asyncio.wait_for(handle.result(), 60)
    return handle, result, waited


async def test_a_local_model_call_that_came_to_a_worker_without_a_key_waits_for_one_with_it(
    dev_server, client: Client, git_repo, tmp_path
):
    """It was retried as a local activity on that worker (its retries, and the workflow's
    next tasks, stay there through the sticky queue) for the call's whole retry window, then
    the agent failed. It is made again as a regular activity (patched no-model-falls-back),
    which that worker never takes."""
    handle, result, waited = await local_model_call_on_a_worker_without_a_key(
        client, dev_server.address, git_repo, tmp_path
    )
    assert waited.attempt == 1 and not waited.HasField("last_failure"), waited
    assert result.status == "completed" and result.final_text == "done, nothing to change"
    assert "no-model-falls-back" in await patch_ids(handle)
