"""Bash with `run_in_background`: a `ShellTaskWorkflow` per command, its notification, its
output file, TaskStop, and the agent's end stopping what it left running (T4, R27, R67)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from activities.tools.bash import BACKGROUND_REFUSED
from agents.config import AgentSettings, ToolSettings
from outlast.client import connect
from tests.activities.test_tool_bash import marker
from tests.support import (
    agent_input,
    crashable_worker,
    fast_config,
    notifications,
    running_workers,
    scripted_model,
    spawn,
    start,
    taken_changes,
    tool_results,
    wait_for,
)
from tests.workflows.test_stop_and_kill import processes_with
from workflows import shells
from workflows.contracts import AgentStatus, ChildSummary
from workflows.shells import ShellEnd


def background(command: str, description: str | None = None) -> dict:
    inp = {"command": command, "run_in_background": True}
    if description:
        inp["description"] = description
    return {"tool_use": {"name": "Bash", "input": inp}}


def shell_id_of(launch: str) -> str:
    assert launch.startswith("Command running in background with ID: b"), launch
    return launch.split("ID: ", 1)[1].split(".", 1)[0]


async def test_a_background_command_notifies_and_its_output_can_be_read(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    background("echo one && sleep 1 && echo two", "count to two"),
                    {"text": "waiting for it"},
                    {"tool_use": {"name": "Read", "input": {"file_path": "{{output_file}}"}}},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{{output_file}}", "content": "forged"},
                        }
                    },
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("count", git_repo, queues), queues)
            result = await handle.result()
            tasks = await handle.query("tasks", result_type=list[ChildSummary])
    assert result.status == "completed" and result.final_text == "done"
    launch, read, write = tool_results(result)
    shell_id = shell_id_of(launch.content)
    assert not launch.is_error and not read.is_error
    assert "one" in read.content and "two" in read.content
    # Its output file is for reading: the agent cannot forge it.
    assert write.is_error and "outside the workspace" in write.content
    (note,) = notifications(result)
    assert f"<task-id>{shell_id}</task-id>" in note and "<status>completed</status>" in note
    assert 'Background command "count to two" completed (exit code 0)' in note
    shell = client.get_workflow_handle(f"{handle.id}/{shell_id}", result_type=ShellEnd)
    end = await shell.result()
    assert end.status == "completed" and end.exit_code == 0
    assert [(t.agent_id, t.agent_type, t.status) for t in tasks] == [
        (shell_id, "shell", "completed")
    ]


async def test_a_failing_command_is_reported_failed_with_its_exit_code(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background("echo broken; exit 3"), {"text": "over"}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("fail", git_repo, queues), queues)
            result = await handle.result()
    (note,) = notifications(result)
    assert "<status>failed</status>" in note
    assert 'Background command "echo broken; exit 3" failed with exit code 3' in note


async def test_task_stop_kills_a_background_command(client, git_repo):
    mark = marker(1201)
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    background(f"echo started && sleep {mark}", "sleep long"),
                    # Stopped once it runs (a stop before its start is another test's).
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {
                                "command": "until grep -q started {{output_file}}; "
                                "do sleep 0.05; done"
                            },
                        }
                    },
                    {"tool_use": {"name": "TaskStop", "input": {"task_id": "{{task_id}}"}}},
                    {"text": "stopped it"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("stop it", git_repo, queues), queues)
            result = await handle.result()
    assert processes_with(f"sleep {mark}") == []
    launch, running, stopped = tool_results(result)
    assert not running.is_error, running.content
    shell_id = shell_id_of(launch.content)
    assert stopped.content.startswith(f'Stopped background command {shell_id} ("sleep long")')
    (note,) = notifications(result)
    assert (
        "<status>killed</status>" in note and 'Background command "sleep long" was stopped' in note
    )
    shell = client.get_workflow_handle(f"{handle.id}/{shell_id}")
    assert (await shell.describe()).status == WorkflowExecutionStatus.CANCELED


async def test_a_signal_to_a_background_command_s_workflow_is_refused_in_a_sentence(
    client, git_repo
):
    """It takes no signal: a `stop` sent by hand (`temporal workflow signal`) was taken
    without a word and never read (a user test, 2026-12-07)."""
    mark = marker(1202)
    hold = {"name": "Bash", "input": {"command": "until [ -e go ]; do sleep 0.05; done"}}
    stop = {"name": "TaskStop", "input": {"task_id": "{{task_id}}"}}
    turns = [background(f"sleep {mark}", "sleep long"), {"tool_use": hold}, {"tool_use": stop}]
    turns.append({"text": "stopped it"})
    script = {"agents": [{"name": "main", "after_last": "repeat_last", "turns": turns}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("stop it", git_repo, queues), queues)

            started: list[ChildSummary] = []
            for _ in range(300):
                tasks = await handle.query("tasks", result_type=list[ChildSummary])
                if started := [t for t in tasks if t.agent_type == "shell"]:
                    break
                await asyncio.sleep(0.1)
            (shell,) = started
            command = client.get_workflow_handle(shell.workflow_id)
            await command.signal("stop", {})
            refused: list[str] = []
            for _ in range(100):
                refused = await command.query("refused_signals", result_type=list[str])
                if refused:
                    break
                await asyncio.sleep(0.1)
            (git_repo / "go").write_text("")
            await asyncio.wait_for(handle.result(), 60)
    assert refused == [
        "signal `stop` refused: ShellTaskWorkflow takes no signals; a cancel (`outlast kill`, "
        "or TaskStop from its agent) stops the command"
    ]


async def test_killing_the_agent_kills_its_background_commands(client, git_repo):
    mark = marker(1202)
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [background(f"sleep {mark}"), {"text": "waiting for it"}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("sleep", git_repo, queues), queues)
            await wait_for(lambda: processes_with(f"sleep {mark}"), interval=0.05)
            await handle.cancel()
            cancelled_at = time.monotonic()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
            while processes_with(f"sleep {mark}") and time.monotonic() - cancelled_at < 10:
                await asyncio.sleep(0.05)
            (stopped,) = await handle.query("tasks", result_type=list[ChildSummary])
            shell = client.get_workflow_handle(stopped.workflow_id)
            for _ in range(100):
                status = (await shell.describe()).status
                if status != WorkflowExecutionStatus.RUNNING:
                    break
                await asyncio.sleep(0.1)
    assert processes_with(f"sleep {mark}") == []
    assert status == WorkflowExecutionStatus.CANCELED


async def test_with_background_tasks_disabled_bash_refuses_it(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background("echo hi"), {"text": "ran nothing"}],
            }
        ]
    }
    config = fast_config(agents=AgentSettings(background_tasks_disabled=True))
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("no", git_repo, queues, config=config)
            result = await (await start(client, inp, queues)).result()
    (refused,) = tool_results(result)
    assert refused.is_error and refused.content == BACKGROUND_REFUSED
    (bash,) = [t for t in model.log[0]["body"]["tools"] if t["name"] == "Bash"]
    assert "command" in bash["input_schema"]["properties"]
    assert "run_in_background" not in bash["input_schema"]["properties"]


async def test_task_output_peeks_and_waits(client, git_repo):
    def task_output(**kw) -> dict:
        return {"tool_use": {"name": "TaskOutput", "input": {"task_id": "{{task_id}}", **kw}}}

    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    background("echo start && sleep 2 && echo end", "slow count"),
                    task_output(block=False),
                    task_output(timeout=20000),
                    {"tool_use": {"name": "TaskOutput", "input": {"task_id": "b-none"}}},
                    {"text": "done"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("count", git_repo, queues), queues)
            result = await handle.result()
            markers = await taken_changes(handle)
    launch, peek, waited, unknown = tool_results(result)
    shell_id = shell_id_of(launch.content)
    assert f"<task_id>{shell_id}</task_id>" in peek.content
    assert "<retrieval_status>not_ready</retrieval_status>" in peek.content
    assert "<task_type>local_bash</task_type>\n<status>running</status>" in peek.content
    assert "<retrieval_status>success</retrieval_status>" in waited.content
    assert "<status>completed</status>\n<exit_code>0</exit_code>" in waited.content
    assert "<output>\nstart\nend\n</output>" in waited.content
    assert unknown.is_error and "No task found with ID: b-none" in unknown.content
    # The wait gave the end: its notification, queued for the same request, is not sent
    # too (R37: a result that went back as the tool result is not notified again).
    assert notifications(result) == []
    assert "task-output-takes-notice" in markers
    # What only the notification said comes with the answer (its summary, a stop's reason).
    assert f"<task-notification>\n<task-id>{shell_id}</task-id>" in waited.content


async def test_a_stop_ends_a_blocking_task_output_wait(client, git_repo):
    """`outlast stop` ends the turn that waits on TaskOutput; it does not wait out the call's
    timeout (two minutes here) for a command that has not ended."""
    mark = marker(1206)
    wait = {"task_id": "{{task_id}}", "timeout": 120_000}
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    background(f"sleep {mark}", "long job"),
                    {"tool_use": {"name": "TaskOutput", "input": wait}},
                    {"text": "never reached: the stop ends the run"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("wait", git_repo, queues), queues)

            async def waiting() -> bool:
                async for e in handle.fetch_history_events():
                    if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
                        return True
                return False

            deadline = time.monotonic() + 30
            while not await waiting():
                assert time.monotonic() < deadline, "TaskOutput never started waiting"
                await asyncio.sleep(0.1)
            await handle.signal("stop")
            stopped_at = time.monotonic()
            result = await asyncio.wait_for(handle.result(), timeout=60)
            took = time.monotonic() - stopped_at
            kinds = [e.event_type async for e in handle.fetch_history_events()]
    assert took < 30, took
    assert result.stopped and result.turns == 2
    assert EventType.EVENT_TYPE_TIMER_CANCELED in kinds
    assert EventType.EVENT_TYPE_TIMER_FIRED not in kinds
    assert len(result.stopped_children) == 1
    await wait_for(lambda: not processes_with(f"sleep {mark}"), timeout=10)


async def test_a_command_whose_output_outgrows_the_cap_is_killed(client, git_repo):
    """A command that writes without end is killed once its output file passes
    `tools.background_output_max_bytes` (Claude Code's 5 GB by default): it must not fill
    the host's disk. The notification and the file's last line say why."""
    mark = marker(1207)
    # ~1.3 MB a second, past the 1 MB cap in about a second.
    command = (
        f": {mark}; while true; do head -c 65536 /dev/zero | tr '\\0' x; echo; sleep 0.05; done"
    )
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background(command, "flood"), {"text": "waiting for it"}],
            }
        ]
    }
    config = fast_config(tools=ToolSettings(background_output_max_bytes=1024 * 1024))
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("flood", git_repo, queues, config=config)
            result = await asyncio.wait_for((await start(client, inp, queues)).result(), 60)
    (note,) = notifications(result)
    assert "<status>killed</status>" in note
    assert 'Background command "flood" was stopped: its output file exceeded 1MB' in note
    assert processes_with(mark) == []
    launch = tool_results(result)[0].content
    output = Path(launch.split("Output is being written to: ", 1)[1].split("\n", 1)[0])
    assert 1024 * 1024 < output.stat().st_size < 64 * 1024 * 1024
    with output.open("rb") as f:
        f.seek(-200, 2)
        tail = f.read().decode()
    assert tail.endswith("\nBackground command killed: its output file exceeded 1MB\n")


async def test_a_command_left_running_after_the_turn_is_stopped_in_time(client, git_repo):
    mark = marker(1203)
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background(f"sleep {mark}", "serve"), {"text": "left it running"}],
            }
        ]
    }
    config = fast_config(agents=AgentSettings(background_command_wait_s=2))
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("serve", git_repo, queues, config=config)
            result = await (await start(client, inp, queues)).result()
    assert processes_with(f"sleep {mark}") == []
    assert result.status == "completed" and result.turns == 3
    (note,) = notifications(result)
    assert "<status>killed</status>" in note
    assert 'Background command "serve" was stopped: still running 2 s after the turn had ended' in (
        note
    )


async def test_a_command_whose_agent_was_terminated_stops_itself(client, git_repo):
    mark = marker(1204)
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [background(f"sleep {mark}"), {"text": "waiting for it"}],
            }
        ]
    }
    config = fast_config(agents=AgentSettings(liveness_check_s=1))
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("sleep", git_repo, queues, config=config), queues
            )
            await wait_for(lambda: processes_with(f"sleep {mark}"), interval=0.05)
            (shell,) = await handle.query("tasks", result_type=list[ChildSummary])
            # Terminated: the agent runs no code, so it cannot stop its commands.
            await handle.terminate("operator")
            end = await client.get_workflow_handle(shell.workflow_id, result_type=ShellEnd).result()
    assert processes_with(f"sleep {mark}") == []
    assert end.status == "killed" and end.error == "its agent had ended"


async def test_a_worker_killed_under_a_background_command_reruns_it_and_says_so(
    dev_server, git_repo
):
    mark = marker(1205)
    # The first run sleeps (and is interrupted); the run after the crash finds `second`.
    command = (
        "echo start >> runs.log; "
        f"if [ ! -f second ]; then touch second; sleep {mark}; fi; "
        "echo end >> runs.log"
    )
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background(command, "run twice"), {"text": "waiting for it"}],
            }
        ]
    }
    config = fast_config(tools=ToolSettings(heartbeat_timeout_s=5, local_tools=False))
    with (
        scripted_model(script) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        client = await connect(dev_server.address)
        handle = await start(
            client, agent_input("run", git_repo, w.queues, config=config), w.queues
        )
        await wait_for(lambda: bool(processes_with(f"sleep {mark}", exact=True)), timeout=30)
        # Crashed while the agent waits, not while its worker holds one of its workflow
        # tasks: that would add the task's timeout, 10 s, to the test and test nothing more.
        for _ in range(300):
            status = await handle.query("status", result_type=AgentStatus)
            if status.state == "waiting":
                break
            await asyncio.sleep(0.1)
        w.crash()
        result = await asyncio.wait_for(handle.result(), timeout=90)
    assert result.status == "completed"
    assert processes_with(f"sleep {mark}") == []
    assert (git_repo / "runs.log").read_text() == "start\nstart\nend\n"
    (note,) = notifications(result)
    assert 'Background command "run twice" completed (exit code 0)' in note
    assert "had already started once" in note


async def test_two_graceful_stops_under_a_background_command_still_let_it_finish(
    dev_server, git_repo
):
    """A rolling deploy stops each worker once: the background command's two attempts were
    spent and it ended `failed`. A graceful stop gives its attempt back."""
    from tests.workflows.test_bash_rerun import command_of, counted_runs, stop_the_worker_running

    mark = marker(1206)
    command = counted_runs(mark, sleeping=2)
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background(command, "run thrice"), {"text": "waiting for it"}],
            }
        ]
    }
    config = fast_config(tools=ToolSettings(heartbeat_timeout_s=5, local_tools=False))
    with (
        scripted_model(script) as model,
        crashable_worker(dev_server.address, model.url) as w,
    ):
        w.start()
        w.start()  # three workers on the same queues
        client = await connect(dev_server.address)
        handle = await start(
            client, agent_input("run", git_repo, w.queues, config=config), w.queues
        )

        def sleepers() -> list[int]:
            return [p for p in processes_with(f"sleep {mark}") if command_of(p)[:5] == "sleep"]

        for _ in range(2):
            await stop_the_worker_running(w, sleepers)
        result = await asyncio.wait_for(handle.result(), timeout=90)
    assert result.status == "completed"
    assert (git_repo / "runs.log").read_text() == "start\nstart\nstart\nend\n"
    (note,) = notifications(result)
    assert 'Background command "run thrice" completed (exit code 0)' in note, note


async def test_task_output_gives_a_background_agent_s_result(client, git_repo):
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [{"delay_ms": 500, "text": "the answer is 42"}],
            },
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("helper", "find the answer", True)},
                    {
                        "tool_use": {
                            "name": "TaskOutput",
                            "input": {"task_id": "helper", "timeout": 20000},
                        }
                    },
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("ask", git_repo, queues), queues)
            result = await handle.result()
    _, output = tool_results(result)
    assert "<retrieval_status>success</retrieval_status>" in output.content
    assert "<task_type>local_agent</task_type>\n<status>completed</status>" in output.content
    assert "the answer is 42" in output.content
    # Once: the model had the helper's whole answer twice, as the tool result and as its
    # notification in the same request.
    assert json.dumps(model.log[-1]["body"]["messages"]).count("the answer is 42") == 1


async def test_a_continued_run_carries_only_the_latest_ended_commands(
    client, git_repo, monkeypatch
):
    """A continue-as-new hands on the latest ended commands, not every one the agent ever
    ran (the carry grew with each; found on the standing list, 2026-12-05)."""
    monkeypatch.setattr(shells, "ENDED_SHELLS_KEPT", 1)  # workflows are passed through
    wait = {"tool_use": {"name": "TaskOutput", "input": {"task_id": "{{task_id}}"}}}
    turns = [t for n in ("one", "two", "three") for t in (background("true", n), wait)]
    script = {"agents": [{"name": "main", "turns": [*turns, {"text": "done"}]}]}
    config = fast_config(agents=AgentSettings(turns_per_run=2))
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("three commands", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            result = await handle.result()
            listed = await handle.query("tasks", result_type=list[ChildSummary])
            runs = [r async for r in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert len(runs) == 4 and result.turns == 7
    assert [t.description for t in listed] == ["three"]
    assert all("<status>completed</status>" in r.content for r in tool_results(result)[1::2])


async def test_a_person_s_kill_of_a_background_command_is_told_as_such(client, git_repo):
    """`outlast kill AGENT/SHELL --reason` read "was stopped" to the agent, as its own
    TaskStop does: it could not tell them apart, nor read why (a user test, 2026-12-07)."""
    from tests.workflows.test_agent_control import wait_status

    mark = marker(1207)
    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [background(f"sleep {mark}", "bg loop"), {"text": "waiting"}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            status = await wait_status(
                handle, lambda s: any(c.status == "running" for c in s.children)
            )
            (shell,) = status.children
            await wait_for(lambda: processes_with(f"sleep {mark}") != [])
            await client.get_workflow_handle(shell.workflow_id).cancel(reason="user kills shell")
            result = await handle.result()
    (note,) = notifications(result)
    assert 'Background command "bg loop" was stopped: killed by the user' in note, note
    assert "reason: user kills shell), not by a TaskStop of yours" in note, note
