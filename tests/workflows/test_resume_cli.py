"""`outlast resume`: a person goes on with a top-level agent that ended, as a parent's
SendMessage resumes a sub-agent (R66)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError

from outlast.api import resume_task
from outlast.inspect import agent_tree
from outlast.resume import ResumeRefused, last_model_call, resume_agent
from tests.support import (
    Queues,
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    spawn,
    start,
)
from tests.workflows.test_cli_run import cli_env
from tests.workflows.test_plan_mode import EXIT, WRITE_PLAN, wait_for_pending
from workflows.contracts import (
    AgentInput,
    AgentStatus,
    MailMessage,
    StopRequest,
    Workspace,
    host_task_queue,
)
from workflows.pattern_contracts import CoordinatorInput

SCRIPT = {
    "agents": [
        {
            "name": "resumed",
            "match": {
                "last_user_contains": "now check the tests",
                "conversation_contains": ["greet() says hello."],
            },
            # A turn's index is the assistant messages sent: the resumed run's are its own.
            "after_last": "repeat_last",
            "turns": [{"text": "The tests pass too."}],
        },
        {"name": "first", "turns": [{"text": "greet() says hello."}]},
    ]
}


def outlast(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "outlast.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def started_input(client, workflow_id: str) -> AgentInput:
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        (inp,) = await client.data_converter.decode(payloads, [AgentInput])
        return inp
    raise AssertionError("no history")


def busy(model) -> int:
    """The model calls of the scripted agent `busy` (the log has the other requests too)."""
    return sum(r["agent"] == "busy" for r in model.log)


def conversations(model) -> list[str]:
    return [json.dumps(r["body"]["messages"]) for r in model.log if r["outcome"] == "completed"]


async def test_resume_goes_on_from_the_conversation_a_completed_agent_ended_with(
    client, dev_server, git_repo, state_root
):
    """A person whose agent completed had no way to go on with it: `outlast send` said it
    is not running, and a new run started over without the conversation (a user test)."""
    with scripted_model(SCRIPT, log_bodies=True) as model:
        env = cli_env(dev_server, model)
        wf = "cli-resume-1"
        first = outlast(env, "run", "What does greet say?", "--repo", str(git_repo), "--id", wf)
        assert first.returncode == 0, first.stdout + first.stderr
        before = await client.get_workflow_handle(wf).describe()
        done = outlast(env, "resume", wf, "now check the tests")
        transcript = outlast(env, "transcript", wf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"resumed {wf} from the conversation it ended with" in done.stdout
    assert "The tests pass too." in done.stdout
    asked = conversations(model)
    assert len(asked) == 2, asked
    # The second call carried the first run's conversation and the message, once each.
    for said in ("What does greet say?", "greet() says hello.", "now check the tests"):
        assert asked[1].count(said) == 1, (said, asked[1])
    inp = await started_input(client, wf)
    assert inp.run_generation == 2 and inp.prompt == "" and inp.resume_from is not None
    after = await client.get_workflow_handle(wf).describe()
    assert after.run_id != before.run_id and after.status == WorkflowExecutionStatus.COMPLETED
    assert inp.lineage.agent_id, inp.lineage
    ended = await client.get_workflow_handle(wf, run_id=before.run_id).result()
    assert inp.lineage.agent_id == ended["agent_id"]
    assert transcript.returncode == 0, transcript.stdout
    for said in ("What does greet say?", "greet() says hello.", "now check the tests"):
        assert said in transcript.stdout, transcript.stdout
    assert transcript.stdout.index("greet() says hello.") < transcript.stdout.index(
        "The tests pass too."
    )


async def test_resume_serves_the_queue_the_ended_run_was_on(client, dev_server, git_repo):
    """A run started on a task queue of its own (a demo's) was resumed there while `resume`'s
    worker served Outlast's queue: the resumed run waited for good (a review, 2026-12-07)."""
    with scripted_model(SCRIPT) as model:
        env = cli_env(dev_server, model)
        own = Queues(f"own-{uuid.uuid4().hex[:8]}", host_task_queue(env["OUTLAST_HOST_ID"]))
        async with running_workers(client, queues=own):
            handle = await start(client, agent_input("What does greet say?", git_repo, own), own)
            await asyncio.wait_for(handle.result(), 60)
        done = await asyncio.to_thread(outlast, env, "resume", handle.id, "now check the tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The tests pass too." in done.stdout, done.stdout
    assert (await handle.describe()).task_queue == own.task_queue


KILLED = {
    "agents": [
        {
            "name": "resumed",
            "match": {"last_user_contains": "go on, but skip the slow part"},
            "after_last": "repeat_last",
            "turns": [{"text": "Skipped it; done."}],
        },
        {
            "name": "first",
            "turns": [
                {"text": "Listing.", "tool_use": {"name": "Glob", "input": {"pattern": "*"}}},
                {"delay_ms": 60000, "text": "never sent"},
            ],
        },
    ]
}


async def second_model_call(client, handle) -> None:
    """Until the agent's second model call is under way: the first one's completion is in
    its history, and a model call is pending."""
    for _ in range(300):
        pending = (await handle.describe()).raw_description.pending_activities
        if any(p.activity_type.name == "llm.call_model" for p in pending):
            if await last_model_call(client, handle) is not None:
                return
        await asyncio.sleep(0.1)
    raise AssertionError("the second model call never started")


async def test_a_terminated_agent_goes_on_from_its_last_model_call(client, git_repo):
    """No result names a terminated agent's conversation: the resume reads it from the run's
    last model call, as `outlast transcript` does, and the model sees what it had done."""
    with scripted_model(KILLED, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("List the files.", git_repo, queues), queues)
            await second_model_call(client, handle)
            await handle.terminate("the person changed their mind")
            # From code as from the CLI.
            task = await resume_task(client, handle.id, "go on, but skip the slow part")
            result = await asyncio.wait_for(task.result(), 60)
    assert result.status == "completed" and result.final_text == "Skipped it; done."
    assert result.run_generation == 2
    last = conversations(model)[-1]
    # Its first turn and the message; not the call the kill cut short, nor the tool call
    # whose result that call carried (unanswered, it is dropped, as R66 has it).
    assert "Listing." in last and "go on, but skip the slow part" in last
    assert '"tool_use"' not in last
    assert "never sent" not in last


def test_resume_says_what_is_wrong_with_the_id_before_asking_for_a_model_key(dev_server):
    """Without ANTHROPIC_API_KEY, `resume nope` said the key was not set, and only with
    --no-worker that there is no such workflow (a user test, 2026-12-07)."""
    # No credentials of any kind the SDK takes (a key, a token, a header, a profile).
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(TEMPORAL_ADDRESS=dev_server.address, COLUMNS="200", HOME="/nonexistent")
    done = outlast(env, "resume", "nope-2", "more")
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2 and "no workflow with id nope-2" in said, said
    assert "ANTHROPIC_API_KEY" not in said, said


async def test_what_cannot_be_resumed_is_refused_and_nothing_starts(client, git_repo):
    script = {"agents": [{"name": "a", "turns": [{"delay_ms": 60000, "text": "slow"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Wait.", git_repo, queues), queues)
            with pytest.raises(ResumeRefused, match=r"is running: `outlast send "):
                await resume_agent(client, handle.id, "more")
            with pytest.raises(ResumeRefused, match="the message is empty"):
                await resume_agent(client, handle.id, "  ")
            with pytest.raises(ResumeRefused, match="no workflow with id nope-1"):
                await resume_agent(client, "nope-1", "more")
            await handle.terminate()
        # Terminated before its first model call answered: nothing to go on from.
        with pytest.raises(ResumeRefused, match="ended before its first model call answered"):
            await resume_agent(client, handle.id, "more")
    desc = await handle.describe()
    assert desc.status == WorkflowExecutionStatus.TERMINATED


async def test_a_run_refused_at_its_start_is_not_resumed_and_the_refusal_says_why(client, git_repo):
    """It said "ended before its first model call answered" (a user test, 2026-12-07)."""
    async with running_workers(client) as queues:
        workspace = {"root": str(git_repo), "host_queue": queues.host_queue}
        handle = await client.start_workflow(
            "AgentWorkflow",
            {"prompt": "go", "workspace": workspace, "max_turn": 1},
            id=f"refused-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        with pytest.raises(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), 30)
        with pytest.raises(ResumeRefused) as refused:
            await resume_agent(client, handle.id, "more")
    said = str(refused.value)
    assert said.startswith(
        f"{handle.id} was refused at its start (AgentWorkflow input refused: unknown field "
        "max_turn (did you mean max_turns?)"
    ), said
    assert said.endswith("start it again with an input that fits"), said


async def test_an_agent_stopped_before_the_model_answered_is_not_resumed_without_its_task(
    client, git_repo
):
    """Stopped before its first model call, an agent completes with an empty conversation:
    a run from it would have had the message only, the task dropped (a review)."""
    script = {"agents": [{"name": "a", "turns": [{"text": "never asked"}]}]}
    with scripted_model(script) as model:
        queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"host-{uuid.uuid4().hex[:8]}")
        handle = await start(client, agent_input("The task.", git_repo, queues), queues)
        await handle.signal("stop", {"reason": "not now"})
        async with running_workers(client, queues=queues):
            result = await asyncio.wait_for(handle.result(), 60)
            assert result.stopped and result.transcript.head is None
            with pytest.raises(ResumeRefused, match="ended before its first model call answered"):
                await resume_agent(client, handle.id, "go on")
    assert not model.log
    assert (await handle.describe()).run_id == result.run_id


async def test_a_killed_agent_goes_on_with_the_plan_it_wrote(client, git_repo):
    """A killed run left no result to name its plan file: read from its history, the plan
    it wrote is the one the resumed run goes on with, not a new empty file (a review)."""
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "finish the plan"},
                "after_last": "repeat_last",
                "turns": [{"text": "Plan finished."}],
            },
            {"name": "planner", "turns": [{"tool_use": WRITE_PLAN}, {"tool_use": EXIT}]},
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("add X", git_repo, queues, permission_mode="plan")
            handle = await start(client, inp, queues)
            view = await wait_for_pending(handle)
            await handle.terminate("away for the weekend")
            resumed = await resume_agent(client, handle.id, "finish the plan")
            result = await asyncio.wait_for(resumed.handle.result(), 60)
    assert result.final_text == "Plan finished."
    again = await started_input(client, handle.id)
    assert again.plan_file == view.pending.plan_file and again.permission_mode == "plan"
    assert f"Plan file: {view.pending.plan_file}" in conversations(model)[-1]


async def test_a_killed_agent_whose_plan_was_approved_goes_on_in_the_approved_mode(
    client, git_repo
):
    """The run's `PermissionMode` attribute followed the approval (patched waits-marked, in
    the baseline since 2026-12-07): the resumed run goes on in that mode, not in plan mode,
    its start's. A run records the baseline's marker, not the change's own."""
    from tests.workflows.test_pipeline import HOLD
    from tests.workflows.test_stop_and_kill import wait_until_tool_runs

    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "go on"},
                "after_last": "repeat_last",
                "turns": [{"text": "Went on."}],
            },
            {
                "name": "planner",
                "turns": [{"tool_use": WRITE_PLAN}, {"tool_use": EXIT}, {"tool_use": HOLD}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("add X", git_repo, queues, permission_mode="plan")
            handle = await start(client, inp, queues)
            view = await wait_for_pending(handle)
            await handle.signal(
                "approve_plan",
                {"request_id": view.pending.request_id, "target_mode": "acceptEdits"},
            )
            await wait_until_tool_runs(handle, "Bash")
            await handle.terminate("away for the weekend")
            resumed = await resume_agent(client, handle.id, "go on")
            result = await asyncio.wait_for(resumed.handle.result(), 60)
            (git_repo / "released").touch()
    assert result.final_text == "Went on."
    again = await started_input(client, handle.id)
    assert again.permission_mode == "acceptEdits", again.permission_mode


async def test_a_coordinator_that_ended_goes_on_as_a_coordinator(client, git_repo):
    """`outlast run --pattern coordinator` starts a CoordinatorWorkflow, whose input refuses
    an agent input from a client: its next run gets the coordinator's input with `resumed`."""
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {
                    "agent_type": "coordinator",
                    "last_user_contains": "and the docs",
                    "conversation_contains": ["No workers needed."],
                },
                "after_last": "repeat_last",
                "turns": [{"text": "The docs are fine too."}],
            },
            {"name": "first", "turns": [{"text": "No workers needed."}]},
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = CoordinatorInput(
                task="Check the code.",
                workspace=Workspace(root=str(git_repo), host_queue=queues.host_queue),
                config=fast_config(),
            )
            wf = f"coord-resume-{uuid.uuid4().hex[:8]}"
            handle = await client.start_workflow(
                "CoordinatorWorkflow", inp, id=wf, task_queue=queues.task_queue
            )
            first = await asyncio.wait_for(handle.result(), 60)
            task = await resume_task(client, wf, "and the docs")
            result = await asyncio.wait_for(task.result(), 60)
    assert task.pattern == "coordinator"
    assert result.final_text == "The docs are fine too." and result.run_generation == 2
    assert result.agent_id == first["agent_id"]
    last = conversations(model)[-1]
    assert "Check the code." in last and "No workers needed." in last
    desc = await client.get_workflow_handle(wf).describe()
    assert desc.workflow_type == "CoordinatorWorkflow"


SLOW_KID = {
    "agents": [
        {
            "name": "kid",
            "match": {"agent_name": "kid"},
            "turns": [{"delay_ms": 60000, "text": "never"}],
        },
        {
            "name": "resumed",
            "match": {"last_user_contains": "without the helper"},
            "after_last": "repeat_last",
            "turns": [{"text": "Done alone."}],
        },
        {"name": "parent", "turns": [{"tool_use": spawn("kid", "work", False)}]},
    ]
}
"""A parent whose sub-agent `kid` is still in its model call when the parent ends, and
whose resumed run answers "go on without the helper"."""


async def test_the_sub_agents_a_terminated_run_left_running_are_cancelled_first(client, git_repo):
    """A terminated run stops none of its sub-agents (the reaper cancels them later, but not
    once the id runs again); the resumed run does not know them, and would hear of their
    ends as of strangers'. The resume cancels them, and says so (a review)."""
    with scripted_model(SLOW_KID):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            kid = client.get_workflow_handle(f"{handle.id}/kid")
            await wait_for_model_call(kid)
            await handle.terminate("the person changed their mind")
            resumed = await resume_agent(client, handle.id, "go on without the helper")
            result = await asyncio.wait_for(resumed.handle.result(), 60)
            kid_status = (await kid.describe()).status
    assert resumed.cancelled == [kid.id]
    assert result.final_text == "Done alone."
    assert kid_status == WorkflowExecutionStatus.CANCELED


async def test_show_keeps_why_the_killed_run_s_sub_agents_ended_after_a_resume(client, git_repo):
    """Its sub-agents read "stopped by workflow X, which was killed: WORDS"; after a resume
    they read only "stopped by workflow X", as if the run that then completed had stopped
    them (a user test, 2026-12-07): the words are those of the run that cancelled them."""
    with scripted_model(SLOW_KID):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            kid = client.get_workflow_handle(f"{handle.id}/kid")
            await wait_for_model_call(kid)
            await handle.cancel(reason="wrong branch")
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(kid.result(), 30)
            # Closed: a run still closing (its kill keeps the call it cut off) has no words yet.
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 30)
            before = await agent_tree(client, handle.id)
            resumed = await resume_agent(client, handle.id, "go on without the helper")
            await asyncio.wait_for(resumed.handle.result(), 60)
            after = await agent_tree(client, handle.id)
    told = f"reason: stopped by workflow {handle.id}, which was killed: wrong branch"
    assert [c.error for c in before.children] == [told], before.children
    assert after.row.status == "completed"
    assert [c.error for c in after.children] == [told], after.children


async def wait_for_model_call(handle) -> None:
    for _ in range(300):
        with contextlib.suppress(RPCError):
            pending = (await handle.describe()).raw_description.pending_activities
            if any(p.activity_type.name == "llm.call_model" for p in pending):
                return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{handle.id} made no model call")


async def test_show_counts_the_killed_run_of_a_resumed_agent(client, dev_server, git_repo):
    """`show` counted only earlier runs that completed: after a kill and a resume, the
    killed run's turns and tokens were left out, and nothing said there had been one (a user
    test, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(KILLED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("List the files.", git_repo, queues), queues)
            await second_model_call(client, handle)
            await asyncio.sleep(1.5)  # the killed run's time: more than the resumed run's
            await handle.cancel()
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            killed = await client.get_workflow_handle(handle.id).describe()
            task = await resume_task(client, handle.id, "go on, but skip the slow part")
            result = await asyncio.wait_for(task.result(), 60)
            code, out = await cli(dev_server.address, "show", handle.id)
            first = client.get_workflow_handle(handle.id, run_id=killed.run_id)
            killed_output = (await first.query("status", result_type=AgentStatus)).usage.tokens
    assert result.run_generation == 2
    # The killed run's one turn, and the resumed run's own.
    assert code == 0 and "2 runs" in out and f"{1 + result.turns} turns" in out, out
    # Tokens: the latest prompt (it holds the killed run's conversation) and every output;
    # the killed run's whole figure was added (a user test, 2026-12-06).
    tokens = result.usage.total_tokens + killed_output.output_tokens
    assert killed_output.output_tokens > 0 and f" {tokens} tokens" in out, (out, tokens)
    # And its time (the duration was the resumed run's alone: a user test, 2026-12-06).
    killed_ms = (killed.close_time - killed.start_time).total_seconds() * 1000
    shown_s = float(re.search(r"(\d+\.\d)s\b", out.splitlines()[0]).group(1))
    assert shown_s * 1000 >= killed_ms + result.usage.duration_ms - 100, (out, killed_ms)


async def test_ls_lists_a_resumed_agent_once_as_its_latest_run(client, dev_server, git_repo):
    """`ls` listed each run of a resumed agent as a row of its own, the killed run beside the
    one that went on (a user test, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(KILLED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("List the files.", git_repo, queues), queues)
            await second_model_call(client, handle)
            await handle.cancel()
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            task = await resume_task(client, handle.id, "go on, but skip the slow part")
            await asyncio.wait_for(task.result(), 60)
    code, out = await cli(dev_server.address, "ls", "--limit", "500")
    rows = [line for line in out.splitlines() if line.startswith(handle.id)]
    assert code == 0 and len(rows) == 1 and "completed (resumed, run 2)" in rows[0], out
    code, out = await cli(dev_server.address, "ls", "--status", "canceled", "--limit", "500")
    rows = [line for line in out.splitlines() if line.startswith(handle.id)]
    assert code == 0 and len(rows) == 1, out
    assert "canceled (run 1, resumed since)" in rows[0], out
    code, out = await cli(dev_server.address, "ls", "--json", "--limit", "500")
    listed = [json.loads(line) for line in out.splitlines() if handle.id in line]
    assert [(r["status"], r["run"]) for r in listed] == [("completed", 2)], out


CARRIED = {
    "agents": [
        {
            "name": "both",
            "match": {"last_user_contains": "SLOW-MSG check the logs\n\nFAST-MSG and the tests"},
            "after_last": "repeat_last",
            "turns": [{"text": "Checked both."}],
        },
        {
            "name": "slow",
            "match": {"last_user_contains": "SLOW-MSG"},
            "after_last": "repeat_last",  # its conversation holds an answer already
            "turns": [{"delay_ms": 60000, "text": "never sent"}],
        },
        {
            "name": "fast",
            "match": {"last_user_contains": "FAST-MSG"},
            "after_last": "repeat_last",
            "turns": [{"text": "Did only the tests."}],
        },
        {"name": "first", "after_last": "repeat_last", "turns": [{"text": "Listed."}]},
    ]
}


async def test_a_run_killed_in_its_first_call_keeps_its_message_for_the_next(
    client, dev_server, git_repo
):
    """A resumed run killed before its model call answered left no conversation with its
    message in it: the next resume went on from the run before, and the message was gone
    without a word (a user test, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli

    with scripted_model(CARRIED):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("List the files.", git_repo, queues), queues)
            first = await asyncio.wait_for(handle.result(), 60)
            assert first.final_text == "Listed."
            second = await resume_task(client, handle.id, "SLOW-MSG check the logs")
            await wait_for_model_call(second.handle)
            # Any payload is taken (and refused by the workflow): the resume read a string
            # as a message and failed (a review, 2026-12-06).
            await second.handle.signal("send_message", "not a message")
            await second.kill()
            with contextlib.suppress(WorkflowFailureError):
                await second.result()
            # `show` of it now: its latest run answered no call, so the prompt is the first
            # run's (the latest's outputs alone were counted: a review, 2026-12-06).
            tree = await agent_tree(client, handle.id)
            assert tree.runs == 2 and tree.tokens == first.usage.total_tokens, tree
            code, out = await cli(
                dev_server.address, "resume", "--no-worker", handle.id, "FAST-MSG and the tests"
            )
            result = await asyncio.wait_for(client.get_workflow_handle(handle.id).result(), 60)
    assert "had not read its message 'SLOW-MSG check the logs'" in out, out
    # Its figures are its own run's, and said so (they read as the agent's totals).
    assert "in run 3 (`outlast show` adds up every run)" in out, out
    assert result["final_text"] == "Checked both.", result


async def test_ls_lists_another_agent_under_a_reused_id_apart(client, dev_server, git_repo):
    """Only a resumed agent's runs are one row: another agent started under the same id
    (`temporal workflow start` again) is not its resume (a review, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli

    script = {"agents": [{"name": "a", "turns": [{"text": "done"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await asyncio.wait_for(handle.result(), 60)
    again = await client.start_workflow(
        "AgentWorkflow", id=handle.id, task_queue=f"nobody-{uuid.uuid4().hex}"
    )
    try:
        code, out = await cli(dev_server.address, "ls", "--limit", "500")
    finally:
        await again.terminate("test over")
    rows = [line for line in out.splitlines() if line.startswith(handle.id)]
    assert code == 0 and len(rows) == 2, out


async def test_a_resumed_run_no_worker_took_up_is_listed_as_its_run(client, dev_server, git_repo):
    """Its attributes came with its first workflow task: till a worker took it up, `ls` read
    the new run as another agent, a second row beside the ended run (a review, 2026-12-06)."""
    from tests.workflows.test_plan_mode import cli

    script = {"agents": [{"name": "a", "turns": [{"text": "done"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await asyncio.wait_for(handle.result(), 60)
    resumed = await resume_agent(client, handle.id, "and again")  # no worker runs now
    try:
        code, out = await cli(dev_server.address, "ls", "--limit", "500")
    finally:
        await resumed.handle.terminate("test over")
    rows = [line for line in out.splitlines() if line.startswith(handle.id)]
    assert code == 0 and len(rows) == 1 and "running (resumed, run 2)" in rows[0], out


def wait_for_file(name: str) -> dict:
    return {
        "tool_use": {
            "name": "Bash",
            "input": {"command": f"until [ -e {name} ]; do sleep 0.05; done"},
        }
    }


UNDELIVERED = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "turns": [wait_for_file("helper-go"), {"text": "HELPER-RESULT the answer is 42"}],
        },
        {
            "name": "resumed",
            "match": {"conversation_contains": ["what did the helper find?"]},
            "after_last": "repeat_last",
            "turns": [{"text": "unused"}, {"text": "unused"}, {"text": "It found 42."}],
        },
        {
            "name": "main",
            "turns": [
                {"tool_use": spawn("helper", "find the answer", True)},
                wait_for_file("main-go"),
                {"text": "never: the stop ends it first"},
            ],
        },
    ]
}


async def test_a_sub_agent_s_end_that_came_after_a_stop_goes_first_in_the_resume(
    client, dev_server, git_repo
):
    """A background sub-agent's end that came after its parent's stop, before that stop
    took effect, was queued and never read, and the resume did not send it: its result was
    lost (a user test, 2026-12-07)."""
    from tests.workflows.test_agent_control import wait_status
    from tests.workflows.test_plan_mode import cli

    with scripted_model(UNDELIVERED, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: "Bash" in s.current_tools)
            await handle.signal("stop", StopRequest(reason="enough"))
            (git_repo / "helper-go").touch()
            await wait_status(handle, lambda s: s.pending_notifications == 1)
            (git_repo / "main-go").touch()
            first = await asyncio.wait_for(handle.result(), 60)
            code_show, shown = await cli(dev_server.address, "show", handle.id)
            code, out = await cli(
                dev_server.address, "resume", "--no-worker", handle.id, "what did the helper find?"
            )
            again = await asyncio.wait_for(client.get_workflow_handle(handle.id).result(), 60)
    assert first.stopped and len(first.undelivered) == 1, first
    assert "HELPER-RESULT the answer is 42" in first.undelivered[0]
    assert code_show == 0 and "1 background task end went unread (its stop came" in shown, shown
    assert code == 0 and "had not read sub-agent a" in out and "'s end: it goes first" in out, out
    assert '("task helper")\'s end' in out, out  # by what it was asked, not its id alone
    (resumed,) = [r for r in model.log if r["agent"] == "resumed"]
    told = str(resumed["body"]["messages"][-1])
    assert told.index("HELPER-RESULT") < told.index("what did the helper find?"), told
    assert again["final_text"] == "It found 42."


async def kill_with_an_end_queued(client, queues, repo, wf_id: str | None = None):
    """An agent (UNDELIVERED) killed mid-Bash once its helper's end is queued; its handle.
    Also the replay corpus's `agent_killed_undelivered`."""
    from tests.workflows.test_agent_control import wait_status

    handle = await start(client, agent_input("go", repo, queues), queues, wf_id)
    await wait_status(handle, lambda s: "Bash" in s.current_tools)
    (repo / "helper-go").touch()
    await wait_status(handle, lambda s: s.pending_notifications == 1)
    await handle.cancel(reason="enough")
    with contextlib.suppress(WorkflowFailureError):
        await handle.result()
    return handle


async def test_a_sub_agent_s_end_that_came_before_a_kill_goes_first_in_the_resume(
    client, dev_server, git_repo
):
    """The same with a kill: the end, queued while a tool ran, went with the run (a review,
    2026-12-07). The killed run's memo keeps it."""
    from activities.run_history import UNDELIVERED_MEMO
    from tests.workflows.test_plan_mode import cli

    with scripted_model(UNDELIVERED, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await kill_with_an_end_queued(client, queues, git_repo)
            memo = await (await handle.describe()).memo()
            code_show, shown = await cli(dev_server.address, "show", handle.id)
            code, out = await cli(
                dev_server.address, "resume", "--no-worker", handle.id, "what did the helper find?"
            )
            again = await asyncio.wait_for(client.get_workflow_handle(handle.id).result(), 60)
    (end,) = memo[UNDELIVERED_MEMO]
    assert "HELPER-RESULT the answer is 42" in end, end
    assert code_show == 0 and "1 background task end went unread (its kill came" in shown, shown
    assert code == 0 and "had not read sub-agent a" in out and "'s end: it goes first" in out, out
    (resumed,) = [r for r in model.log if r["agent"] == "resumed"]
    told = str(resumed["body"]["messages"][-1])
    assert told.index("HELPER-RESULT") < told.index("what did the helper find?"), told
    assert again["status"] == "completed", again


GOES_ON = {
    "name": "resumed",
    "match": {"conversation_contains": ["go on"]},
    "after_last": "repeat_last",
    "turns": [{"text": "unused"}, {"text": "unused"}, {"text": "Went on."}],
}
"""The run resumed with "go on", after a first run of two model calls."""


async def test_a_message_a_killed_agent_never_read_goes_first_in_the_resume(client, git_repo):
    """Sent while a tool ran, then the kill: the message was in no conversation, and the
    resume went on without it (a user test, 2026-12-07). One its last model call read is
    not sent again."""
    from tests.workflows.test_agent_control import wait_status

    script = {
        "agents": [
            GOES_ON,
            {"name": "main", "turns": [wait_for_file("first-go"), wait_for_file("never")]},
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: s.turn == 1 and "Bash" in s.current_tools)
            await handle.signal("send_message", MailMessage(text="EARLY-MSG"))
            (git_repo / "first-go").touch()
            await wait_status(handle, lambda s: s.turn == 2 and "Bash" in s.current_tools)
            await handle.signal("send_message", MailMessage(text="LATE-MSG"))
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            resumed = await resume_agent(client, handle.id, "go on")
            await asyncio.wait_for(resumed.handle.result(), 60)
    assert resumed.carried == ("LATE-MSG",), resumed.carried
    (call,) = [r for r in model.log if r["agent"] == "resumed"]
    messages = str(call["body"]["messages"])
    assert messages.count("EARLY-MSG") == 1, messages  # read by its second call, once
    told = str(call["body"]["messages"][-1])
    assert told.index("LATE-MSG") < told.index("go on"), told


async def test_a_message_sent_during_a_local_model_call_is_not_taken_as_read(client, git_repo):
    """Made as a local activity, a long model call holds its workflow task, which heartbeats:
    mail delivered meanwhile is in the history before the call's marker, yet not in its
    request (a review, 2026-12-07). The call here outlasts one heartbeat (8 s of the 10 s
    task timeout)."""
    from agents.config import ModelSettings
    from tests.workflows.test_agent_control import wait_status

    slow = {"delay_ms": 10_000, **wait_for_file("never")}
    script = {
        "agents": [
            GOES_ON,
            {"name": "main", "turns": [wait_for_file("first-go"), slow]},
        ]
    }
    model = ModelSettings(heartbeat_timeout_s=30, max_attempts=1, local_activity=True)
    config = fast_config(model=model)
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            handle = await start(client, inp, queues)
            await wait_status(handle, lambda s: s.turn == 1 and "Bash" in s.current_tools)
            (git_repo / "first-go").touch()
            # Well into the second call, which holds the workflow task (a query would wait
            # for it, and the model's log has a call once it is answered).
            await asyncio.sleep(3)
            await handle.signal("send_message", MailMessage(text="DURING-MSG"))
            await wait_status(handle, lambda s: s.turn == 2, timeout=60)
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await handle.result()
            resumed = await resume_agent(client, handle.id, "go on")
            await asyncio.wait_for(resumed.handle.result(), 60)
    assert resumed.carried == ("DURING-MSG",), resumed.carried


async def test_mail_a_continued_run_was_handed_and_never_read_goes_first_in_the_resume(
    client, git_repo
):
    """Mail that came as the run continued as new went on in its carry; killed in the next
    run's first model call, that run read nothing, and the mail was lost (a review,
    2026-12-07)."""
    from agents.config import AgentSettings
    from tests.workflows.test_agent_control import wait_status

    slow = {"delay_ms": 20_000, "text": "never"}
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "go on"},
                "after_last": "repeat_last",
                "turns": [{"text": "Went on."}],
            },
            {"name": "main", "turns": [wait_for_file("first-go"), slow]},
        ]
    }
    config = fast_config(agents=AgentSettings(turns_per_run=1))
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            first = await wait_status(handle, lambda s: "Bash" in s.current_tools)
            await handle.signal("send_message", MailMessage(text="CARRIED-MSG"))
            (git_repo / "first-go").touch()
            latest = client.get_workflow_handle(handle.id)
            # The next run's first call is under way (the first run calls no more).
            await wait_status(latest, lambda s: s.state == "calling_model")
            assert (await latest.describe()).run_id != handle.result_run_id, "no continue"
            await latest.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await latest.result()
            resumed = await resume_agent(client, handle.id, "go on")
            await asyncio.wait_for(resumed.handle.result(), 60)
    assert first.turn == 1
    assert resumed.carried == ("CARRIED-MSG",), resumed.carried
    (call,) = [r for r in model.log if r["agent"] == "resumed"]
    told = str(call["body"]["messages"][-1])
    assert told.index("CARRIED-MSG") < told.index("go on"), told


async def test_a_run_whose_input_never_decoded_is_refused_by_resume_in_a_sentence(
    client, dev_server
):
    """A raw start without a workspace, terminated: `outlast resume` ended in a traceback
    (the converter's InvalidWorkflowInput), and `resume_task` raised that ApplicationError,
    not StartError (a user test, 2026-12-07)."""
    from outlast.runner import StartError
    from tests.workflows.test_plan_mode import cli

    handle = await client.start_workflow(
        "AgentWorkflow", {"prompt": "hello"}, id=f"raw-{uuid.uuid4().hex[:8]}",
        task_queue="nobody-polls",
    )  # fmt: skip
    await handle.terminate("test")
    said = f"{handle.id} never started: its input did not decode (invalid AgentInput: "
    with pytest.raises(StartError, match=re.escape(said)):
        await resume_task(client, handle.id, "go")
    code, out = await cli(dev_server.address, "resume", "--no-worker", handle.id, "go")
    flat = " ".join(out.split())
    assert code == 2 and said in flat and "Traceback" not in out, out


async def test_an_agent_out_of_turns_is_resumed_with_the_turns_asked_for(
    client, dev_server, git_repo
):
    """An agent that ran out of turns went on with the ended run's limit again: `outlast
    resume` had no way to give it more, and `run` did not say how to go on (a user test,
    2026-12-07)."""
    tool = {"tool_use": {"name": "Bash", "input": {"command": "echo step"}}}
    script = {"agents": [{"name": "busy", "after_last": "repeat_last", "turns": [tool]}]}
    with scripted_model(script) as model:
        env = cli_env(dev_server, model)
        wf = f"cli-resume-turns-{uuid.uuid4().hex[:6]}"
        first = outlast(env, "run", "Go.", "--repo", str(git_repo), "--id", wf, "--max-turns", "1")
        calls = busy(model)
        refused = outlast(env, "resume", wf, "go on", "--max-turns", "0")
        more = outlast(env, "resume", wf, "go on", "--max-turns", "3")
        more_calls = busy(model) - calls
        with pytest.raises(TypeError, match=r"resume_task\(\) max_turns: a whole number"):
            await resume_task(client, wf, "go on", max_turns=True)
        before = busy(model)
        again = outlast(env, "resume", wf, "and on")
        again_calls = busy(model) - before
    said = " ".join(first.stdout.split())
    assert first.returncode == 1 and calls == 1, said
    assert f"its turns ran out: `outlast resume {wf} MESSAGE --max-turns N` goes on" in said
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert more.returncode == 1 and more_calls == 3, more.stdout
    assert (await started_input(client, wf)).max_turns == 3
    # Without one, the limit the ended run had: the one asked for last.
    assert again.returncode == 1 and again_calls == 3, again.stdout


async def test_an_agent_whose_definition_is_gone_is_not_resumed(client, git_repo, monkeypatch):
    """Its definition file removed, a resume started a run that failed at once ("Agent type
    'reviewer' not found"), and `transcript` showed no conversation (a user test,
    2026-12-07): refused, nothing started."""
    agents = git_repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nname: reviewer\ndescription: d\n---\nReview.")
    # Its checkout's host is this one: only there can a resume look its definitions up.
    host = f"here-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OUTLAST_HOST_ID", host)
    here = Queues(f"tq-{uuid.uuid4().hex[:8]}", host_task_queue(host))
    with scripted_model(SCRIPT):
        async with running_workers(client, queues=here) as queues:
            inp = agent_input("What does greet say?", git_repo, queues, agent_type="reviewer")
            handle = await start(client, inp, queues)
            await asyncio.wait_for(handle.result(), 60)
            (agents / "reviewer.md").unlink()
            with pytest.raises(ResumeRefused) as refused:
                await resume_agent(client, handle.id, "now check the tests")
            # Nothing started: the latest run is the one that completed.
            assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED
            # Its checkout on another host: not looked up here, as the worker there would.
            monkeypatch.setenv("OUTLAST_HOST_ID", "elsewhere")
            elsewhere = await resume_agent(client, handle.id, "now check the tests")
            with pytest.raises(WorkflowFailureError):
                await asyncio.wait_for(elsewhere.handle.result(), 60)
    said = str(refused.value)
    assert f"{handle.id} cannot go on as a reviewer agent: " in said, said
    assert said.endswith("Restore or fix its definition, then resume it"), said


async def test_an_agent_that_ended_in_a_worktree_is_told_where_its_resume_works(client, git_repo):
    """Its end left the worktree (kept, as it held a change), and the resumed run worked in
    the main checkout while the conversation's last word was "The session now works in the
    worktree": it wrote there, untold (a user test, 2026-12-07)."""
    enter = {"name": "EnterWorktree", "input": {"name": "feat"}}
    write = {"name": "Write", "input": {"file_path": "in_worktree.txt", "content": "x\n"}}
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "go on there"},
                "after_last": "repeat_last",
                "turns": [{"text": "went on"}],
            },
            {
                "name": "first",
                "turns": [{"tool_use": enter}, {"tool_use": write}, {"text": "done in it"}],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Work.", git_repo, queues), queues)
            await asyncio.wait_for(handle.result(), 60)
            resumed = await resume_agent(client, handle.id, "go on there")
            await asyncio.wait_for(resumed.handle.result(), 60)
    sent = json.dumps(model.log[-1]["body"]["messages"][-1])
    kept = git_repo / ".claude" / "worktrees" / "feat"
    assert kept.is_dir() and (kept / "in_worktree.txt").exists()
    assert f"Your last run ended while you worked in the worktree {kept}: it is kept" in sent
    assert f"This run works in {git_repo}, not in the worktree" in sent, sent
