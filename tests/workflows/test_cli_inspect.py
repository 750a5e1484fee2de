"""`outlast ls`, `show`, `send`, `stop`, `kill` against a real server, in a subprocess as a
person runs them; user mistakes get exit code 2 and a sentence, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from outlast.inspect import agent_tree
from outlast.resume import resume_agent
from outlast.silence import NO_WORKER_REPLAY
from outlast.tree_text import tree_lines
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    followed_until,
    listed,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
    wait_for,
)
from tests.workflows.test_plan_mode import cli
from workflows.contracts import StopRequest


async def test_ls_and_show_describe_a_finished_tree(client, dev_server, git_repo):
    script = {
        "agents": [
            {"name": "kid", "match": {"agent_name": "kid"}, "turns": [{"text": "kid says hi"}]},
            {
                "name": "main",
                "turns": [{"tool_use": spawn("kid", "say hi", False)}, {"text": "ok"}],
            },
        ]
    }
    wf_id = f"insp-{uuid.uuid4().hex[:8]}"
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues, wf_id)
            await handle.result()
    code, out = await cli(dev_server.address, "ls", "--json", "--limit", "200")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    mine = [r for r in rows if r["workflow_id"] == wf_id]
    assert mine and mine[0]["status"] == "completed" and mine[0]["pattern"] == "single"
    assert not any(r["workflow_id"] == f"{wf_id}/kid" for r in rows)  # top level only
    code, out = await cli(dev_server.address, "show", wf_id, "--json")
    assert code == 0, out
    tree = json.loads(out)
    assert tree["row"]["status"] == "completed" and tree["turns"] == 2
    assert tree["tokens"] > 0 and tree["agent_type"] == "general-purpose"
    (kid,) = tree["children"]
    assert kid["row"]["workflow_id"] == f"{wf_id}/kid" and kid["turns"] == 1
    code, out = await cli(dev_server.address, "show", wf_id)
    assert code == 0 and f"{wf_id}/kid" in out and "2 turns, 1 tool use," in out


async def test_send_and_stop_reach_a_running_agent(client, dev_server, git_repo):
    # Short commands until the model has read the message, a longer one after: the stop
    # always lands while the agent still works, however long the CLI takes to start.
    script = {
        "agents": [
            {
                "name": "read",
                "match": {"conversation_contains": ["PLEASE-ALSO-CHECK"]},
                "after_last": "repeat_last",
                "turns": [{"tool_use": {"name": "Bash", "input": {"command": "sleep 3"}}}],
            },
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [{"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}}],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            code, out = await cli(dev_server.address, "send", handle.id, "PLEASE-ALSO-CHECK")
            assert code == 0, out
            # Stop once the model has read the message (a stop first would leave it unread).
            await wait_for(lambda: any("PLEASE-ALSO-CHECK" in json.dumps(r) for r in model.log))
            # `show` on a running agent: its figures so far, from its status query.
            code, out = await cli(dev_server.address, "show", handle.id, "--json")
            tree = json.loads(out)
            assert code == 0 and tree["row"]["status"] == "running", out
            assert tree["turns"] >= 1 and tree["tokens"] > 0, out
            assert tree["outcome"] in ("calling_model", "running_tools"), out
            code, out = await cli(dev_server.address, "stop", handle.id, "--reason", "enough")
            assert code == 0, out
            result = await asyncio.wait_for(handle.result(), 60)
    assert result.stopped
    sent = [json.dumps(r["body"]["messages"]) for r in model.log if r["outcome"] == "completed"]
    assert any("PLEASE-ALSO-CHECK" in s for s in sent)


async def test_a_stop_with_mail_waiting_ends_and_counts_the_mail_unread(
    client, dev_server, git_repo
):
    script = {
        "agents": [
            {
                "name": "resumed",
                "match": {"last_user_contains": "LATE-NOTE\n\ngo on"},
                "after_last": "repeat_last",
                "turns": [{"text": "Read the note."}],
            },
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 8"}}},
                    {"text": "never"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for(lambda: len(model.log) == 1)
            await handle.signal("stop", StopRequest(reason="first"))
            # A second stop said what the first had (a user test, 2026-12-06).
            code, again = await cli(
                dev_server.address, "stop", handle.id, "--reason", "enough for today"
            )
            assert code == 0 and "to stop again: a stop was requested already" in again, again
            await handle.signal("stop", StopRequest())  # no reason: the last one given stays
            # `send` said only "message sent" (the same user test).
            code, sent = await cli(dev_server.address, "send", handle.id, "LATE-NOTE")
            result = await asyncio.wait_for(handle.result(), 60)
            code_show, shown = await cli(dev_server.address, "show", handle.id)
            calls = len(model.log)
            # The resume sends the unread message first (it was gone: the same user test).
            resumed = await resume_agent(client, handle.id, "go on")
            again_result = await asyncio.wait_for(resumed.handle.result(), 60)
    assert result.stopped and result.unread_messages == 1 and result.run_generation == 1
    assert calls == 1, "the model is not called after a stop"
    assert resumed.carried == ("LATE-NOTE",) and again_result.final_text == "Read the note."
    assert code == 0 and "a stop is pending: it ends after its current turn without" in sent
    assert f'once it has ended, `outlast resume {handle.id} "..."` sends it first' in sent
    # The stop's reason and the unread message, as a kill's reason is shown.
    assert code_show == 0 and "stopped, " in shown and "reason: enough for today" in shown
    assert "1 message went unread (its stop came before its next turn)" in shown, shown


async def test_a_kill_with_mail_waiting_counts_the_mail_unread(client, dev_server, git_repo):
    """A message sent while a tool ran, then a kill: `show` said nothing of it, where it
    counts a stopped run's (a user test, 2026-12-07)."""
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 30"}}},
                    {"text": "never"},
                ],
            },
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for(lambda: len(model.log) == 1)
            code, sent = await cli(dev_server.address, "send", handle.id, "LATE-NOTE")
            assert code == 0, sent
            await handle.cancel(reason="enough")
            with pytest.raises(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 30)
            code_show, shown = await cli(dev_server.address, "show", handle.id)
        # Its worker gone, nothing replays it: it read as if it had spent nothing, and as if
        # no mail had waited (`unread_messages: 0`; a user test, 2026-12-07).
        unknown = await agent_tree(client, handle.id)
    assert code_show == 0 and "1 message went unread (its kill came before its next turn)" in (
        shown
    ), shown
    assert unknown.turns is None and unknown.unread_messages is None, unknown
    assert unknown.unknown == NO_WORKER_REPLAY, unknown
    assert NO_WORKER_REPLAY in tree_lines(unknown)[0], tree_lines(unknown)


