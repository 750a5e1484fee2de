"""Starting Outlast without Outlast's CLI: the plain `temporal` CLI with JSON, and the typed
Python API (`outlast.api`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid

import pytest
import temporalio.api.sdk.v1
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError

from outlast.api import NotSupported, StartError, Task, TaskEnded, resume_task, start_task
from outlast.devserver import temporal_binary
from tests.conftest import make_git_repo
from tests.support import Queues, running_workers, scripted_model, taken_changes
from tests.workflows.test_agent_control import wait_status
from tests.workflows.test_plan_mode import APPROVED, cli, wait_for_pending
from workflows import search_attributes as sa
from workflows.agent_handlers import BACKGROUNDED_CHECKED, BLANK_MAIL
from workflows.contracts import AgentResult, AgentStatus


async def temporal(address: str, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        temporal_binary(),
        *args,
        "--address",
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def start_with_cli(address: str, kind: str, queue: str, wf_id: str, inp: str) -> str:
    """`temporal workflow start` exactly as a user types it, JSON input and all."""
    return await temporal(
        address,
        "workflow",
        "start",
        "--type",
        kind,
        "--task-queue",
        queue,
        "--workflow-id",
        wf_id,
        "--input",
        inp,
    )


async def test_the_plain_temporal_cli_starts_signals_and_queries(client, dev_server, git_repo):
    with scripted_model(APPROVED):
        async with running_workers(client) as queues:
            wf_id = f"plain-{uuid.uuid4().hex[:8]}"
            start = {
                "prompt": "add X",
                "workspace": {"root": str(git_repo), "host_queue": queues.host_queue},
                "permission_mode": "plan",
            }
            await start_with_cli(
                dev_server.address, "AgentWorkflow", queues.task_queue, wf_id, json.dumps(start)
            )
            handle = client.get_workflow_handle(wf_id, result_type=AgentResult)
            await wait_for_pending(handle)
            shown = await temporal(
                dev_server.address, "workflow", "query", "--workflow-id", wf_id, "--name", "plan"
            )
            assert '"request_id"' in shown and "plan-1" in shown and "create src/x.py" in shown
            await temporal(
                dev_server.address,
                "workflow",
                "signal",
                "--workflow-id",
                wf_id,
                "--name",
                "approve_plan",
                "--input",
                json.dumps({"request_id": "plan-1"}),
            )
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "implemented the plan"
    assert (git_repo / "src/x.py").read_text() == "X = 1\n"


async def test_the_python_api_starts_and_steers_a_task(client, git_repo):
    host = f"api-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    with scripted_model(APPROVED):
        async with running_workers(client, queues=queues):
            task = await start_task(
                client,
                "add X",
                git_repo,
                task_queue=queues.task_queue,
                host_id=host,
                plan_first=True,
            )
            await wait_for_pending(task.handle)
            assert isinstance(await task.status(), AgentStatus)
            assert await task.approve_plan()
            result = await task.result()
            # Nothing waits, nor ever will: refused as the README says (it returned False).
            with pytest.raises(TaskEnded, match="is not running .completed.; nothing was sent"):
                await task.approve_plan()
            # A Task made on a bare handle, as StartError advises: its result was a dict.
            again = await Task(
                handle=client.get_workflow_handle(task.id), pattern="single"
            ).result()
            ended = await task.status()
    assert result.final_text == "implemented the plan"
    assert ended.state == "finished" and ended.outcome == "completed", ended
    assert isinstance(again, AgentResult) and again == result


def test_a_task_of_a_pattern_that_does_not_exist_is_refused(client):
    """`pattern="tema"` was taken, and its status() asked the fork-join's query."""
    with pytest.raises(
        ValueError, match=r"pattern 'tema' \(did you mean 'team'\?\): one of single"
    ):
        Task(handle=client.get_workflow_handle("x"), pattern="tema")


COORDINATED = {
    "agents": [
        {
            "name": "scout",
            "match": {"agent_name": "scout"},
            "turns": [
                {"tool_use": {"name": "Read", "input": {"file_path": "README.md"}}},
                {"text": "The README is a sample heading.\nSummary: scouted"},
            ],
        },
        {
            "name": "report",
            "match": {"conversation_contains": ["Summary: scouted"]},
            "after_last": "repeat_last",
            "turns": [{"text": "The scout reports: the README is a sample heading."}],
        },
        {
            "name": "wait",
            "match": {"conversation_contains": ["SCOUT-README"]},
            "after_last": "repeat_last",
            "turns": [{"text": "Waiting for the scout."}],
        },
        {
            "name": "launch",
            "after_last": "repeat_last",
            "turns": [
                {
                    "tool_use": {
                        "name": "Agent",
                        "input": {
                            "description": "SCOUT-README",
                            "prompt": "Read README.md and say what it is.",
                            "name": "scout",
                            "phase": "research",
                        },
                    }
                }
            ],
        },
    ]
}


async def test_the_plain_temporal_cli_runs_a_coordinator(client, dev_server, git_repo):
    with scripted_model(COORDINATED):
        async with running_workers(client) as queues:
            wf_id = f"plain-coordinator-{uuid.uuid4().hex[:8]}"
            task = {
                "task": "What is in the README?",
                "workspace": {"root": str(git_repo), "host_queue": queues.host_queue},
            }
            await start_with_cli(
                dev_server.address,
                "CoordinatorWorkflow",
                queues.task_queue,
                wf_id,
                json.dumps(task),
            )
            result = await client.get_workflow_handle(wf_id, result_type=AgentResult).result()
            listed = await temporal(
                dev_server.address,
                "workflow",
                "list",
                "--query",
                f'Pattern="coordinator" AND SessionId="{wf_id}"',
            )
    assert result.status == "completed" and result.agent_type == "coordinator"
    assert result.final_text == "The scout reports: the README is a sample heading."
    assert f"{wf_id}/scout" in listed and "CoordinatorWorkflow" in listed


