"""`outlast demo`: a scripted agent fixes a failing test, end to end with real parts.

Real Temporal dev server, real worker, real tools on a real git checkout, and the real
Anthropic SDK talking over HTTP to the scripted model server; only the model's words are
scripted. The result is checked independently: the demo runs the sample's tests itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from rich.console import Console
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle

from activities.store import make_state_dir, state_dir
from activities.tools.process_groups import settle_kills
from outlast.cli_base import one_address
from outlast.client import connect
from outlast.devserver import DevServer, temporal_binary
from outlast.progress import follow, print_result
from outlast.runner import build_input, start_agent
from outlast.scripted_model import ScriptedModelServer, load_script
from outlast.sigterm import cancel_on_sigterm
from worker import KILLS_GRACE_S, build_workers, host_id
from workflows.contracts import host_task_queue

HERE = Path(__file__).parent
TASK = (
    "The test suite of this repository has a failing test. Find the cause, fix the code "
    "(not the tests), run the tests to confirm, and report what you changed."
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Outlast Demo",
    "GIT_AUTHOR_EMAIL": "demo@outlast.invalid",
    "GIT_COMMITTER_NAME": "Outlast Demo",
    "GIT_COMMITTER_EMAIL": "demo@outlast.invalid",
}


def make_sample_repo(dest: Path) -> Path:
    """A fresh git checkout of the bundled sample, one commit, failing test included."""
    shutil.copytree(HERE / "sample_repo", dest, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "calc"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


def demo_queues(stamp: str) -> tuple[str, str]:
    """(task queue, host id): a task queue only this demo's worker serves, where the run and
    its model calls go. On the shared one, another worker of the server (an `outlast dev`,
    with a real model's key) took the demo's run and answered it with its own model (a user
    test, 2026-12-07). The host's queue stays this host's: its tools run on these files
    whichever worker of the host takes them, and a later `outlast resume` of the demo's agent
    finds its tools served by this host's `outlast worker`."""
    return f"outlast-demo-{stamp}-{uuid.uuid4().hex[:6]}", host_id()


def demo_workers(client: Client, task_queue: str, host: str) -> list:
    return build_workers(client, task_queue=task_queue, host_queue=host_task_queue(host))


async def connect_demo(console: Console, server: DevServer) -> tuple[Client, str | None, bool]:
    """`$TEMPORAL_ADDRESS`, or the embedded dev server (started if it is not running, and
    then True); with the Web UI's address when it is this OUTLAST_HOME's embedded server."""
    if address := os.environ.get("TEMPORAL_ADDRESS"):
        return await connect(), embedded_ui(server, address), False
    if started := server.ensure_running():
        console.print(f"started the embedded Temporal dev server on {server.address}")
    return await connect(server.address), server.ui_url, started


def embedded_ui(server: DevServer, address: str) -> str | None:
    """The Web UI of this OUTLAST_HOME's embedded server if `address` is that server's
    (`outlast server-start --port`): the demo gave no link there (a user test, 2026-12-07)."""
    live, port = server.live_address(), server.live_ui_port()
    if live is None or port is None or one_address(live) != one_address(address):
        return None
    return f"http://{live.rpartition(':')[0]}:{port}"


def tests_pass(repo: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=repo, capture_output=True, text=True
    )
    return done.returncode == 0


async def run_demo(console: Console, *, keep_server: bool = True) -> bool:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = make_state_dir() / "demo" / stamp
    repo = make_sample_repo(base / "repo")
    console.print(f"sample repo: {repo} (tests failing: {not tests_pass(repo)})")
    model = ScriptedModelServer(load_script(HERE / "scenario.yaml"), log_path=base / "model.jsonl")
    with model:
        os.environ["ANTHROPIC_BASE_URL"] = model.url
        os.environ["ANTHROPIC_API_KEY"] = "demo-key-for-the-scripted-model"
        server = DevServer(state_dir=state_dir())
        client, ui, started = await connect_demo(console, server)
        queue, host = demo_queues(stamp)
        handle = await start_agent(
            client,
            build_input(TASK, repo, host_id=host),
            workflow_id=f"outlast-demo-{stamp}",
            task_queue=queue,
        )
        console.print(f"workflow [bold]{handle.id}[/]")
        workers = demo_workers(client, queue, host)
        serving = asyncio.gather(*(w.run() for w in workers))
        try:
            with cancel_on_sigterm():
                result = await follow(handle, console, client)
        finally:
            await end_demo(client, handle, queue)
            for w in workers:
                await w.shutdown()
            with contextlib.suppress(Exception):
                await serving
            await settle_kills(KILLS_GRACE_S)  # a tool cancelled as its command started
    # A server that ran before the demo is someone else's (an `outlast dev`): never stopped.
    kept = keep_server or not started
    return _report(console, result, repo, handle.id, ui, server, kept, queue)


async def end_if_running(handle: WorkflowHandle) -> bool:
    """Terminate the demo's run if the demo stops before the run does (Ctrl-C, an error). It
    would stay in the dev server's database, and the next worker there would carry it on
    with that worker's model settings, a real model's among them. True if it was running."""
    with contextlib.suppress(Exception):
        if (await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
            await handle.terminate(reason="the demo that started it stopped first")
            return True
    return False


SWEEPS = 4
"""Looks at the demo's queue, a short while apart: visibility lists a workflow just started
a moment later."""


async def end_demo(client: Client, handle: WorkflowHandle, task_queue: str) -> None:
    """`end_if_running`, and every workflow still running on the demo's own queue: its
    sub-agents, which no later worker takes up there (a review, 2026-12-07: a stopped
    coordinator demo's workers ran on for good), and any that outlived a completed run."""
    swept = await end_if_running(handle)
    query = f'TaskQueue = "{task_queue}" AND ExecutionStatus = "Running"'
    for sweep in range(SWEEPS):
        found = []
        with contextlib.suppress(Exception):
            found = [wf async for wf in client.list_workflows(query)]
        for wf in found:
            with contextlib.suppress(Exception):
                await client.get_workflow_handle(wf.id, run_id=wf.run_id).terminate(
                    reason="the demo that started it ended"
                )
        if not found and (sweep > 0 or not swept):
            return
        await asyncio.sleep(0.5)


def _report(
    console, result, repo: Path, workflow_id: str, ui, server, keep_server, task_queue
) -> bool:
    if result is not None:
        print_result(result, console)
    passed = tests_pass(repo)
    diff = subprocess.run(["git", "diff", "--stat"], cwd=repo, capture_output=True, text=True)
    console.print(f"\nsample tests now {'[green]pass[/]' if passed else '[red]fail[/]'}")
    console.print(diff.stdout.rstrip())
    where_to_look(console, workflow_id, ui, server, keep_server, task_queue)
    return result is not None and result.status == "completed" and passed


def where_to_look(
    console: Console,
    workflow_id: str,
    ui: str | None,
    server: DevServer,
    keep_server: bool,
    task_queue: str | None = None,
) -> None:
    """The run's id, and where to look at it: the Web UI while the embedded server runs
    (and how to stop that server, which outlives the demo), the history with the CLI. Each
    command names the server and namespace when they are not the defaults: run as
    `TEMPORAL_ADDRESS=... outlast demo`, they went to localhost:7233 (a user test,
    2026-12-07)."""
    address, namespace = os.environ.get("TEMPORAL_ADDRESS"), os.environ.get("TEMPORAL_NAMESPACE")
    elsewhere = address is not None and one_address(address) != "localhost:7233"
    namespace = namespace if namespace and namespace != "default" else None
    link = f"{ui}/namespaces/{namespace or 'default'}/workflows/{workflow_id}"
    console.print(f"\nworkflow id: {workflow_id}")
    if ui and address:
        console.print(f"Web UI:      {link}")
    elif ui and not keep_server and server.stop():
        console.print("stopped the embedded dev server; `outlast dev` brings it back, history kept")
    elif ui:
        console.print(f"Web UI:      {link}")
        console.print(
            f"the embedded dev server keeps running on {server.address} for that: "
            "`outlast server-stop` stops it"
        )
    options = (f" --address {address}" if elsewhere else "") + (
        f" --namespace {namespace}" if namespace else ""
    )
    console.print(f"history:     {temporal_binary()} workflow show{options} -w {workflow_id}")
    if ui and task_queue:
        # The run's own queue, which plain `outlast worker` does not serve; the run has
        # ended, so a worker without the scripted model's key can answer.
        env = (f"TEMPORAL_ADDRESS={address} " if elsewhere else "") + (
            f"TEMPORAL_NAMESPACE={namespace} " if namespace else ""
        )
        console.print(
            "its current details in the Web UI are a query, which a worker on its queue "
            f"answers: `{env}OUTLAST_TASK_QUEUE={task_queue} outlast worker --no-model`"
        )