async def test_mistakes_are_refused_with_a_sentence(client, dev_server, git_repo):
    code, out = await cli(dev_server.address, "show", "no-such-workflow")
    assert code == 2 and "no workflow no-such-workflow" in out and "Traceback" not in out
    code, out = await cli(dev_server.address, "stop", "no-such-workflow")
    assert code == 2 and "outlast ls" in out
    code, out = await cli(dev_server.address, "ls", "--status", "sleeping")
    assert code == 2 and "choose one of running" in out
    script = {"agents": [{"name": "main", "turns": [{"text": "done"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
    events_before = (await handle.describe()).raw_description.workflow_execution_info.history_length
    code, out = await cli(dev_server.address, "send", handle.id, "hello")
    assert code == 2 and "is not running (completed): a message reaches only" in out, out
    said = " ".join(out.split())
    assert f'`outlast resume {handle.id} "..."` goes on with it from the conversation' in said
    assert f"`outlast transcript {handle.id}` shows" in said
    # Every steering command on the finished run is refused with a sentence, and none of
    # them adds an event to its history.
    for command in (["stop", handle.id], ["kill", handle.id], ["approve", handle.id],
                    ["reject", handle.id, "--feedback", "no"]):  # fmt: skip
        code, out = await cli(dev_server.address, *command)
        assert code == 2 and "Traceback" not in out, (command, out)
        assert handle.id in out or "not running" in out or "nothing" in out, (command, out)
    described = await handle.describe()
    assert described.raw_description.workflow_execution_info.history_length == events_before


async def test_steering_a_workflow_that_cannot_take_it_is_refused(client, dev_server):
    """A stop to a workflow with no graceful stop (a background command's, or not Outlast's)
    would sit unread in its history, and `--to` means nothing to a lone agent: both are
    refused, and nothing is sent."""
    other = await client.start_workflow(
        "ShellTaskWorkflow", id=f"shell-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    code, out = await cli(dev_server.address, "stop", other.id)
    assert code == 2 and "is a ShellTaskWorkflow, which has no graceful stop" in out, out
    # A verified task's refusal names the README's way to stop it (it named only kill).
    verified = await client.start_workflow(
        "VerifiedTaskWorkflow", id=f"vt-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    code, out = await cli(dev_server.address, "stop", verified.id)
    await verified.terminate(reason="test")
    flat = " ".join(out.split())
    assert code == 2 and f"stop the implementer: `outlast stop {verified.id}/implementer`" in flat
    # A fork-join's refusals point at its forks, which are agents (they named only kill; a
    # user test, 2026-12-07).
    forks = await client.start_workflow(
        "ForkJoinWorkflow", id=f"fj-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    code, out = await cli(dev_server.address, "stop", forks.id)
    flat = " ".join(out.split())
    assert (
        code == 2
        and f"A fork stops after its current turn: `outlast stop {forks.id}/fork-1`" in flat
    )
    code, out = await cli(dev_server.address, "send", forks.id, "hi")
    await forks.terminate(reason="test")
    flat = " ".join(out.split())
    assert code == 2 and f"Its forks are agents: `outlast send {forks.id}/fork-1 ...`" in flat
    agent = await client.start_workflow(
        "AgentWorkflow", id=f"lone-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    code, out = await cli(dev_server.address, "send", agent.id, "hi", "--to", "bob")
    assert code == 2 and "--to names a team's member" in out, out
    for handle in (other, agent):
        described = await handle.describe()
        assert described.raw_description.workflow_execution_info.history_length == 2
        await handle.terminate("test done")


async def test_run_with_the_id_of_a_running_workflow_says_to_attach(client, dev_server, git_repo):
    running = await client.start_workflow(
        "AgentWorkflow", id=f"taken-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    try:
        code, out = await cli(
            dev_server.address, "run", "t", "--repo", str(git_repo), "--id", running.id,
            "--no-worker",
        )  # fmt: skip
        assert code == 2 and f"outlast attach {running.id}" in out and "Traceback" not in out
    finally:
        await running.terminate("test done")


async def test_run_starts_on_the_queue_its_workers_serve(client, dev_server, git_repo):
    """`OUTLAST_TASK_QUEUE` names the queue `outlast worker` and `dev` serve: `run` started
    on `outlast` all the same, where none of them polled (a review, 2026-12-07)."""
    queue, wf_id = f"own-{uuid.uuid4().hex[:8]}", f"queued-{uuid.uuid4().hex[:8]}"
    # And says at once that no worker polls it, as `attach` does: it waited in silence.
    waits = f"no worker polls {queue}, the task queue of {wf_id}: it waits until one does."
    said = await followed_until(
        dev_server.address, waits, "run", "t", "--repo", str(git_repo), "--id",
        wf_id, "--no-worker", env={"OUTLAST_TASK_QUEUE": queue},
    )  # fmt: skip
    handle = client.get_workflow_handle(wf_id)
    try:
        assert waits in " ".join(said.split()), said
        assert (await handle.describe()).task_queue == queue, said
    finally:
        await handle.terminate("test done")


async def test_run_with_the_id_of_a_closed_workflow_or_a_childs_id_is_refused(
    client, dev_server, git_repo
):
    """A closed run's id started a second run silently beside it (`outlast ls` showed two,
    `show` only the new one); `a/b` looked like a child's id; found by a user test."""
    ended = await client.start_workflow(
        "AgentWorkflow", id=f"ended-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
    )
    await ended.terminate("over")
    for given, said in (
        (ended.id, f"--id {ended.id}: a workflow with that id already ran (terminated)"),
        ("a/b", "--id a/b: `/` joins a workflow's id to its children's"),
        (" ", "--id is empty"),
    ):
        code, out = await cli(
            dev_server.address, "run", "t", "--repo", str(git_repo), "--id", given,
            "--no-worker",
        )  # fmt: skip
        assert code == 2 and said in " ".join(out.split()) and "Traceback" not in out, out
    runs = [w async for w in client.list_workflows(f'WorkflowId = "{ended.id}"')]
    assert len(runs) == 1


async def test_run_in_a_namespace_that_does_not_exist_is_one_sentence(dev_server, git_repo):
    """And so is every other command that asks the server: `ls` and `search-attributes`
    ended in a traceback."""
    commands = [
        ["run", "t", "--repo", str(git_repo), "--no-worker"],
        ["ls"],
        ["search-attributes"],
    ]
    for command in commands:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "outlast.cli", *command,
            env={**os.environ, "TEMPORAL_ADDRESS": dev_server.address,
                 "TEMPORAL_NAMESPACE": "no-such-namespace", "COLUMNS": "200"},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        out = (await proc.communicate())[0].decode()
        assert proc.returncode == 2 and out.startswith("error: "), (command, out)
        assert "Traceback" not in out and "no-such-namespace" in out, (command, out)


async def test_show_counts_what_a_failed_stage_spent(client, dev_server, git_repo):
    """A stage that failed left no result: `show` reads its figures from its run's `status`
    query, which a worker answers by replaying the closed run."""
    from tests.workflows.test_pipeline import FAILING_PLAN, pipeline_input, start_pipeline

    with scripted_model(FAILING_PLAN):
        async with running_workers(client) as queues:
            handle = await start_pipeline(client, queues, pipeline_input(git_repo, queues))
            await handle.result()
            code, out = await cli(dev_server.address, "show", handle.id, "--json")
    assert code == 0, out
    stages = {kid["row"]["workflow_id"]: kid for kid in json.loads(out)["children"]}
    # Why the pipeline failed (it said `completed, failed` and no more).
    assert json.loads(out)["error"].startswith("stage plan failed"), out
    plan = stages[f"{handle.id}/plan"]
    assert plan["row"]["status"] == "failed"
    assert plan["tool_uses"] == 1 and plan["tokens"] > 0 and plan["turns"] == 1, plan
    # `ls` says the pipeline failed, though its workflow completed (it said `completed`).
    from workflows import search_attributes as sa

    def ended(rows) -> bool:
        return bool(rows) and rows[0].typed_search_attributes.get(sa.AGENT_STATUS) == "failed"

    assert ended(await listed(client, f'WorkflowId = "{handle.id}"', until=ended))
    code, out = await cli(dev_server.address, "ls", "--pattern", "pipeline", "--limit", "500")
    (line,) = [x for x in out.splitlines() if x.startswith(handle.id)]
    assert " completed (failed) " in line, out


async def test_ls_lists_a_continued_agent_once_and_show_says_how_it_ended(
    client, dev_server, git_repo
):
    """An agent that continued as new is one task in `ls` (each run was a row of its own,
    the earlier ones `continued_as_new`); `show` says an agent out of turns ended so, not
    just `completed`."""
    from agents.config import AgentSettings

    script = {
        "agents": [
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [{"tool_use": {"name": "Glob", "input": {"pattern": "*"}}}],
            }
        ]
    }
    wf_id = f"insp-{uuid.uuid4().hex[:8]}"
    config = fast_config(agents=AgentSettings(turns_per_run=2))
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config, max_turns=5)
            await (await start(client, inp, queues, wf_id)).result()
    # Visibility is written after the fact: until every run is listed closed.
    runs = await listed(
        client,
        f'WorkflowId = "{wf_id}"',
        until=lambda rows: (
            len(rows) >= 2 and all(r.status != WorkflowExecutionStatus.RUNNING for r in rows)
        ),
    )
    assert len(runs) >= 2, runs  # it did continue as new
    code, out = await cli(dev_server.address, "ls", "--json", "--limit", "200")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [r["status"] for r in rows if r["workflow_id"] == wf_id] == ["completed"]
    code, out = await cli(dev_server.address, "show", wf_id)
    assert code == 0 and "max turns reached" in out, out


async def test_show_says_what_a_model_call_is_retrying(client, dev_server, git_repo):
    """An API that keeps answering 529 was retried for hours while every view said the agent
    was calling the model (a user test, 2026-12-05)."""
    script = {"agents": [{"name": "main", "turns": [{"fail": [529, 529, 529], "text": "done"}]}]}
    config = fast_config(model=FAST_MODEL.model_copy(update={"max_attempts": 0}))
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            seen = ""
            for _ in range(40):
                code, seen = await cli(dev_server.address, "show", handle.id)
                if "model call retrying (attempt" in seen:
                    break
                await asyncio.sleep(0.25)
            await handle.result()
    flat = " ".join(seen.split())
    assert code == 0 and "model call retrying (attempt " in flat, seen
    assert "529" in flat or "verloaded" in flat, seen
    code, after = await cli(dev_server.address, "show", handle.id)
    assert "retrying" not in after, after  # ended: nothing is


async def test_kill_says_whether_the_workflow_ended_or_cannot_act_on_it(
    client, dev_server, git_repo
):
    """`kill` printed "cancelled X" for a run whose workflow tasks kept failing, which no
    cancel reaches (a user test, 2026-12-05); now it says so, and how to end it."""
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [{"tool_use": {"name": "Bash", "input": {"command": "sleep 60"}}}],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for_status(handle, "running_tools")
            code, out = await cli(dev_server.address, "kill", handle.id)
            assert code == 0 and f"killed {handle.id} (canceled)" in out, out
            other = await client.start_workflow(
                "NoSuchWorkflow", id=f"other-{uuid.uuid4().hex[:8]}", task_queue="nobody-polls"
            )
            code, out = await cli(dev_server.address, "kill", other.id)
            assert code == 2 and "not an Outlast workflow" in out, out
            await other.terminate("test over")
            # Two inputs, where the run takes one: every workflow task fails (the SDK calls
            # the init with both; see docs/reliability.md). A carry that does not fit did
            # this until a client's start with one was refused.
            stuck = {
                "prompt": "x",
                "workspace": {"root": str(git_repo), "host_queue": queues.host_queue},
            }
            broken = await client.start_workflow(
                "AgentWorkflow",
                args=[stuck, stuck],
                id=f"broken-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
            )
            try:
                for _ in range(150):
                    if await _task_attempt(broken, 4):
                        break
                    await asyncio.sleep(0.2)
                code, out = await cli(dev_server.address, "kill", broken.id)
                flat = " ".join(out.split())
                assert code == 0 and f"but {broken.id} cannot act on it" in flat, out
                assert f"temporal workflow terminate -w {broken.id}" in flat, out
                # No parent close reaches them: the reaper does.
                assert "its running sub-agents go on until a worker's reaper" in flat, out
                assert "`outlast reap` does it at once" in flat, out
            finally:
                await broken.terminate("test over")


async def wait_for_status(handle, state: str) -> None:
    from workflows.contracts import AgentStatus

    async def reached() -> bool:
        try:
            return (await handle.query("status", result_type=AgentStatus)).state == state
        except Exception:  # noqa: BLE001 - not picked up yet
            return False

    for _ in range(150):
        if await reached():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"never {state}")


async def _task_attempt(handle, at_least: int) -> bool:
    desc = await handle.describe()
    return desc.raw_description.pending_workflow_task.attempt >= at_least


async def test_background_stops_the_wait_on_a_sync_sub_agent(client, dev_server, git_repo):
    """The live tree told people to "signal `background`", which no outlast command sent."""
    # Until the test has sent `background`: two CLI runs took longer than a `sleep 3` under
    # load, and the child had ended before the second.
    hold = "until [ -e released ]; do sleep 0.1; done"
    slow = {"tool_use": {"name": "Bash", "input": {"command": hold}}}
    script = {
        "agents": [
            {
                "name": "slow",
                "match": {"agent_name": "slow"},
                "turns": [slow, {"text": "slow done"}],
            },
            {
                "name": "main",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("slow", "wait a bit", False)}, {"text": "main done"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_for_status(handle, "running_tools")
            code, out = await cli(dev_server.address, "background", handle.id, "nobody")
            assert code == 2 and "waits on no sub-agent nobody (it waits on: " in out, out
            # Unnamed: every one it waits on (it said "every sub-agent it waits on of ID").
            code, out = await cli(dev_server.address, "background", handle.id)
            said = f"every sub-agent {handle.id} waited on goes on in the background"
            assert code == 0 and said in " ".join(out.split()), out
            (git_repo / "released").touch()
            result = await handle.result()
    (launched,) = tool_results(result)
    assert "moved to the background (on request)" in str(launched.content)


async def test_transcript_prints_the_conversation_of_a_running_and_an_ended_agent(
    client, dev_server, git_repo
):
    """The history holds the conversation by reference only: nothing showed a person what an
    agent was told and answered (a user test, 2026-12-05)."""
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}
    # Held until the CLI has answered: a `sleep 2` ended first under load (CI, 2026-12-06).
    held = {"name": "Bash", "input": {"command": "until [ -e released ]; do sleep 0.05; done"}}
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"text": "Looking first.", "tool_use": read},
                    {"tool_use": held},
                    {"text": "ALL-DONE-HERE"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("TASK-TEXT", git_repo, queues), queues)
            await wait_for_status(handle, "running_tools")
            code, running = await cli(dev_server.address, "transcript", handle.id)
            (git_repo / "released").touch()
            await handle.result()
    flat = " ".join(running.split())
    assert code == 0 and "user TASK-TEXT" in flat and "→ Read" in flat, running
    assert "# sample" in flat and "ALL-DONE-HERE" not in flat, running  # the Read's result
    code, ended = await cli(dev_server.address, "transcript", handle.id)
    assert code == 0 and "→ Bash" in ended and "ALL-DONE-HERE" in ended, ended
    code, out = await cli(dev_server.address, "transcript", handle.id, "--json")
    messages = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [m["role"] for m in messages] == ["user", "assistant"] * 3, out
    code, out = await cli(dev_server.address, "transcript", "no-such-agent")
    assert code == 2 and "no workflow no-such-agent" in out, out


async def test_transcript_of_a_killed_agent_needs_no_worker(client, dev_server, git_repo):
    """A killed agent has no result to name its conversation: it was asked of a worker,
    which replays the run. With none (or one just gone), `transcript` waited half a minute,
    then said the conversations "before its compactions" are asked of one (a user test,
    2026-12-05). It is read from the run's last model call now."""
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "text": "Looking first.",
                        "tool_use": {"name": "Bash", "input": {"command": "sleep 30"}},
                    },
                    {"text": "NEVER-SAID"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("TASK-TEXT", git_repo, queues), queues)
            await wait_for_status(handle, "running_tools")
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
    started = asyncio.get_running_loop().time()
    code, out = await cli(dev_server.address, "transcript", handle.id)
    flat = " ".join(out.split())
    assert code == 0 and "user TASK-TEXT" in flat and "Looking first." in flat, out
    assert "→ Bash" in flat and "NEVER-SAID" not in flat, out
    assert asyncio.get_running_loop().time() - started < 15


async def test_ls_all_lists_background_commands_too(client, dev_server, git_repo):
    """`show` listed an agent's background commands, `ls --all` left them out."""
    bg = {"name": "Bash", "input": {"command": "sleep 1", "run_in_background": True}}
    script = {"agents": [{"name": "main", "turns": [{"tool_use": bg}, {"text": "launched"}]}]}
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
    shells: list = []
    for _ in range(50):
        code, out = await cli(dev_server.address, "ls", "--all", "--json", "--limit", "500")
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        shells = [r for r in rows if r["workflow_id"].startswith(f"{handle.id}/")]
        if shells:
            break
        await asyncio.sleep(0.2)
    assert [(r["workflow_type"], r["pattern"]) for r in shells] == [("ShellTaskWorkflow", "shell")]


async def test_show_does_not_count_a_run_that_was_reset(client, dev_server, git_repo):
    """After `temporal workflow reset`, show added the replaced run's turns to the new one's
    ("2 runs"): the new run replays them (a user test, 2026-12-05)."""
    from temporalio.api.common.v1 import WorkflowExecution
    from temporalio.api.enums.v1 import EventType
    from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest

    read = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}}
    script = {
        "agents": [{"name": "main", "after_last": "repeat_last", "turns": [read, {"text": "ok"}]}]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
            events = [e async for e in handle.fetch_history_events()]
            # After the first turn, as a person resets to redo what came after.
            first_task = [
                e.event_id
                for e in events
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
            ][2]
            reset = await client.workflow_service.reset_workflow_execution(
                ResetWorkflowExecutionRequest(
                    namespace=client.namespace,
                    workflow_execution=WorkflowExecution(workflow_id=handle.id),
                    reason="test",
                    workflow_task_finish_event_id=first_task,
                    request_id=str(uuid.uuid4()),
                )
            )
            await client.get_workflow_handle(handle.id, run_id=reset.run_id).result()
    code, out = await cli(dev_server.address, "show", handle.id)
    assert code == 0 and "runs" not in out and "2 turns" in out, out


async def test_a_second_kill_says_the_first_came(client, dev_server):
    """A kill while an earlier one's cleanup ran said "killed" as if it were the first; the
    server drops its reason (a user test, 2026-12-06). No worker here: the first kill stays
    pending."""
    from outlast.end_reasons import cancel_reason

    handle = await client.start_workflow(
        "AgentWorkflow", id=f"kill2-{uuid.uuid4().hex[:8]}", task_queue=f"nobody-{uuid.uuid4()}"
    )
    await handle.cancel(reason="wrong branch")
    code, out = await cli(dev_server.address, "kill", handle.id, "--reason", "and too slow")
    assert code == 0, out
    assert f"a kill of {handle.id} was requested already (reason: wrong branch)" in out, out
    assert "this one adds nothing, its reason is not recorded" in out, out
    assert await cancel_reason(handle) == "wrong branch"
    await handle.terminate("test over")


async def test_show_says_at_once_why_a_start_of_a_misspelt_type_stalls(client, git_repo):
    """`temporal workflow start --type AgentWorkflw`: `show` said only `(AgentWorkflw,
    running)` until the task's third failure, 10 to 20 s on, and then the types there are,
    cut off (a user test, 2026-12-07). It says so from the first failure, with the type
    meant and all of Outlast's."""
    async with running_workers(client) as queues:
        handle = await client.start_workflow(
            "AgentWorkflw",
            agent_input("go", git_repo, queues),
            id=f"typo-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )
        lines: list[str] = []
        try:
            async with asyncio.timeout(30):  # its 2nd attempt comes at once, its 3rd in 10 s
                while "has failed" not in (lines or [""])[0]:
                    await asyncio.sleep(0.2)
                    lines = tree_lines(await agent_tree(client, handle.id))
        finally:
            await handle.terminate(reason="test over")
    first = " ".join(lines[0].split())
    failed = r"its workflow task has failed \(attempt \d waits\): Workflow class AgentWorkflw is "
    assert re.search(failed + "not registered on this worker;", first), first
    assert "did you mean AgentWorkflow? Outlast's are AgentWorkflow, CoordinatorWorkflow," in first
    assert first.endswith("terminate it and start it again with one of them)"), first


async def test_a_message_or_stop_to_a_workflow_whose_task_keeps_failing_says_so(
    client, dev_server, git_repo
):
    """Started with two inputs, its workflow task fails on every attempt: `send` said
    "message sent" and `stop` "asked ... to stop after its current turn", and nothing would
    ever read them (a user test, 2026-12-07)."""
    from outlast.retries import failing_task

    async with running_workers(client) as queues:
        inp = agent_input("go", git_repo, queues)
        handle = await client.start_workflow(
            "AgentWorkflow", args=[inp, inp], id=f"two-{uuid.uuid4().hex[:8]}",
            task_queue=queues.task_queue,
        )  # fmt: skip
        try:
            async with asyncio.timeout(30):
                while await failing_task(client, await handle.describe()) is None:
                    await asyncio.sleep(0.2)
            for args, what in (
                (["send", handle.id, "hi"], "the message"),
                (["stop", handle.id], "the stop"),
            ):
                code, out = await cli(dev_server.address, *args)
                said = " ".join(out.split())
                assert code == 0 and "its workflow task has failed (attempt" in said, said
                assert f"; {what} waits until one runs" in said, said
        finally:
            await handle.terminate("test over")