async def test_a_malformed_start_input_fails_the_workflow_with_the_reason(
    client, dev_server, git_repo
):
    async with running_workers(client) as queues:
        wf_id = f"plain-bad-{uuid.uuid4().hex[:8]}"
        await start_with_cli(
            dev_server.address,
            "CoordinatorWorkflow",
            queues.task_queue,
            wf_id,
            json.dumps({"task": 1, "workspace": {"root": str(git_repo)}}),
        )
        handle = client.get_workflow_handle(wf_id)
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidWorkflowInput" and cause.non_retryable
    assert "invalid CoordinatorInput" in cause.message
    assert "task: Input should be a valid string" in cause.message
    assert "workspace.host_queue: Field required" in cause.message


async def test_a_malformed_input_of_an_internal_workflow_fails_it_at_once(client):
    """Agents start `ShellTaskWorkflow`, but any client can: a malformed input hung it as
    Running, its first workflow task failing on every attempt (a user test)."""
    async with running_workers(client) as queues:
        handle = await client.start_workflow(
            "ShellTaskWorkflow",
            {"shell_id": "b1", "command": ["ls"]},
            id=f"shell-bad-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidWorkflowInput" and cause.non_retryable
    assert cause.message.startswith("invalid ShellTaskInput: command: Input should be a valid")
    assert "output_file: Field required" in cause.message


async def test_a_start_whose_internal_parts_do_not_fit_fails_at_once(client, git_repo):
    """Parts of an input only Outlast's own workflows fill in, sent by a client: an agent's
    `carry` (its continue-as-new's state) and a background command's `ctx` were read in the
    init or by hand, and their ValidationError hung the run as Running."""
    async with running_workers(client) as queues:
        workspace = {"root": str(git_repo), "host_queue": queues.host_queue}
        agent = await client.start_workflow(
            "AgentWorkflow",
            {"prompt": "go", "workspace": workspace, "carry": {"runs": "many"}},
            id=f"carry-bad-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        shell = {
            "shell_id": "b1",
            "command": "ls",
            "description": "list",
            "ctx": {"cwd": "/", "workspace_rot": "/w"},
            "output_file": "/tmp/out",
            "host_queue": queues.host_queue,
            "parent_workflow_id": "nobody",
            "tool_use_id": "t1",
        }
        command = await client.start_workflow(
            "ShellTaskWorkflow",
            shell,
            id=f"ctx-bad-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        causes = []
        for handle in (agent, command):
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
            causes.append(failed.value.cause)
    assert all(c.type == "InvalidAgentInput" and c.non_retryable for c in causes), causes
    assert causes[0].message.startswith(
        "AgentWorkflow input refused: carry is set only by an agent's own continue-as-new, "
        "and this one does not fit ("
    ), causes[0].message
    assert causes[0].message.endswith("); start without it")
    assert causes[1].message.startswith(
        "ShellTaskWorkflow input refused: ctx: workspace_root: Field required"
    ), causes[1].message
    # The key typed is named too: ToolContext drops it (a user test, 2026-12-05).
    assert causes[1].message.endswith(
        "; unknown field workspace_rot (did you mean workspace_root?)"
    ), causes[1].message


@pytest.mark.parametrize("kind", ["AgentWorkflow", "PipelineWorkflow"])
async def test_a_misspelt_start_field_fails_the_workflow_before_any_model_call(
    client, dev_server, git_repo, kind
):
    """pydantic dropped a field the input does not have: `max_turn` ran with no turn limit."""
    workspace = {"root": str(git_repo), "host_queue": "set below"}
    first = {"prompt": "go"} if kind == "AgentWorkflow" else {"task": "go"}
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace["host_queue"] = queues.host_queue
            inp = json.dumps({**first, "workspace": workspace, "max_turn": 1})
            wf_id = f"plain-typo-{uuid.uuid4().hex[:8]}"
            await start_with_cli(dev_server.address, kind, queues.task_queue, wf_id, inp)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(client.get_workflow_handle(wf_id).result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput" and cause.non_retryable
    guess = " (did you mean max_turns?)" if kind == "AgentWorkflow" else ""  # a pipeline has none
    assert cause.message.startswith(f"{kind} input refused: unknown field max_turn{guess} (mis")
    assert cause.details == ({"unknown_fields": ["max_turn"]},)  # for a program to read
    assert not model.log


@pytest.mark.parametrize(
    ("given", "said"),
    [
        # A misspelt `plan` ran without plan mode: free to write.
        ({"permission_mode": "Plan"}, "permission_mode 'Plan' is no mode (did you mean plan?)"),
        ({"permission_mode": "yolo"}, "permission_mode 'yolo' is no mode: one of default, "),
        ({"prompt": " \n "}, "prompt is empty: say what the agent should do"),
        ({"host_queue": ""}, "workspace.host_queue is empty: name the task queue of the worker"),
    ],
)
async def test_a_start_with_a_value_no_run_can_go_on_with_is_refused_at_once(
    client, dev_server, git_repo, given, said
):
    """Each ran: the model refused a blank prompt at the first call, a blank host queue put
    the host steps on the workflow queue, where no worker has them (a user test)."""
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace = {
                "root": str(git_repo),
                "host_queue": given.pop("host_queue", queues.host_queue),
            }
            inp = json.dumps({"prompt": "go", **given, "workspace": workspace})
            wf_id = f"plain-value-{uuid.uuid4().hex[:8]}"
            await start_with_cli(dev_server.address, "AgentWorkflow", queues.task_queue, wf_id, inp)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(client.get_workflow_handle(wf_id).result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput" and cause.non_retryable
    assert cause.message.startswith(f"AgentWorkflow input refused: {said}"), cause.message
    assert not model.log
    # `outlast show` says why (it said `failed`, with an empty agent type before it).
    code, shown = await cli(dev_server.address, "show", wf_id)
    flat = " ".join(shown.split())
    assert code == 0 and f"{wf_id} (single, failed, " in flat, shown
    assert f"AgentWorkflow input refused: {said}" in flat, shown


async def test_a_coordinator_start_with_an_agent_of_the_client_s_is_refused(
    client, dev_server, git_repo
):
    """`agent` is the coordinator's own continue-as-new's: a client that set it ran that
    agent (an Explore, a general-purpose in any mode), no coordinator, past the start's
    checks (a user test)."""
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace = {"root": str(git_repo), "host_queue": queues.host_queue}
            agent = {"prompt": "go", "workspace": workspace, "permission_mode": "bypassPermissions"}
            inp = json.dumps({"task": "go", "workspace": workspace, "agent": agent})
            wf_id = f"coord-agent-{uuid.uuid4().hex[:8]}"
            await start_with_cli(
                dev_server.address, "CoordinatorWorkflow", queues.task_queue, wf_id, inp
            )
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(client.get_workflow_handle(wf_id).result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput" and cause.non_retryable
    assert cause.message.startswith("CoordinatorWorkflow input refused: `agent` is set only by")
    assert not model.log


@pytest.mark.parametrize("kind", ["CoordinatorWorkflow", "AgentWorkflow"])
async def test_a_cron_start_with_a_part_of_the_client_s_is_refused_every_run(
    client, git_repo, kind
):
    """A cron's later runs are continued runs (`continued_run_id` is set) with the client's
    input: the first run refused the coordinator's `agent` (the agent's `carry`), and every
    later one ran that agent (a review), or hung as Running (a user test), 2026-12-05."""
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace = {"root": str(git_repo), "host_queue": queues.host_queue}
            agent = {"prompt": "go", "workspace": workspace}
            inp = (
                {"task": "go", "workspace": workspace, "agent": agent}
                if kind == "CoordinatorWorkflow"
                else {**agent, "carry": {"runs": "many"}}
            )
            handle = await client.start_workflow(
                kind,
                inp,
                id=f"cron-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
                cron_schedule="@every 2s",
            )
            try:
                failed_runs = 0
                for _ in range(150):
                    query = f"WorkflowId = '{handle.id}' AND ExecutionStatus = 'Failed'"
                    failed_runs = len([w async for w in client.list_workflows(query)])
                    if failed_runs >= 2:
                        break
                    await asyncio.sleep(0.2)
            finally:
                await handle.terminate("test over")
    assert failed_runs >= 2
    assert not model.log


BUSY_UNTIL_FITTING = {
    "agents": [
        {
            "name": "read",
            "match": {"conversation_contains": ["FITTING-TEXT"]},
            "after_last": "repeat_last",
            "turns": [{"text": "got it"}],
        },
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [{"tool_use": {"name": "Bash", "input": {"command": "sleep 0.5"}}}],
        },
    ]
}
"""An agent that runs short commands until a message with FITTING-TEXT comes, then ends."""


async def start_busy_agent(client, dev_server, git_repo, queues):
    """BUSY_UNTIL_FITTING's agent, started with the `temporal` CLI and plain JSON."""
    wf_id = f"signals-{uuid.uuid4().hex[:8]}"
    workspace = {"root": str(git_repo), "host_queue": queues.host_queue}
    inp = json.dumps({"prompt": "go", "workspace": workspace})
    await start_with_cli(dev_server.address, "AgentWorkflow", queues.task_queue, wf_id, inp)
    return client.get_workflow_handle(wf_id, result_type=AgentResult)


async def signal_with_cli(dev_server, workflow_id: str, name: str, inputs: list) -> None:
    """`temporal workflow signal`, with an `--input` per item of `inputs` (none: no input)."""
    given = [arg for i in inputs for arg in ("--input", json.dumps(i))]
    await temporal(
        dev_server.address,
        *("workflow", "signal", "--workflow-id", workflow_id, "--name", name),
        *given,
    )


async def test_a_signal_whose_input_does_not_fit_is_refused_where_people_look(
    client, dev_server, git_repo
):
    """Temporal drops a signal whose input does not decode, with a line in the worker's log
    only; the signals people send are checked by their handlers and refused in the status
    query and the details. A good signal after a bad one is carried out as ever."""
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            handle = await start_busy_agent(client, dev_server, git_repo, queues)
            for name, inputs in (
                ("send_message", [{"txt": "hi"}]),
                ("send_message", []),  # no --input at all
                ("stop", [{"reason": 5}]),
                ("stop", [{}, {}]),
                ("approve_plan", [False]),  # not "nothing given"
            ):
                await signal_with_cli(dev_server, handle.id, name, inputs)
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if len(status.refused_signals) == 5:
                    break
                await asyncio.sleep(0.1)
            plan = "input: Input should be a valid dictionary or instance of PlanDecision"
            assert not status.stop_requested
            assert status.refused_signals == [
                "signal `send_message` refused: text: Field required; unknown field txt (did "
                "you mean text?)",
                "signal `send_message` refused: input: Input should be a valid dictionary or "
                "instance of MailMessage",
                "signal `stop` refused: reason: Input should be a valid string",
                "signal `stop` refused: it takes one input, 2 were given",
                f"signal `approve_plan` refused: {plan}",
            ]
            assert not status.stop_requested
            metadata = await handle.query(
                "__temporal_workflow_metadata", result_type=temporalio.api.sdk.v1.WorkflowMetadata
            )
            assert "- signal `send_message` refused: text: Field required" in (
                metadata.current_details
            )
            # The API refuses a blank text block: read in, it failed the agent.
            await signal_with_cli(dev_server, handle.id, "send_message", [{"text": " \n "}])
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if "signal `send_message` refused: the text is empty" in status.refused_signals:
                    break
                await asyncio.sleep(0.1)
            assert status.refused_signals[-1] == "signal `send_message` refused: the text is empty"
            await signal_with_cli(dev_server, handle.id, "send_message", [{"text": "FITTING-TEXT"}])
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.status == "completed" and not result.stopped
    assert result.final_text == "got it"
    assert BLANK_MAIL in await taken_changes(handle)


async def test_a_misspelt_field_and_outlasts_own_signals_are_refused_not_dropped(
    client, dev_server, git_repo
):
    """A field the input does not have is refused (pydantic dropped it: `agentid` moved every
    sync sub-agent to the background, `feedbak` sent a plan back with no feedback); a plan
    decision with no plan waiting says so; the signals Outlast's workflows send each other
    refuse an input that does not fit rather than failing every workflow task."""
    with scripted_model(BUSY_UNTIL_FITTING):
        async with running_workers(client) as queues:
            handle = await start_busy_agent(client, dev_server, git_repo, queues)
            for name, inputs in (
                ("background", [{"agentid": "a1"}]),
                ("reject_plan", [{"feedbak": "use X", "request": "p1"}]),
                ("approve_plan", [{}]),
                ("agent_notification", []),
                ("team_members", [{"members": ["x"]}, {}]),
                # It marked a top-level agent `IsBackground` (a user test, 2026-12-07).
                ("set_backgrounded", [{"extra": 1}]),
            ):
                await signal_with_cli(dev_server, handle.id, name, inputs)
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if len(status.refused_signals) == 6:
                    break
                await asyncio.sleep(0.1)
            assert status.refused_signals == [
                "signal `background` refused: unknown field agentid (did you mean agent_id?); its "
                "fields are agent_id",
                "signal `reject_plan` refused: unknown fields feedbak (did you mean feedback?), "
                "request (did you mean request_id?); its fields are "
                "request_id, approve, feedback, target_mode",
                "signal `approve_plan` refused: no plan is waiting for approval",
                "signal `agent_notification` refused: input: Input should be a valid "
                "dictionary or instance of AgentNotification",
                "signal `team_members` refused: it takes one input, 2 were given",
                "signal `set_backgrounded` refused: this agent has no parent to run in the "
                "background of (to move a running sync sub-agent there, signal `background` "
                "to its parent)",
            ]
            marks = (await handle.describe()).typed_search_attributes
            assert not marks.get(sa.IS_BACKGROUND)
            await handle.signal("background", {"agent_id": "nobody"})
            nobody = "signal `background` refused: no synchronous sub-agent named nobody is running"
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if status.refused_signals[-1] == nobody:
                    break
                await asyncio.sleep(0.1)
            assert status.refused_signals[-1] == nobody
            # A name no handler has was buffered for one that never came: lost, unsaid.
            await signal_with_cli(dev_server, handle.id, "stopp", [{}])
            unknown = (
                "signal `stopp` refused: AgentWorkflow has no such signal (did you mean stop?); "
                "the signals it takes: stop, send_message, background, approve_plan, reject_plan "
                "(and Outlast's own workflows': agent_notification,"
            )
            for _ in range(100):
                status = await handle.query("status", result_type=AgentStatus)
                if status.refused_signals[-1].startswith(unknown):
                    break
                await asyncio.sleep(0.1)
            assert status.refused_signals[-1].startswith(unknown), status.refused_signals
            fitting = {"text": "FITTING-TEXT", "later_field": 1}
            await signal_with_cli(dev_server, handle.id, "send_message", [fitting])
            result = await asyncio.wait_for(handle.result(), 60)
    # send_message stays lenient: Outlast's own workflows send it, maybe from a later release.
    assert result.status == "completed" and result.final_text == "got it"
    assert BACKGROUNDED_CHECKED in await taken_changes(handle)


@pytest.mark.parametrize("pattern", ["fork-join", "verified", "pipeline"])
async def test_what_a_pattern_cannot_do_is_refused_before_anything_is_sent(client, pattern):
    """A fork-join or verified task has no graceful stop, and only agents and teams take
    messages: a signal their workflow has no handler for would be kept unread. The handle
    names no workflow, so anything sent would fail with `not found` instead."""
    task = Task(handle=client.get_workflow_handle(f"none-{uuid.uuid4().hex}"), pattern=pattern)
    with pytest.raises(NotSupported, match=f"a {pattern} task takes no messages"):
        await task.send("hi")
    if pattern != "pipeline":
        with pytest.raises(NotSupported, match="has no graceful stop; use kill"):
            await task.stop()
    # No plan or question of its own: Temporal answered with "Query handler ... not found".
    for ask in (task.plan(), task.approve_plan(), task.reject_plan("no"), task.question()):
        with pytest.raises(NotSupported, match=f"a {pattern} task has no "):
            await ask
    # Each names the three, and a pipeline's what it has instead: it named approve_plan()
    # as the one for an agent (a user test, 2026-12-07).
    with pytest.raises(NotSupported) as refused:
        await task.plan()
    said = str(refused.value)
    assert "plan(), approve_plan() and reject_plan() are for a single agent or a" in said, said
    assert ("decided with decide_stage()" in said) == (pattern == "pipeline"), said


async def test_a_message_or_stop_for_a_task_that_is_not_running_says_so(client):
    """It raised the bare RPCError `workflow not found` / `already completed`."""
    from outlast.api import TaskEnded

    task = Task(handle=client.get_workflow_handle(f"none-{uuid.uuid4().hex}"), pattern="single")
    for call in (task.send("hi"), task.stop(), task.kill()):
        with pytest.raises(TaskEnded, match=f"{task.id} is not running"):
            await call
    # Its result, too (the bare RPCError, a user test, 2026-12-06).
    with pytest.raises(TaskEnded, match=f"{task.id} is not running .*; there is no result"):
        await task.result()


async def test_a_kill_of_a_task_that_ended_says_so(client):
    """The server takes a cancel of a closed workflow without a word: kill() was silent.
    An update to an ended task (a decision, an answer, a team's mail) raised the bare
    RPCError `workflow execution already completed` (a user test, 2026-12-05)."""
    from outlast.api import TaskEnded

    for kind, pattern in (("AgentWorkflow", "single"), ("PipelineWorkflow", "pipeline")):
        handle = await client.start_workflow(
            kind, id=f"ended-{uuid.uuid4().hex}", task_queue=f"nobody-{uuid.uuid4().hex}"
        )
        await handle.terminate(reason="test")
        task = Task(handle=client.get_workflow_handle(handle.id), pattern=pattern)
        with pytest.raises(TaskEnded, match=rf"{task.id} is not running \(terminated\); nothing"):
            await task.kill()
        call = task.answer({"q": "a"}) if pattern == "single" else task.decide_stage("s", True)
        with pytest.raises(TaskEnded, match=rf"{task.id} is not running \(.*\); nothing was sent"):
            await call


async def test_a_coordinator_lists_as_one_before_a_worker_takes_it_up(client, tmp_path):
    """`outlast ls` listed it as `single` (an AgentWorkflow), and `--pattern coordinator`
    missed it, until its first workflow task upserted `Pattern`: the start sets it now."""
    from outlast.listing import list_rows

    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    nobody = f"nobody-{uuid.uuid4().hex}"
    task = await start_task(client, "x", repo, pattern="coordinator", task_queue=nobody)
    rows = []
    for _ in range(50):  # visibility lags the start a little
        rows = [
            r for r in await list_rows(client, pattern="coordinator") if r.workflow_id == task.id
        ]
        if rows:
            break
        await asyncio.sleep(0.2)
    await task.handle.terminate(reason="test")
    assert rows and rows[0].pattern == "coordinator", rows


async def test_a_request_no_worker_answers_raises_not_answered(client, tmp_path):
    """With no worker, an update waited for good (and was applied once one came, after the
    caller had given up), and a query raised the server's bare RPCError (a user test,
    2026-12-07). Both raise NotAnswered now, the update within `answer_timeout`."""
    from datetime import timedelta

    from outlast.api import NotAnswered

    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    nobody = f"nobody-{uuid.uuid4().hex}"
    task = await start_task(client, "x", repo, pattern="pipeline", task_queue=nobody)
    task.answer_timeout = timedelta(seconds=2)
    agent = await start_task(client, "x", repo, task_queue=nobody)
    agent.answer_timeout = timedelta(seconds=2)
    try:
        with pytest.raises(NotAnswered, match=r"the 'decide_stage' update waits on the server"):
            await asyncio.wait_for(task.decide_stage("explore", True), 30)
        with pytest.raises(NotAnswered, match=r"no worker answered the 'pipeline' query"):
            await asyncio.wait_for(task.status(), 60)
        with pytest.raises(NotAnswered, match=r"no worker answered the 'plan' query"):
            await asyncio.wait_for(agent.approve_plan(), 60)
    finally:
        await task.handle.terminate(reason="test")
        await agent.handle.terminate(reason="test")


async def test_a_kill_records_its_reason(client):
    """`kill(reason=)` goes with the cancel: the history and the Web UI show it, and the
    agent's end carries it to its parent (tests/workflows/test_stopped_child_notice.py)."""
    from temporalio.api.enums.v1 import EventType

    handle = await client.start_workflow(
        "AgentWorkflow", id=f"kill-{uuid.uuid4().hex}", task_queue=f"nobody-{uuid.uuid4().hex}"
    )
    await Task(handle=handle, pattern="single").kill(reason="wrong branch")
    asked = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED
    (event,) = [e async for e in handle.fetch_history_events() if e.event_type == asked]
    await handle.terminate(reason="test")
    assert event.workflow_execution_cancel_requested_event_attributes.cause == "wrong branch"


async def test_a_start_on_a_running_id_is_a_start_error(client, tmp_path):
    """It raised the SDK's WorkflowAlreadyStartedError, which the docstring did not name."""
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    wid = f"taken-{uuid.uuid4().hex}"
    await client.start_workflow("AgentWorkflow", id=wid, task_queue=f"nobody-{uuid.uuid4().hex}")
    with pytest.raises(StartError, match=f"workflow_id {wid}: a workflow with that id is running"):
        await start_task(client, "x", repo, workflow_id=wid, task_queue=f"q-{uuid.uuid4().hex}")
    await client.get_workflow_handle(wid).terminate(reason="test")
    # One that ran and ended: as `outlast run --id` (it started a second, unrelated run
    # under the id, which `show` then showed alone; a user test, 2026-12-06).
    ended = (
        f"workflow_id {wid}: a workflow with that id already ran .terminated.; choose another "
        "id .resume_task"
    )
    with pytest.raises(StartError, match=ended):
        await start_task(client, "x", repo, workflow_id=wid, task_queue=f"q-{uuid.uuid4().hex}")


async def test_the_api_s_own_slips_are_named(client, tmp_path):
    """A user test (2026-12-05): `forks="audit a"` was six forks of one letter each, a config
    given as a dict failed as an AttributeError deep inside, and `max_turns=0` was refused
    without naming the field."""
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with pytest.raises(TypeError, match="forks: a list of strings, not one string"):
        await start_task(client, "x", repo, pattern="fork-join", forks="audit a")
    with pytest.raises(StartError, match=r"config: model\.max_tokens: Input should be"):
        await start_task(client, "x", repo, config={"model": {"max_tokens": "many"}})
    with pytest.raises(StartError, match="single: max_turns: Input should be greater than"):
        await start_task(client, "x", repo, max_turns=0)
    # In its arguments' names, not `outlast run`'s options (a user test, 2026-12-06).
    with pytest.raises(StartError, match=f"^repo {tmp_path}/none: no such directory"):
        await start_task(client, "x", tmp_path / "none")
    with pytest.raises(StartError, match="^pattern teams: choose one of"):
        await start_task(client, "x", repo, pattern="teams")
    with pytest.raises(StartError, match="^forks: fork 2 is empty: say what that fork should"):
        await start_task(client, "x", repo, pattern="fork-join", forks=["a", ""])
    with pytest.raises(StartError, match="needs at least one directive in forks"):
        await start_task(client, "x", repo, pattern="fork-join")
    # Arguments of a wrong type failed deep inside as AttributeErrors, or were taken as
    # something else (a user test, 2026-12-07): refused by name.
    for call, said in (
        (start_task(client, None, repo), "task: a string, not NoneType"),
        (start_task(client, b"hi", repo), "task: a string, not bytes"),
        (start_task(client, "x", repo, pattern="fork-join", forks=[1, 2]), "forks: a list of"),
        (start_task(client, "x", repo, pattern="team", teammates=[{"a": 1}]), "teammates: a"),
        (start_task(client, "x", repo, config="{}"), "config: an OutlastConfig or a dict"),
        (start_task(client, "x", repo, workflow_id=""), "workflow_id: a non-empty string"),
        (resume_task(client, "w", 5), "message: a string, not int"),
        (start_task(client, "x", repo, max_turns="3"), "max_turns: a whole number or None"),
        (start_task(client, "x", repo, pattern="verified", max_rounds=2.0), "max_rounds: a whole"),
        (
            start_task(client, "x", repo, plan_first="yes"),
            "plan_first: True, False or None, not 'yes'",
        ),
        (start_task(client, "x", repo, agent_type=["Explore"]), "agent_type: a string or None"),
        (Task(handle=client.get_workflow_handle("w"), pattern="single").answer("Small"), "a dict"),
    ):
        with pytest.raises(TypeError, match=said):
            await call
    # A flag given as None means False, as before those checks (a review, 2026-12-07).
    nobody = f"nobody-{uuid.uuid4().hex}"
    task = await start_task(client, "x", repo, plan_first=None, approve=None, task_queue=nobody)
    await task.handle.terminate(reason="test")


async def test_a_misspelt_option_is_named_with_its_likely_meaning(client, tmp_path):
    with pytest.raises(TypeError, match=r"'max_turn' \(did you mean max_turns\?\)"):
        await start_task(client, "x", tmp_path, max_turn=3)


def test_the_start_error_start_task_raises_is_the_apis_to_catch():
    import outlast.api
    from outlast.runner import StartError

    assert outlast.api.StartError is StartError


async def test_the_api_refuses_what_would_be_dropped_before_anything_is_sent(client):
    """`to` means something to a team only; an empty message and a mode a plan's approval
    cannot continue in are refused too. The handle names no workflow: anything sent would
    fail with `not found` instead."""
    task = Task(handle=client.get_workflow_handle(f"none-{uuid.uuid4().hex}"), pattern="single")
    with pytest.raises(NotSupported, match="`to` names a team's member; this is a single task"):
        await task.send("hi", to="bob")
    with pytest.raises(ValueError, match="an empty message"):
        await task.send("  ")
    team = Task(handle=client.get_workflow_handle(f"none-{uuid.uuid4().hex}"), pattern="team")
    with pytest.raises(ValueError, match="`to` is empty: name a member"):
        await team.send("hi", to="")  # it went to the lead (as `outlast send --to ""` did)
    with pytest.raises(ValueError, match="target_mode 'plan': choose one of default"):
        await task.approve_plan("plan")


NESTED_TYPOS = {
    "AgentWorkflow": (
        {"prompt": "go", "config": {"agents": {"hard_max_turn": 3}}},
        "config.agents.hard_max_turn (did you mean hard_max_turns?)",
    ),
    "PipelineWorkflow": (
        {
            "task": "go",
            "stages": [{"name": "s1", "agent_type": "Explore", "instructions": "x", "modle": "h"}],
        },
        "stages[0].modle (did you mean model?)",
    ),
    "TeamWorkflow": (
        {
            "team_name": "t",
            "lead": {"name": "lead", "prompt": "go"},
            "tasks": [{"subject": "s", "description": "d", "activForm": "doing"}],
        },
        "tasks[0].activForm (did you mean activeForm?)",
    ),
    # The workspace is lenient: pydantic dropped it, and the run had write access.
    "AgentWorkflow-workspace": (
        {"prompt": "go", "workspace": {"read_only": True}},
        "workspace.read_only",
    ),
}


@pytest.mark.parametrize("case", list(NESTED_TYPOS))
async def test_a_typo_inside_the_config_or_a_stage_fails_the_start_naming_it(
    client, dev_server, git_repo, case
):
    """A typo inside a strict nested model failed the input's decoding, which was retried as
    a newer client's: the run stayed Running for good, and `outlast kill` could not end it."""
    kind = case.split("-")[0]
    fields, named = NESTED_TYPOS[case]
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace = {
                "root": str(git_repo),
                "host_queue": queues.host_queue,
                **fields.get("workspace", {}),
            }
            wf_id = f"nested-typo-{uuid.uuid4().hex[:8]}"
            inp = json.dumps({**fields, "workspace": workspace})
            await start_with_cli(dev_server.address, kind, queues.task_queue, wf_id, inp)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(client.get_workflow_handle(wf_id).result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput" and cause.non_retryable
    assert cause.message.startswith(f"{kind} input refused: unknown field {named} (mis"), (
        cause.message
    )
    assert cause.details[0]["unknown_fields"] == [named.split(" (")[0]]
    assert not model.log


@pytest.mark.parametrize("root", ["/nonexistent/outlast-dir", "relative/dir"])
async def test_a_workspace_that_is_not_there_fails_the_start_before_any_model_call(
    client, dev_server, root, caplog
):
    """A raw client's start with a checkout that is not there ran all its turns with every
    tool failing, and a relative one was read against the worker's directory by Bash and
    against itself by Read (a user test, 2026-12-05). The worker logs the refusal in one
    line; it logged the SDK's warning with a full traceback, as for a fault (a user test)."""
    caplog.set_level(logging.INFO)
    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}) as model:
        async with running_workers(client) as queues:
            workspace = {"root": root, "host_queue": queues.host_queue}
            wf_id = f"no-root-{uuid.uuid4().hex[:8]}"
            inp = json.dumps({"prompt": "go", "workspace": workspace})
            await start_with_cli(dev_server.address, "AgentWorkflow", queues.task_queue, wf_id, inp)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(client.get_workflow_handle(wf_id).result(), 30)
            code, said_of_it = await cli(dev_server.address, "transcript", wf_id)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput", cause
    # It said "no conversation yet" of a run that had ended (a user test, 2026-12-06).
    ended = f"{wf_id} has no conversation: it ended (failed) before one began."
    assert code == 0 and ended in " ".join(said_of_it.split()), said_of_it
    said = "is not an absolute path" if root.startswith("relative") else "is not a directory"
    assert "the workspace root" in cause.message and said in cause.message, cause.message
    assert not model.log
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]
    refused = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [m for m in refused if m.startswith("Refused (InvalidAgentInput): ")], refused


@pytest.mark.parametrize(
    ("kind", "needs"),
    [
        ("AgentWorkflow", "prompt, workspace"),
        ("CoordinatorWorkflow", "task, workspace"),
        ("PipelineWorkflow", "task, workspace"),
        ("TeamWorkflow", "team_name, workspace, lead"),
        ("ForkJoinWorkflow", "workspace, directives"),
        ("VerifiedTaskWorkflow", "task, workspace"),
        ("ShellTaskWorkflow", "shell_id, command"),
    ],
)
async def test_a_start_without_an_input_fails_at_once_saying_what_it_needs(client, kind, needs):
    """`temporal workflow start --type AgentWorkflow` without `--input`: the init's or run's
    TypeError failed the workflow task on every attempt, and the workflow hung as Running
    (a user test). It now fails, non-retryable, with what the input needs."""
    async with running_workers(client) as queues:
        handle = await client.start_workflow(
            kind, id=f"no-input-{uuid.uuid4().hex[:8]}", task_queue=queues.task_queue
        )
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 30)
    cause = failed.value.cause
    assert cause.type == "InvalidAgentInput" and cause.non_retryable
    assert cause.message.startswith(
        f"{kind} refused: it was started without an input; it needs a JSON object with {needs}"
    ), cause.message


async def test_a_run_whose_input_never_decoded_is_not_asked_anything(
    client, dev_server, git_repo, caplog
):
    """`show` asked such a run for its figures and `transcript` for its conversation: the
    worker's replay to answer failed each time, with ~20 lines of the SDK's traceback in its
    log ("Expected workflow input"), and `transcript` said so (a user test, 2026-12-05)."""
    from outlast.inspect import agent_tree

    caplog.set_level(logging.INFO)
    async with running_workers(client) as queues:
        handle = await client.start_workflow(
            "AgentWorkflow",
            {"prompt": "hello", "workspace": {"root": str(git_repo)}},
            id=f"undecoded-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), 30)
        tree = await agent_tree(client, handle.id)
        code, out = await cli(dev_server.address, "transcript", handle.id)
        await asyncio.sleep(1)  # a query the worker took would be logged by now
    said = "invalid AgentInput: workspace.host_queue: Field required"
    assert tree.row.status == "failed" and tree.error.startswith(said), tree
    assert code == 2 and f"never started: its input did not decode ({said}" in out, out
    assert "Expected workflow input" not in caplog.text


async def test_a_team_whose_lead_failed_at_its_start_lists_as_failed(client, git_repo):
    """A team with a workspace root that is not there: its members failed at their starts,
    and `outlast ls` and the Web UI listed the team as completed, where an agent or a
    pipeline with that root reads failed (a user test, 2026-12-05). Since its members' types
    are looked up before any starts (patched team-agent-types-checked), the team fails there,
    as a pipeline does, and no member starts."""

    async with running_workers(client) as queues:
        inp = {
            "team_name": "t",
            "workspace": {"root": "/nonexistent/outlast-team", "host_queue": queues.host_queue},
            "lead": {"name": "lead", "prompt": "go"},
        }
        handle = await client.start_workflow(
            "TeamWorkflow",
            inp,
            id=f"team-nowhere-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        with pytest.raises(WorkflowFailureError) as ended:
            await asyncio.wait_for(handle.result(), 60)
        desc = await handle.describe()
    assert "/nonexistent/outlast-team" in str(ended.value.cause), ended.value.cause
    assert desc.status == WorkflowExecutionStatus.FAILED
    assert desc.typed_search_attributes.get(sa.AGENT_STATUS) == "failed"
    with pytest.raises(RPCError):
        await client.get_workflow_handle(f"{handle.id}/lead").describe()


SLOW = {"agents": [{"name": "a", "turns": [{"delay_ms": 60000, "text": "never sent"}]}]}


async def test_a_task_of_another_pattern_than_its_workflow_is_refused(client, git_repo):
    """`Task(handle, pattern=...)` with a pattern its workflow is not of: a query raised
    Temporal's own "expected but not found", and a team's `shutdown` sent to an agent was taken
    and never handled (a user test, 2026-12-06)."""
    host = f"api-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    with scripted_model(SLOW):
        async with running_workers(client, queues=queues):
            task = await start_task(
                client, "wait", git_repo, task_queue=queues.task_queue, host_id=host
            )
            wrong = Task(handle=client.get_workflow_handle(task.id), pattern="team")
            said = rf"{task.id} \(an AgentWorkflow\) is not a team task: it has no 'team' query; "
            with pytest.raises(NotSupported, match=said + "make its Task with pattern='single'"):
                await wrong.status()
            with pytest.raises(NotSupported, match="it has no 'shutdown' signal"):
                await wrong.stop("enough")
            pipeline = Task(handle=client.get_workflow_handle(task.id), pattern="pipeline")
            with pytest.raises(NotSupported, match="it has no 'decide_stage' update"):
                await pipeline.decide_stage("plan", True)
            # Its kill cancelled the workflow (a user test, 2026-12-07).
            with pytest.raises(NotSupported, match="is not a pipeline task; make its Task with"):
                await pipeline.kill("wrong task")
            assert isinstance(await task.status(), AgentStatus)  # its own pattern still is
            assert await task.kill("done") is True
            # A second kill adds nothing, and says so by its answer alone (its reason went
            # nowhere; a warning as well went to the caller's stderr, a user test).
            assert await task.kill("again") is False
            # Closed first: a cancel request that comes during a workflow task is in the
            # history only once that task has completed.
            with pytest.raises(WorkflowFailureError):
                await task.result()
            events = [e async for e in task.handle.fetch_history_events()]
    assert not any(e.HasField("workflow_execution_signaled_event_attributes") for e in events)
    cancels = [
        e.workflow_execution_cancel_requested_event_attributes.cause
        for e in events
        if e.HasField("workflow_execution_cancel_requested_event_attributes")
    ]
    assert cancels == ["done"], cancels


async def test_a_member_s_wrong_pattern_is_refused_with_its_own(client):
    """A team's member is an AgentWorkflow whose `Pattern` is `team`: the refusal advised
    pattern='team', which was refused again (a review, 2026-12-06). No worker: nothing is
    asked of one."""
    from temporalio.common import SearchAttributePair, TypedSearchAttributes

    from workflows import search_attributes as sa

    handle = await client.start_workflow(
        "AgentWorkflow",
        id=f"member-{uuid.uuid4().hex[:8]}/reviewer",
        task_queue=f"nobody-{uuid.uuid4().hex}",
        search_attributes=TypedSearchAttributes([SearchAttributePair(sa.PATTERN, "team")]),
    )
    try:
        task = Task(handle=client.get_workflow_handle(handle.id), pattern="team")
        with pytest.raises(NotSupported, match="make its Task with pattern='single'"):
            await task.status()
    finally:
        await handle.terminate("test over")


@contextlib.asynccontextmanager
async def held_task(client, git_repo):
    """A task started from code whose agent is in a Bash call held until `released` exists
    in the checkout, with its status then."""
    from tests.workflows.test_earlier_children import HELD

    script = {"agents": [{"name": "a", "turns": [{"tool_use": HELD}, {"text": "done"}]}]}
    host = f"api-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    with scripted_model(script):
        async with running_workers(client, queues=queues):
            task = await start_task(
                client, "wait", git_repo, task_queue=queues.task_queue, host_id=host
            )
            yield task, await wait_status(task.handle, lambda s: "Bash" in s.current_tools)


async def test_the_status_of_an_ended_agent_says_how_it_ended(client, git_repo):
    """`status()` said `finished` and nothing more, a killed agent as a completed one."""
    async with held_task(client, git_repo) as (task, running):
        await task.kill(reason="not needed")
        with pytest.raises(WorkflowFailureError):
            await task.result()
        ended = await task.status()
    assert running.outcome is None
    assert ended.state == "finished" and ended.outcome == "killed", ended


async def test_a_message_to_an_agent_being_killed_is_refused(client, dev_server):
    """A run whose cancel is pending reads no more mail: `send` said "message sent", and the
    message was lost. Here no worker takes the kill up, so the run stays that way."""
    from outlast.api import TaskEnded

    handle = await client.start_workflow(
        "AgentWorkflow", id=f"killing-{uuid.uuid4().hex}", task_queue=f"nobody-{uuid.uuid4().hex}"
    )
    await handle.cancel(reason="test")
    code, out = await cli(dev_server.address, "send", handle.id, "one more thing")
    said = " ".join(out.split())
    assert code != 0 and "is being killed (its cleanup is running)" in said, out
    assert "nothing was sent" in said and f'outlast resume {handle.id} "..."' in said, out
    task = Task(handle=client.get_workflow_handle(handle.id), pattern="single")
    with pytest.raises(TaskEnded, match="is being killed .* nothing was sent. .* resume_task"):
        await task.send("one more thing")
    sub = Task(handle=client.get_workflow_handle(handle.id), pattern="single", of="parent")
    with pytest.raises(TaskEnded, match="its parent continues it with SendMessage"):
        await sub.send("one more thing")
    signals = [
        e
        async for e in handle.fetch_history_events()
        if e.HasField("workflow_execution_signaled_event_attributes")
    ]
    assert signals == []
    await handle.terminate(reason="test over")


async def test_a_message_after_a_stop_is_sent_with_a_warning(client, git_repo, caplog, monkeypatch):
    """`outlast send` warns that a stopping agent will not read it; `Task.send` was silent
    (a user test, 2026-12-07)."""
    from datetime import timedelta

    from outlast import kill_pending

    # The status query replays the whole history on an uncached worker: not within 2 s on
    # a loaded machine, and the warning is then left out.
    monkeypatch.setattr(kill_pending, "STOP_QUERY", timedelta(seconds=30))

    async with held_task(client, git_repo) as (task, _):
        await task.stop("enough")
        with caplog.at_level(logging.WARNING, logger="outlast.api"):
            await task.send("one more thing")
        (git_repo / "released").touch()
        result = await task.result()
    warned = [r.getMessage() for r in caplog.records if r.name == "outlast.api"]
    assert any("a stop is pending: it ends after its current turn" in w for w in warned), warned
    assert any("a resume sends it first" in w for w in warned), warned
    assert result.stopped and result.unread_messages == 1, result
