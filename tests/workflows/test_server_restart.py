"""The dev server SIGKILLed while a tool runs, right after it acknowledged a signal
(reliability row 2): on the same SQLite file it comes back, the workers reconnect by
themselves, the task completes and the acknowledged message is not lost."""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.config import OutlastConfig, ToolSettings
from outlast.client import connect
from outlast.devserver import DevServer
from tests.support import (
    FAST_MODEL,
    agent_input,
    free_port,
    running_workers,
    scripted_model,
    start,
    wait_for,
)
from workflows.contracts import AgentStatus, MailMessage

pytestmark = pytest.mark.reliability

COMMAND = "sleep 3; echo ran >> out.log"
SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "tool_use": {
                        "name": "Bash",
                        "input": {"command": "sleep 3; echo ran >> out.log"},
                    }
                },
                {"text": "finished"},
            ],
        }
    ]
}


async def running_tool(handle) -> bool:
    try:
        status = await handle.query("status", result_type=AgentStatus)
    except Exception:  # noqa: BLE001 - not picked up yet
        return False
    return "Bash" in status.current_tools


async def scheduled_activities(handle) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        async for e in handle.fetch_history_events()
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


async def test_server_sigkill_during_a_tool_loses_no_acknowledged_signal(tmp_path, git_repo):
    server = DevServer(
        state_dir=tmp_path / "temporal", host="127.0.0.1", port=free_port(), headless=True
    )
    proc = server.start(detach=False)
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=10))
    try:
        with scripted_model(SCRIPT, log_bodies=True) as model:
            client = await connect(server.address)
            async with running_workers(client) as queues:
                handle = await start(
                    client, agent_input("go", git_repo, queues, config=config), queues
                )
                for _ in range(100):
                    if await running_tool(handle):
                        break
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError("the Bash call never started")
                await handle.signal("send_message", MailMessage(text="NOTE-BEFORE-KILL", id="n1"))
                proc.kill()  # acknowledged a moment ago; the Bash is still sleeping
                proc.wait()
                await asyncio.sleep(1)
                proc = server.start(detach=False)
                # The same workers and client: they reconnect to the restarted server.
                await wait_for(lambda: len(model.log) >= 2, timeout=90)
                result = await asyncio.wait_for(handle.result(), timeout=90)
    finally:
        proc.kill()
        proc.wait()
    assert result.status == "completed" and result.final_text == "finished"
    requests = [json.dumps(r["body"]["messages"]) for r in model.log if r["outcome"] == "completed"]
    assert sum(r.count("NOTE-BEFORE-KILL") for r in requests[-1:]) == 1
    runs = (git_repo / "out.log").read_text().splitlines()
    # The command ran once, or (if its completion was lost with the server) once more after
    # its heartbeat stopped, and then the model was told so.
    assert len(runs) == 1 or (len(runs) == 2 and "had already started once" in requests[-1])


async def test_a_follow_waits_through_a_server_restart_and_says_so(tmp_path, git_repo):
    """`outlast attach` ended with "the Temporal server refused: tcp connect error" (exit 2)
    when the server was away for more than about ten seconds, and the SDK core's gRPC retry
    warnings, colours and all, were mixed into its output (a user test, 2026-12-05)."""
    import os
    import sys

    server = DevServer(
        state_dir=tmp_path / "temporal", host="127.0.0.1", port=free_port(), headless=True
    )
    proc = server.start(detach=False)
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 2"}}},
                    {"text": "FINISHED-AFTER-RESTART"},
                ],
            }
        ]
    }
    config = OutlastConfig(model=FAST_MODEL, tools=ToolSettings(heartbeat_timeout_s=10))
    follow = None
    try:
        with scripted_model(script):
            client = await connect(server.address)
            async with running_workers(client) as queues:
                handle = await start(
                    client, agent_input("go", git_repo, queues, config=config), queues
                )
                follow = await asyncio.create_subprocess_exec(
                    *[sys.executable, "-m", "outlast.cli", "attach", handle.id],
                    env={**os.environ, "TEMPORAL_ADDRESS": server.address, "COLUMNS": "200"},
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT,
                )
                # It follows (it has printed), and the agent is in its Bash call: from the
                # history, as a status query (a replay) on a loaded machine could miss the
                # 2 s call (CI, 2026-12-07).
                first = await asyncio.wait_for(follow.stdout.readline(), timeout=30)
                for _ in range(300):
                    if "tool.bash" in await scheduled_activities(handle):
                        break
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError("the Bash call never started")
                proc.kill()
                proc.wait()
                await asyncio.sleep(25)  # well past when the SDK gives a call up (~10-15 s)
                proc = server.start(detach=False)
                out, _ = await asyncio.wait_for(follow.communicate(), timeout=120)
    finally:
        if follow is not None and follow.returncode is None:
            follow.kill()
        proc.kill()
        proc.wait()
    text = (first + out).decode()
    assert follow.returncode == 0, text
    assert "lost the Temporal server" in text and "reached the Temporal server again" in text
    assert "FINISHED-AFTER-RESTART" in text, text
    assert "retried" not in text and "\x1b[" not in text, text  # no core log lines
