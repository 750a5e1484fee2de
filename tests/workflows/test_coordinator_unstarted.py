"""A coordinator's worker queued for its files when the coordinator ends (R59) never starts,
and is said to have been: in its result or, killed, its memo; in `show`; and in the message
of its resume. Its conversation says the worker "starts by itself ... you will be notified",
and nothing said otherwise: a resumed coordinator waited for it (a user test, 2026-12-07)."""

from __future__ import annotations

import asyncio
import io
import json
import uuid

import pytest
from rich.console import Console
from temporalio.client import WorkflowFailureError

from outlast.inspect import agent_tree
from outlast.progress import outcome, print_result
from outlast.resume import resume_agent
from outlast.tree_text import tree_lines
from tests.support import fast_config, running_workers, scripted_model
from tests.workflows.test_coordinator import worker
from workflows.contracts import UNSTARTED_MEMO, AgentResult, AgentStatus, StopRequest, Workspace
from workflows.pattern_contracts import CoordinatorInput

HOLD = "until [ -e released ]; do sleep 0.1; done"
EDIT = "In {{cwd}}/src/app.py change greet(). Purpose: a test. Done = the file changed."
NOTE = "they never started and never will: doc"


def script(third: dict | None = None) -> dict:
    """`third`: the coordinator's third turn (a resumed run's first, by default)."""
    return {
        "agents": [
            {
                "name": "fix",
                "match": {"agent_name": "fix"},
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": HOLD}}},
                    {"text": "Summary: fixed."},
                ],
            },
            {"name": "doc", "match": {"agent_name": "doc"}, "turns": [{"text": "Summary: doc."}]},
            {
                "name": "coordinator",
                "match": {"agent_type": "coordinator"},
                "turns": [
                    {
                        "tool_use": [
                            worker("fix", "implementation", EDIT, ["src/app.py"]),
                            worker("doc", "implementation", EDIT, ["src/app.py"]),
                        ]
                    },
                    {"text": "Waiting for the workers."},
                    third or {"text": "Resumed."},
                ],
            },
        ]
    }


async def start(client, queues, repo, max_turns: int = 20, wf_id: str | None = None):
    inp = CoordinatorInput(
        task="Make greet() shorter, carefully.",
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        config=fast_config(),
        max_turns=max_turns,
    )
    return await client.start_workflow(
        "CoordinatorWorkflow",
        inp,
        id=wf_id or f"coord-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
        result_type=AgentResult,
    )


async def end_with_doc_queued(client, queues, repo, how: str, wf_id: str | None = None):
    """A coordinator that ends (`how`: out of turns, stopped, killed) with `doc` queued for
    the file `fix` holds; its handle and its unstarted workers, as its result or memo says.
    Also the replay corpus's `coordinator_out_of_turns_unstarted` and
    `coordinator_killed_unstarted`."""
    handle = await start(client, queues, repo, 2 if how == "out of turns" else 20, wf_id)
    await doc_queued(handle)
    if how == "out of turns":
        (repo / "released").touch()  # fix ends, which wakes its coordinator for good
        return handle, (await handle.result()).unstarted_workers
    if how == "stop":
        await handle.signal("stop", StopRequest(reason="enough"))
        return handle, (await handle.result()).unstarted_workers
    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    return handle, (await (await handle.describe()).memo()).get(UNSTARTED_MEMO)


async def doc_queued(handle) -> AgentStatus:
    """Once the coordinator waits, `fix` at work and `doc` queued behind it."""
    for _ in range(300):
        try:
            status = await handle.query("status", result_type=AgentStatus)
        except Exception:  # noqa: BLE001 - not picked up yet
            status = None
        if status and status.state == "waiting" and [q.label for q in status.queued] == ["doc"]:
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"doc never queued: {status}")


async def workers_of(client, wf_id: str) -> list[str]:
    query = f'ParentWorkflowId = "{wf_id}"'
    return [w.id async for w in client.list_workflows(query)]


def resume_message(model) -> str:
    """The resumed run's message: the last user turn of its coordinator's first request."""
    (body,) = [r["body"] for r in model.log if r["agent"] == "coordinator" and r["turn"] == 2]
    return json.dumps(body["messages"][-1])


async def test_a_coordinator_out_of_turns_leaves_a_queued_worker_unstarted(client, git_repo):
    """Out of turns, the coordinator woke for `fix`'s end, which freed the file: `doc`
    started, and the end killed it 0.2 s later."""
    with scripted_model(script(), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle, unstarted = await end_with_doc_queued(client, queues, git_repo, "out of turns")
            await asyncio.sleep(0.5)  # a worker started at the end would be listed by now
            started = await workers_of(client, handle.id)
            shown = "\n".join(tree_lines(await agent_tree(client, handle.id)))
            resumed = await resume_agent(client, handle.id, "Go on.")
            await resumed.handle.result()
    assert unstarted == ["doc"]
    assert len(started) == 1, started  # fix's
    assert "never started: doc (queued for its files when it ended)" in shown, shown
    assert resumed.unstarted == ("doc",)
    assert NOTE in resume_message(model)


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_a_stopped_or_killed_coordinator_s_queued_worker_is_said_unstarted(
    client, git_repo, how
):
    with scripted_model(script(), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle, unstarted = await end_with_doc_queued(client, queues, git_repo, how)
            shown = "\n".join(tree_lines(await agent_tree(client, handle.id)))
            # What `run`'s follow ends with: the result, or the kill.
            ended = asyncio.ensure_future(handle.result())
            await asyncio.wait({ended})
            out = io.StringIO()
            await outcome(ended, handle, Console(file=out, width=200))
            resumed = await resume_agent(client, handle.id, "Go on.")
            await resumed.handle.result()
    assert unstarted == ["doc"]
    if how == "stop":
        print_result(ended.result(), Console(file=out, width=200))
    assert "queued workers never started (it ended first): doc" in out.getvalue(), out
    assert "never started: doc (queued for its files when it ended)" in shown, shown
    assert NOTE in resume_message(model)


async def test_a_worker_freed_during_the_last_model_call_does_not_start(client, git_repo):
    """The turn is counted when its call returns: a worker whose files came free during the
    last call started, and the end killed it (a review, 2026-12-07)."""
    from tests.workflows.test_agent_control import wait_status
    from workflows.contracts import MailMessage

    slow = {"delay_ms": 4000, "text": "Still waiting."}
    with scripted_model(script(third=slow)):
        async with running_workers(client) as queues:
            handle = await start(client, queues, git_repo, max_turns=3)
            await doc_queued(handle)
            await handle.signal("send_message", MailMessage(text="How is it going?"))
            await wait_status(handle, lambda s: s.state == "calling_model" and s.turn == 2)
            (git_repo / "released").touch()  # fix ends during the coordinator's last call
            result = await handle.result()
            started = await workers_of(client, handle.id)
    assert result.max_turns_reached and result.unstarted_workers == ["doc"], result
    assert len(started) == 1, started  # fix's
