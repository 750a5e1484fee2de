"""A server without Outlast's search attributes: agents still run; the CLI registers them."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from outlast.client import connect
from outlast.search_setup import missing_search_attributes, register_search_attributes
from tests.support import local_dev_server, scripted_model
from workflows.search_attributes import ALL


@pytest.fixture(scope="module")
def bare_server(state_root: Path):
    with local_dev_server(state_root / "bare", search_attributes=False) as server:
        yield server


def test_run_without_search_attributes_then_register(bare_server, git_repo):
    script = {"agents": [{"name": "main", "turns": [{"text": "hi from a bare server"}]}]}
    with scripted_model(script) as model:
        env = {
            **os.environ,
            "TEMPORAL_ADDRESS": bare_server.address,
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "k",
            "OUTLAST_HOST_ID": "bare",
            "COLUMNS": "200",
        }
        done = subprocess.run(
            [sys.executable, "-m", "outlast.cli", "run", "say hi", "--repo", str(git_repo)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lacks Outlast's search attributes" in done.stdout
    assert "hi from a bare server" in done.stdout


async def test_start_task_without_search_attributes_runs_without_them(bare_server, git_repo):
    """`outlast.api.start_task` makes the CLI's check: on a namespace that lacks Outlast's
    search attributes the task starts without them (its every upsert failed the workflow
    task: the agent never ran), and says so in the log."""
    import uuid

    from outlast.api import start_task
    from tests.support import Queues, running_workers

    client = await connect(bare_server.address)
    assert await missing_search_attributes(client)
    host = f"bare-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    script = {"agents": [{"name": "main", "turns": [{"text": "hi from the API"}]}]}
    with scripted_model(script):
        async with running_workers(client, queues=queues):
            task = await start_task(
                client, "say hi", git_repo, task_queue=queues.task_queue, host_id=host
            )
            result = await asyncio.wait_for(task.result(), 60)
    assert result.status == "completed" and result.final_text == "hi from the API"


def _first_lines(argv: list[str], env: dict[str, str], until: str) -> str:
    """What a worker process prints up to the line holding `until`; then it is stopped."""
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    said: list[str] = []
    # A worker that never prints it would keep the loop reading forever.
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        for line in proc.stdout:
            said.append(line)
            if until in line:
                break
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(timeout=30)
    return "".join(said)


@pytest.mark.parametrize("how", ["outlast worker", "python -m worker"])
def test_a_worker_says_the_namespace_lacks_the_search_attributes(bare_server, how):
    """It said nothing, and a workflow started with them on from code or the temporal CLI
    stalled, its workflow tasks failing with BadSearchAttributes (a user test, 2026-12-05).
    Runs before the test below registers them on this server."""
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": bare_server.address,
        "ANTHROPIC_API_KEY": "k",
        "OUTLAST_HOST_ID": "bare-warn",
        "OUTLAST_REAP_INTERVAL_S": "0",
        "COLUMNS": "300",
    }
    argv = {
        "outlast worker": [sys.executable, "-m", "outlast.cli", "worker"],
        "python -m worker": [sys.executable, "-m", "worker"],
    }[how]
    said = " ".join(_first_lines(argv, env, "BadSearchAttributes").split())
    assert "warning: namespace default lacks Outlast's search attributes (" in said, said
    assert "until `outlast setup` registers them" in said, said


async def test_show_says_why_a_workflow_there_stalls(bare_server, git_repo):
    """A workflow started with search attributes on (as from the temporal CLI) stalls there,
    its workflow task failing, and `show` said only `(single, running)` (a user test,
    2026-12-05). Runs before the test below registers them on this server."""
    import uuid

    from outlast.inspect import agent_tree
    from outlast.tree_text import tree_lines
    from tests.support import Queues, agent_input, running_workers

    client = await connect(bare_server.address)
    host = f"bare-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    lines: list[str] = []
    async with running_workers(client, queues=queues):
        handle = await client.start_workflow(
            "AgentWorkflow",
            agent_input("go", git_repo, queues),
            id=f"stalls-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        try:
            for _ in range(300):
                lines = tree_lines(await agent_tree(client, handle.id))
                if "workflow task has failed" in lines[0]:
                    break
                await asyncio.sleep(0.2)
        finally:
            await handle.terminate("test over")
    assert "its workflow task has failed " in lines[0], lines
    assert "BadSearchAttributes" in lines[0] or "search attribute" in lines[0], lines
    assert lines[0].endswith("`outlast setup` registers them)"), lines


async def test_register_adds_exactly_the_missing_ones(bare_server):
    check = [sys.executable, "-m", "outlast.cli", "search-attributes"]
    env = {**os.environ, "TEMPORAL_ADDRESS": bare_server.address, "COLUMNS": "300"}
    run = functools.partial(subprocess.run, check, env=env, capture_output=True, text=True)
    before = await asyncio.to_thread(run, timeout=60)
    assert before.returncode == 1 and "missing: " in before.stdout, before
    client = await connect(bare_server.address)
    assert set(await missing_search_attributes(client)) == {k.name for k in ALL}
    added = await register_search_attributes(client)
    assert set(added) == {k.name for k in ALL}
    assert await missing_search_attributes(client) == []
    assert await register_search_attributes(client) == []
    after = await asyncio.to_thread(run, timeout=60)
    assert after.returncode == 0 and "all registered" in after.stdout, after
