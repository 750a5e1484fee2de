"""Ending an agent early: `stop` after the turn, cancellation (kill) at once, maxTurns."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowHandle

from activities.heartbeats import HEARTBEAT_INTERVAL_S
from activities.tools.bash import kill_bash_runs
from tests.activities.test_tool_bash import marker
from tests.support import (
    activity_attempts,
    agent_input,
    running_workers,
    scripted_model,
    start,
    wait_for,
)
from worker import HOST_ACTIVITIES
from workflows.contracts import AgentStatus, StopRequest


def processes_with(text: str, exact: bool = False) -> list[int]:
    """Processes whose command line holds `text` (is `text`, with `exact`)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:
                continue
            if cmdline == text if exact else text in cmdline:
                found.append(int(proc.name))
    return found


def left_of(*marks: str) -> list[int]:
    return sorted({pid for mark in marks for pid in processes_with(mark)})


def described(pids: list[int]) -> str:
    """State, parent, group, session and command line of each process, for a failure."""
    lines = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            lines.append(f"{pid}: gone")
            continue
        state, ppid, pgrp, session = stat[0], stat[1], stat[2], stat[3]
        lines.append(f"{pid}: {state} ppid={ppid} pgrp={pgrp} sid={session} {cmdline[:200]!r}")
    return "\n".join(lines)


async def since_the_cancel(handle: WorkflowHandle) -> str:
    """The history from the cancel request on, with seconds since it, for a failure."""
    lines, at = [], None
    async for e in handle.fetch_history_events():
        t = e.event_time.ToDatetime().timestamp()
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
            at = t
        if at is not None:
            attrs = e.activity_task_scheduled_event_attributes.activity_type.name
            payloads = e.activity_task_completed_event_attributes.result.payloads
            data = payloads[0].data.decode()[:120] if payloads else ""
            failure = e.activity_task_failed_event_attributes.failure.message[:120]
            name = EventType.Name(e.event_type).removeprefix("EVENT_TYPE_")
            fields = (f"{t - at:6.2f}", str(e.event_id), name, attrs, data, failure)
            lines.append(" ".join(f for f in fields if f))
    return "\n".join(lines)


async def wait_until_tool_runs(handle, tool: str) -> None:
    for _ in range(300):
        try:
            status = await handle.query("status", result_type=AgentStatus)
            if tool in status.current_tools:
                return
        except Exception:  # noqa: BLE001 - not picked up yet
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"{tool} never ran")


async def test_cancel_kills_the_running_bash_tree(client, git_repo):
    first, second = marker(1001), marker(1002)
    command = f"sleep {first} & sleep {second} & wait"
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": command}}},
                    {"text": "never reached"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("sleep", git_repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            sleeps = [f"sleep {first}", f"sleep {second}"]
            for _ in range(50):
                if all(processes_with(s, exact=True) for s in sleeps):
                    break
                await asyncio.sleep(0.1)
            assert all(processes_with(s, exact=True) for s in sleeps)
            cancelled_at = time.monotonic()
            await handle.cancel()
            # The sleeps, the shell and bubblewrap: every command line that holds a mark. Timed
            # from the cancel, before the result, which also waits for the run to close.
            while left_of(first, second) and time.monotonic() - cancelled_at < 5:
                await asyncio.sleep(0.05)
            gone_after = time.monotonic() - cancelled_at
            with pytest.raises(WorkflowFailureError):
                await handle.result()
    left = left_of(first, second)
    assert left == [], f"{described(left)}\n{await since_the_cancel(handle)}"
    # Tools heartbeat every 5 s, so the cancel could not reach the activity this soon: the
    # run's kill activity stopped the command on the host.
    assert gone_after < 2.0, await since_the_cancel(handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    assert ("tool.bash_kill", 1) in await activity_attempts(handle)


async def test_a_host_without_the_kill_still_kills_at_the_next_heartbeat(client, git_repo):
    """Mid-deploy, the host's worker may be one from before `tool.bash_kill`: the kill fails
    there (not registered) and the command ends at its next heartbeat, as before the kill."""
    mark = marker(1004)
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": f"sleep {mark}"}}},
                    {"text": "never reached"},
                ],
            }
        ]
    }
    older_host = [a for a in HOST_ACTIVITIES if a is not kill_bash_runs]
    with scripted_model(script):
        async with running_workers(client, host_activities=older_host) as queues:
            handle = await start(client, agent_input("sleep", git_repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            await wait_for(lambda: processes_with(f"sleep {mark}"), interval=0.05)
            cancelled_at = time.monotonic()
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
            ended_after = time.monotonic() - cancelled_at
    assert processes_with(f"sleep {mark}") == []
    assert ended_after < HEARTBEAT_INTERVAL_S + 3, ended_after
    assert (await handle.describe()).status == WorkflowExecutionStatus.CANCELED
    failed = [
        e.activity_task_failed_event_attributes.failure.message
        async for e in handle.fetch_history_events()
        if e.HasField("activity_task_failed_event_attributes")
    ]
    assert len(failed) == 1 and "tool.bash_kill" in failed[0] and "not registered" in failed[0]


async def test_stop_signal_ends_after_the_current_turn(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "text": "working",
                        # Long enough that the stop surely lands while it runs.
                        "tool_use": {"name": "Bash", "input": {"command": "sleep 3"}},
                    },
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("loop", git_repo, queues), queues)
            await wait_until_tool_runs(handle, "Bash")
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await handle.result()
            ended = await handle.query("status", result_type=AgentStatus)
    assert result.status == "completed" and result.stopped
    assert result.turns == 1 and result.final_text == "working"
    # The query says what the end did: it named the last turn's Bash as running, and that
    # turn's usage (its duration the model call's), a user test (2026-12-07).
    assert ended.state == "finished" and ended.outcome == "stopped", ended
    assert ended.current_tools == [] and ended.usage == result.usage, ended
    assert result.usage.duration_ms >= 3000, result.usage
    names = [n for n, _ in await activity_attempts(handle)]
    assert names.count("llm.call_model") == 1 and names.count("tool.bash") == 1


async def test_max_turns_stops_without_another_model_call(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    {"text": "again", "tool_use": {"name": "Glob", "input": {"pattern": "*.md"}}},
                ],
            }
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("loop", git_repo, queues, max_turns=2), queues)
            result = await handle.result()
            ended = await handle.query("status", result_type=AgentStatus)
    assert result.max_turns_reached and result.turns == 2 and result.status == "completed"
    assert ended.outcome == "max_turns" and ended.current_tools == [], ended
    assert len(model.log) == 2
