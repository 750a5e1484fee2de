"""The model called as a local activity (`model.local_activity`, issue 9): the same turns with
no model activity on the server; failures retried in the worker; a kill still reaches a call
in flight, at the next workflow-task heartbeat."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError

from activities.llm import LOCAL_HTTP_SLACK_S
from agents.config import ModelSettings, ToolSettings
from outlast.demo import make_sample_repo
from outlast.demo.patterns import SCENARIO_DIR, SCENARIOS, completed_run
from outlast.patterns import PatternArgs, build_pattern_input, start_pattern
from outlast.scripted_model import load_script
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    local_activity,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from workflows.contracts import AgentStatus

LOCAL_MODEL = fast_config(
    model=FAST_MODEL.model_copy(update={"local_activity": True}),
    tools=ToolSettings(local_tools=True),
)


def script(*turns: dict) -> dict:
    return {"agents": [{"name": "main", "turns": list(turns)}]}


READ = {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}}


async def kinds(handle) -> tuple[list[str], list[tuple[str, int]], int]:
    """Regular activity types, local activities (type, attempt), workflow tasks."""
    regular, local, tasks = [], [], 0
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            regular.append(e.activity_task_scheduled_event_attributes.activity_type.name)
        elif e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            tasks += 1
        elif (la := local_activity(e)) is not None:
            local.append(la)
    return regular, local, tasks


async def test_turns_run_with_no_model_activity_on_the_server(client, git_repo):
    with scripted_model(script(READ, READ, {"text": "done"})) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("read twice", git_repo, queues, config=LOCAL_MODEL)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.final_text == "done" and result.turns == 3
    first, second = tool_results(result)
    assert "# sample" in first.content and not second.is_error
    assert len(model.log) == 3
    regular, local, _ = await kinds(handle)
    assert "llm.call_model" not in regular
    assert [n for n, _ in local if n == "llm.call_model"] == ["llm.call_model"] * 3
    assert result.usage.tokens.output_tokens > 0  # usage is counted as for a regular call


async def test_a_transient_failure_is_retried_in_the_worker(client, git_repo):
    turns = ({"fail": [529, 500], "text": "done after two failures"},)
    with scripted_model(script(*turns)) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("answer", git_repo, queues, config=LOCAL_MODEL)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.final_text == "done after two failures"
    assert len(model.log) == 3
    _, local, _ = await kinds(handle)
    assert ("llm.call_model", 3) in local  # one marker: the attempt that answered


async def test_a_rejected_request_fails_the_agent_without_retries(client, git_repo):
    turns = ({"error": {"status": 400, "message": "prompt is too long"}},)
    with scripted_model(script(*turns)) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("answer", git_repo, queues, config=LOCAL_MODEL)
            handle = await start(client, inp, queues)
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
    cause = failed.value.cause
    assert cause.type == "ModelRequestRejected", cause  # typed, as from a regular call
    assert cause.message.startswith("Model call failed: ") and "prompt is too long" in cause.message
    assert len(model.log) == 1


async def test_a_kill_reaches_a_call_in_flight(client, git_repo):
    """The call would answer after 120 s; the kill is seen at the next workflow-task
    heartbeat (80% of the 10 s task timeout), which cancels the call in the worker."""
    with scripted_model(script({"delay_ms": 120_000, "text": "too late"})) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("think long", git_repo, queues, config=LOCAL_MODEL)
            handle = await start(client, inp, queues)
            await asyncio.sleep(3)  # the call starts in milliseconds; no event says so
            t0 = time.monotonic()
            await handle.cancel()
            with pytest.raises(WorkflowFailureError) as ended:
                await asyncio.wait_for(handle.result(), timeout=60)
            took = time.monotonic() - t0
    assert isinstance(ended.value.cause, CancelledError)
    assert took < 30, f"the kill took {took:.0f} s to reach the model call"
    (call,) = model.log
    assert call["outcome"] == "disconnected"  # the worker dropped the call
    regular, _, _ = await kinds(handle)
    assert "llm.call_model" not in regular


def test_the_default_is_a_regular_activity():
    assert ModelSettings().local_activity is False


AUTO_MODEL = fast_config(
    model=FAST_MODEL.model_copy(update={"local_activity": "auto", "auto_local_under_s": 3}),
    tools=ToolSettings(local_tools=True),
)
"""A threshold of 3 s: a quick call stays quick on a loaded machine."""


async def auto_run(client, git_repo, *turns: dict) -> tuple:
    """Run `turns` under `auto`; the handle, the result (or the failure) and the model log."""
    with scripted_model(script(*turns)) as model:
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("read on", git_repo, queues, config=AUTO_MODEL)
            handle = await start(client, inp, queues)
            try:
                result = await asyncio.wait_for(handle.result(), timeout=90)
            except WorkflowFailureError as e:
                result = e
    return handle, result, model.log


async def modes(handle) -> list[str]:
    """How each model call ran, in order: "dropped" is a local try given up."""
    out = []
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if e.activity_task_scheduled_event_attributes.activity_type.name == "llm.call_model":
                out.append("regular")
        elif (la := local_activity(e)) is not None and la[0] == "llm.call_model":
            failed = e.marker_recorded_event_attributes.HasField("failure")
            out.append("dropped" if failed else "local")
    return out


async def test_auto_calls_locally_only_after_a_short_call(client, git_repo):
    """The first call is regular (nothing known yet); a call after a quick one is local; the
    call after one of 3.5 s is regular again."""
    turns = (READ, {"delay_ms": 3500, **READ}, READ, {"text": "done"})
    handle, result, log = await auto_run(client, git_repo, *turns)
    assert result.final_text == "done" and result.turns == 4
    assert len(log) == 4
    assert await modes(handle) == ["regular", "local", "regular", "local"]
    assert [r.is_error for r in tool_results(result)] == [False] * 3


async def test_auto_gives_up_a_local_call_over_its_cap_and_stays_regular(client, git_repo, caplog):
    """The second call, local after a quick first, takes 7 s: at 5 s it is dropped and sent
    again as a regular activity, and every later call is regular, quick or not. The worker
    logs the give-up, by design, in one line, not as the SDK's warning with a traceback."""
    caplog.set_level(logging.INFO)
    turns = (READ, {"delay_ms": 7000, **READ}, READ, {"text": "done"})
    handle, result, log = await auto_run(client, git_repo, *turns)
    assert result.final_text == "done" and result.turns == 4
    assert [c["outcome"] for c in log].count("disconnected") == 1
    assert len(log) == 5
    assert await modes(handle) == ["regular", "dropped", "regular", "regular", "regular"]
    assert [r.is_error for r in tool_results(result)] == [False] * 3
    gave_up = [r for r in caplog.records if "ran past its 5 s limit" in r.getMessage()]
    assert [(r.levelno, r.exc_info) for r in gave_up] == [(logging.INFO, None)]
    # The limit ended the local try, not the HTTP client's own timeout, which lies past it.
    assert float(log[1]["headers"]["x-stainless-timeout"]) == 5 + LOCAL_HTTP_SLACK_S
    assert "sends it again as a regular activity" in gave_up[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and r.exc_info]


