"""`outlast run` as a user runs it: a real process, against a running server and model."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from temporalio.api.enums.v1 import EventType

from tests.support import local_activity, scripted_model

LOOK = {"content": "Find greet", "status": "in_progress", "activeForm": "Finding greet"}
SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Looking.",
                    "tool_use": [
                        {"name": "TodoWrite", "input": {"todos": [LOOK]}},
                        {"name": "Grep", "input": {"pattern": "hello"}},
                    ],
                },
                # Held long enough for the follow's polls to see the todo list.
                {"delay_ms": 1500, "text": "greet() says hello."},
            ],
        }
    ]
}


def cli_env(dev_server, model, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "TEMPORAL_ADDRESS": dev_server.address,
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "k",
        "OUTLAST_HOST_ID": "cli-test",
        "COLUMNS": "200",
        **extra,
    }


def test_run_starts_follows_and_prints_the_answer(dev_server, git_repo, state_root):
    # A definition file that does not load: the in-process worker's warning is one line.
    agents = git_repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "broken.md").write_text("---\nname: broken\ndescription: [unclosed\n---\nHi\n")
    with scripted_model(SCRIPT) as model:
        env = cli_env(dev_server, model)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "outlast.cli",
                "run",
                "What does greet say?",
                "--repo",
                str(git_repo),
                "--id",
                "cli-run-1",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "workflow cli-run-1" in done.stdout
    assert "completed after 2 turns" in done.stdout
    assert "greet() says hello." in done.stdout
    assert "todo Finding greet (0 of 1 done)" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if "broken.md" in line]
    assert warnings and warnings[0].startswith("worker WARNING: agent definition skipped: ")
    assert "'attempt'" not in done.stderr and "workflow_id" not in done.stderr, done.stderr


async def test_model_call_picks_how_the_run_calls_the_model(dev_server, client, git_repo):
    """`--model-call local` reaches the workflow: no model activity on the server, a local
    one per call; the environment's `OUTLAST_MODEL_CALL` gives way to the option."""
    with scripted_model(SCRIPT) as model:
        env = cli_env(dev_server, model, OUTLAST_MODEL_CALL="regular")
        argv = ["run", "What does greet say?", "--repo", str(git_repo), "--id", "cli-run-local"]
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "outlast.cli", *argv, "--model-call", "local"],
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
        finally:
            if proc.returncode is None:
                proc.kill()
    assert proc.returncode == 0, out.decode()
    assert "completed after 2 turns" in out.decode()
    regular, local = [], []
    async for e in client.get_workflow_handle("cli-run-local").fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            regular.append(e.activity_task_scheduled_event_attributes.activity_type.name)
        elif (la := local_activity(e)) is not None:
            local.append(la[0])
    assert "llm.call_model" not in regular
    assert local.count("llm.call_model") == 2


def test_a_run_that_fails_exits_non_zero(dev_server, git_repo, state_root):
    """A script or CI job reads the exit code: a task that did not succeed is not a 0."""
    script = {"agents": [{"name": "main", "turns": [{"error": {"status": 400}}]}]}
    with scripted_model(script) as model:
        done = subprocess.run(
            [sys.executable, "-m", "outlast.cli", "run", "Say hi.", "--repo", str(git_repo)],
            env=cli_env(dev_server, model),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "invalid_request_error" in done.stdout, done.stdout


def test_a_worker_that_stops_ends_the_follow_with_what_to_do(dev_server, git_repo, monkeypatch):
    """The in-process worker fails (here: one whose poller gives up at once): `run` says so
    and how to go on, and exits 1; it polled the workflow for ever, saying nothing."""
    from temporalio.client import Client
    from typer.testing import CliRunner

    from outlast import cli, cli_worker

    class Broken:
        async def run(self) -> None:
            raise RuntimeError("poller failed: permission denied")

        async def shutdown(self) -> None:
            return None

    monkeypatch.setattr(cli_worker.worker_module(), "build_workers", lambda client, **_: [Broken()])
    wf_id = "cli-run-broken-worker"
    out = CliRunner().invoke(
        cli.app,
        ["run", "Say hi.", "--repo", str(git_repo), "--id", wf_id],
        env={"TEMPORAL_ADDRESS": dev_server.address, "ANTHROPIC_API_KEY": "k", "COLUMNS": "200"},
    )

    async def terminate() -> None:  # no worker of another test should ever run it
        client = await Client.connect(dev_server.address)
        await client.get_workflow_handle(wf_id).terminate("test done")

    asyncio.run(terminate())
    assert out.exit_code == 1, out.output
    assert "the worker stopped: poller failed: permission denied" in out.output
    assert f"outlast attach {wf_id}" in out.output


async def test_a_sigterm_stops_run_as_ctrl_c_does(dev_server, client, git_repo):
    """`outlast run` serves workers in its process: on SIGTERM (a supervisor's stop) they are
    shut down as `outlast worker` shuts down, so the running Bash command is killed and its
    tool reported to the server at once, which hands it to the next worker without waiting
    for a heartbeat to time out. The process ended at once, telling nobody (a command outside
    the sandbox ran on after it)."""
    import random
    import signal
    import time

    from tests.support import wait_for
    from tests.workflows.test_terminate import sleepers

    mark = f"1239.{random.randint(10**6, 10**7)}"
    bash = {"name": "Bash", "input": {"command": f"sleep {mark} & wait"}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": bash}, {"text": "done"}]}]}
    with scripted_model(script) as model:
        argv = ["run", "Sleep.", "--repo", str(git_repo), "--id", f"cli-term-{mark}"]
        proc = await asyncio.create_subprocess_exec(
            *[sys.executable, "-m", "outlast.cli", *argv],
            env=cli_env(dev_server, model, OUTLAST_HOST_ID=f"cli-term-{mark}"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            await wait_for(lambda: len(sleepers(mark)) == 1, timeout=60)
            proc.send_signal(signal.SIGTERM)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
            deadline = time.monotonic() + 5
            while sleepers(mark) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            left = sleepers(mark)
        finally:
            if proc.returncode is None:
                proc.kill()
            for pid in sleepers(mark):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGTERM, out.decode()
    assert "stopped (SIGTERM); the workflow goes on" in out.decode(), out.decode()
    assert left == [], "the Bash command outlived the process"
    handle = client.get_workflow_handle(f"cli-term-{mark}")
    (bash_tool,) = (await handle.describe()).raw_description.pending_activities
    await handle.terminate()
    # Reported as it stopped (a heartbeat timeout would take 30 s): the next attempt is due.
    assert bash_tool.attempt == 2 and bash_tool.HasField("last_failure"), bash_tool