async def test_auto_sends_a_failed_local_call_again_as_a_regular_one(client, git_repo):
    """An overloaded answer to the local call: the regular activity retries it, visibly,
    and the agent stays regular."""
    turns = (READ, {"fail": [529], **READ}, READ, {"text": "done"})
    handle, result, log = await auto_run(client, git_repo, *turns)
    assert result.final_text == "done" and result.turns == 4
    assert len(log) == 5
    assert await modes(handle) == ["regular", "dropped", "regular", "regular", "regular"]


async def test_auto_fails_a_rejected_request_as_a_regular_call_does(client, git_repo):
    # Not "prompt is too long", which is summed up and sent again (test_compaction.py).
    rejected = "max_tokens: 64000 > 32000, the maximum for this model"
    turns = (READ, {"error": {"status": 400, "message": rejected}})
    _, failed, log = await auto_run(client, git_repo, *turns)
    assert isinstance(failed, WorkflowFailureError)
    assert failed.cause.type == "ModelRequestRejected"
    assert failed.cause.message.startswith("Model call failed: ")
    assert rejected in failed.cause.message
    assert len(log) == 3  # the first call, then the local try and the regular one


async def test_a_query_during_a_call_is_answered_at_the_task_heartbeat(client, git_repo):
    """The documented price of `model.local_activity`: the workflow task is open while the
    call runs, so a query waits for its next heartbeat (80% of the 10 s task timeout)."""
    with scripted_model(script({"delay_ms": 30_000, "text": "done"})):
        async with running_workers(client, cached=1000) as queues:
            inp = agent_input("think long", git_repo, queues, config=LOCAL_MODEL)
            handle = await start(client, inp, queues)
            await asyncio.sleep(1)
            t0 = time.monotonic()
            status = await asyncio.wait_for(handle.query("status", result_type=AgentStatus), 20)
            took = time.monotonic() - t0
            await handle.cancel()
    assert status.state == "calling_model"
    assert took < 10, f"the query waited {took:.1f} s"


async def test_the_coordinator_demo_runs_every_worker(client, tmp_path):
    """The demo's coordinator queues doc-mean behind fix-mean (both change calc.py). With the
    model answering inside the workflow task, the coordinator's next answer came before the
    queued worker's start was registered, and it ended without it: a queued worker that is
    starting counts as outstanding (patched queued-start-outstanding)."""
    s = SCENARIOS["coordinator"]
    repo = make_sample_repo(tmp_path / "repo")
    with scripted_model(load_script(SCENARIO_DIR / s.script)) as model:
        async with running_workers(client, cached=1000) as queues:
            args = PatternArgs("coordinator", s.task, str(repo), "")
            args.config = LOCAL_MODEL
            inp = build_pattern_input(args)
            workspace = inp.workspace.model_copy(update={"host_queue": queues.host_queue})
            inp = inp.model_copy(update={"workspace": workspace})
            handle = await start_pattern(
                client,
                "coordinator",
                inp,
                workflow_id=f"coord-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue,
            )
            result = await asyncio.wait_for(handle.result(), 120)
    assert completed_run(result) and result.final_text.startswith("The failing tests are fixed")
    workers = {r["agent"] for r in model.log} - {
        "coordinator-final",
        "coordinator-verify",
        "coordinator-implement",
        "coordinator-research",
        "coordinator-wait",
    }
    assert workers == {
        "read-calc",
        "read-tests",
        "read-readme",
        "fix-mean",
        "doc-mean",
        "run-tests",
    }
