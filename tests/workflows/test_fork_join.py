"""Fork-join and the fork path: a shared prompt cache, proven by the scripted server (R45-R49,
R90)."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import threading
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError
from temporalio.exceptions import CancelledError

from activities import transcripts
from activities.store import default_store
from agents.builtin.fork import FORK_PLACEHOLDER_RESULT
from agents.config import Features
from agents.control_tools import TaskStopInput
from agents.messages import TextBlock, ToolResultBlock
from outlast.inspect import agent_tree
from outlast.scripted_model.cache import estimate_tokens
from tests.interceptors import Hold
from tests.support import fast_config, running_workers, scripted_model, wait_for
from tests.workflows.test_agent_control import wait_status
from tests.workflows.test_visibility import current_details
from workflows import search_attributes as sa
from workflows.contracts import (
    AgentInput,
    AgentResult,
    ForkJoinInput,
    ForkJoinResult,
    ForkOutcome,
    StopRequest,
    Workspace,
)

CONTEXT = "Audit this repository. " + "Background: the service handles payments. " * 80


def fork_script(n: int) -> dict:
    return {
        "agents": [
            *(
                {
                    "name": f"fork{i}",
                    "match": {"last_user_contains": f"DIRECTIVE-{i}:"},
                    # A fork's first request already holds one assistant message (the forking one).
                    "turns": [{"text": "unused"}, {"text": f"Scope: part {i}\nResult: fine"}],
                }
                for i in range(n)
            ),
            {
                "name": "synth",
                "match": {"last_user_contains": "Combine them"},
                "turns": [{"text": "unused"}, {"text": "All parts are fine."}],
            },
        ]
    }


def without_directive(body: dict) -> dict:
    trimmed = copy.deepcopy(body)
    last = trimmed["messages"][-1]["content"]
    assert last[-1]["type"] == "text" and "Fork directive:" in last[-1]["text"]
    last.pop()
    return trimmed


async def start_fork_join(client, queues, repo, n: int, wf_id: str | None = None, **kw):
    inp = ForkJoinInput(
        workspace=Workspace(root=str(repo), host_queue=queues.host_queue),
        directives=[f"DIRECTIVE-{i}: check part {i}" for i in range(n)],
        context=CONTEXT,
        config=fast_config(),
        **kw,
    )
    return await client.start_workflow(
        "ForkJoinWorkflow",
        inp,
        id=wf_id or f"fj-{uuid.uuid4().hex[:8]}",
        task_queue=queues.task_queue,
        result_type=ForkJoinResult,
    )


async def run_fork_join(client, repo, n: int, **kw) -> tuple[ForkJoinResult, list]:
    with scripted_model(fork_script(n), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_fork_join(client, queues, repo, n, **kw)
            result = await handle.result()
    return result, model.log


async def test_fork_join_of_eight_shares_the_prefix(client, git_repo):
    result, log = await run_fork_join(client, git_repo, 8, synthesize=True)
    assert [f.status for f in result.forks] == ["completed"] * 8
    assert [f.final_text for f in result.forks] == [
        f"Scope: part {i}\nResult: fine" for i in range(8)
    ]
    forks = sorted((r for r in log if r["agent"].startswith("fork")), key=lambda r: r["seq"])
    assert len(forks) == 8
    bodies = [without_directive(r["body"]) for r in forks]
    assert all(b == bodies[0] for b in bodies)  # byte-identical up to the directive
    first_user = forks[0]["body"]["messages"][-1]["content"]
    assert [b.get("content") for b in first_user[:-1]] == [FORK_PLACEHOLDER_RESULT] * 8
    # The fork the server accounted first writes the cache; `seq` is the order the responses
    # went out in, which two parallel forks can swap.
    writer = max(forks, key=lambda r: r["usage"]["cache_creation_input_tokens"])
    for later in (r for r in forks if r is not writer):
        usage = later["usage"]
        directive = estimate_tokens(later["body"]["messages"][-1]["content"][-1])
        prompt = sum(
            usage[k]
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        # Everything but the directive block is read from the cache.
        assert usage["cache_read_input_tokens"] == prompt - directive
        assert usage["cache_creation_input_tokens"] == directive
    assert writer["usage"]["cache_creation_input_tokens"] > 10 * directive
    per_agent = [f.usage.tokens.cache_read_input_tokens for f in result.forks]
    assert sum(1 for r in per_agent if r > 0) >= 7
    assert result.synthesis == "All parts are fine."
    synth = next(r for r in log if r["agent"] == "synth")
    assert synth["usage"]["cache_read_input_tokens"] > 0
    assert result.usage.tool_uses == 0 and result.usage.total_tokens > 0


async def test_agent_fork_path_and_recursion_guard(client, git_repo):
    config = fast_config(features=Features(fork_subagent=True))
    script = {
        "agents": [
            {
                "name": "forked",
                "match": {"last_user_contains": "Fork directive:"},
                "turns": [
                    {"text": "unused"},
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {"description": "again", "prompt": "fork more"},
                        }
                    },
                    {"text": "Scope: the fork\nResult: could not fork again"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "text": "Forking.",
                        "tool_use": [
                            {
                                "name": "Agent",
                                "input": {"description": "half one", "prompt": "do half one"},
                            },
                            {
                                "name": "Agent",
                                "input": {"description": "half two", "prompt": "do half two"},
                            },
                        ],
                    },
                    {"text": "waiting"},
                ],
            },
        ]
    }
    from tests.support import agent_input, start

    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result: AgentResult = await handle.result()
            kid_id = await _first_child_id(handle)
            kid = await client.get_workflow_handle(kid_id, result_type=AgentResult).result()
    forks = [r for r in model.log if r["agent"] == "forked" and r["turn"] == 1]
    assert len(forks) == 2
    a, b = (without_directive(r["body"]) for r in forks)
    assert a == b
    parent_first = next(r for r in model.log if r["agent"] == "parent")["body"]
    assert a["system"] == parent_first["system"] and a["tools"] == parent_first["tools"]
    notes = [
        t.text
        for m in transcripts.load(default_store(), result.transcript)
        for t in m.content
        if isinstance(t, TextBlock) and t.text.startswith("<task-notification>")
    ]
    assert len(notes) == 2
    guard = [
        r
        for m in transcripts.load(default_store(), kid.transcript)
        for r in m.content
        if isinstance(r, ToolResultBlock) and r.is_error
    ]
    assert guard and "Fork children cannot fork" in guard[0].content
    # A fork has its parent's tools, the Agent tool among them, and so the definitions that
    # tool lists (a sub-agent without it carries none).
    kid_input = await _start_input(client, kid_id)
    assert "Agent" in (kid_input.tools or []) and kid_input.definitions.definitions


async def _start_input(client, workflow_id: str) -> AgentInput:
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        (decoded,) = await client.data_converter.decode(payloads, [AgentInput])
        return decoded
    raise AssertionError("no start event")


async def _first_child_id(handle) -> str:
    from temporalio.api.enums.v1 import EventType

    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            return event.start_child_workflow_execution_initiated_event_attributes.workflow_id
    raise AssertionError("no child")


def hanging_fork_2_script() -> dict:
    """Three forks; fork 2 runs a Glob, then its next call hangs. Matched last, on the whole
    conversation: its second request's last user message is the Glob's result."""
    script = fork_script(3)
    fork_2 = script["agents"].pop(1)
    fork_2["match"] = {"conversation_contains": ["DIRECTIVE-1:"]}
    glob = {"tool_use": {"name": "Glob", "input": {"pattern": "*"}}}
    fork_2["turns"][1:] = [glob, {"delay_ms": 30000, "text": "too late"}]
    script["agents"].append(fork_2)
    return script


async def when_fork_2_hangs(client, handle) -> None:
    """Until forks 1 and 3 have ended and fork 2 waits on its second call."""
    for _ in range(100):
        if len(await handle.query("forks", result_type=list[ForkOutcome])) == 2:
            break
        await asyncio.sleep(0.1)
    fork_2 = client.get_workflow_handle(f"{handle.id}/fork-2")
    await wait_status(fork_2, lambda s: s.usage.tool_uses == 1)


FORK_ENTERS_PLAN_MODE = {
    "agents": [
        {
            "name": "forked",
            "match": {"conversation_contains": ["Fork directive:"]},
            "turns": [
                {"text": "unused"},
                {"tool_use": {"name": "EnterPlanMode", "input": {}}},
                {"text": "Scope: the fork\nResult: looked, did not plan"},
            ],
        },
        {
            "name": "parent",
            "after_last": "repeat_last",
            "turns": [
                {
                    "tool_use": {
                        "name": "Agent",
                        "input": {"description": "look", "prompt": "look around"},
                    }
                },
                {"text": "done"},
            ],
        },
    ]
}
"""A parent forks once; the fork calls EnterPlanMode, then answers."""


async def test_a_fork_may_not_enter_plan_mode(client, git_repo):
    """A fork has EnterPlanMode only because it inherits its parent's exact tools (the
    prompt cache): its call is refused (R30), and the fork goes on with its directive. It
    used to enter plan mode and mail its parent for approval."""
    config = fast_config(features=Features(fork_subagent=True))
    script = FORK_ENTERS_PLAN_MODE
    from tests.support import agent_input, start

    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result: AgentResult = await asyncio.wait_for(handle.result(), 60)
    assert result.status == "completed"
    refused = [
        json.dumps(r["body"]["messages"][-1])
        for r in model.log
        if r["agent"] == "forked" and r["turn"] == 2
    ]
    assert len(refused) == 1 and "EnterPlanMode is not available to a fork" in refused[0]
    assert '"is_error": true' in refused[0]


async def test_task_stop_kills_one_fork_and_the_join_reports_it(client, git_repo):
    with scripted_model(hanging_fork_2_script()):
        async with running_workers(client) as queues:
            handle = await start_fork_join(client, queues, git_repo, 3)
            await when_fork_2_hangs(client, handle)
            # Signals that cannot stop a fork are refused where the sender can read why.
            await handle.signal("task_stop", {"taskid": "fork-2"})
            await handle.signal("task_stop", TaskStopInput(task_id="fork-9"))
            await handle.signal("task_stop", TaskStopInput(task_id="1"))
            await handle.signal("stop", {})  # no such signal: it was kept unread, unsaid
            refused = await handle.query("refused_signals", result_type=list[str])
            # The Web UI's details: a fork-join kept none (a user test, 2026-12-07).
            running = await current_details(client, handle.id)
            await handle.signal("task_stop", TaskStopInput(task_id="fork-2"))
            result = await handle.result()
            tree = await agent_tree(client, handle.id)
            ended = await current_details(client, handle.id)
            own = (await handle.describe()).typed_search_attributes
            shown = own.get(sa.AGENT_STATUS)
            fork_1 = await client.get_workflow_handle(f"{handle.id}/fork-1").describe()
    # A fork's ParentAgentId names its fork-join's AgentId: it named no workflow (a user
    # test, 2026-12-07).
    assert own.get(sa.AGENT_ID) and own.get(sa.AGENT_ID) == fork_1.typed_search_attributes.get(
        sa.PARENT_AGENT_ID
    )
    # `outlast show` says the join did not get all it asked for (`run` exits 1 for it), and
    # so do `ls` and the Web UI (they read plain `completed`: a user test, 2026-12-07).
    assert tree.outcome == "1 of 3 forks did not finish", tree
    assert shown == "forks not done" and tree.row.outcome == shown, (shown, tree.row)
    outcomes = {n.row.workflow_id.rsplit("/", 1)[1]: n.outcome for n in tree.children}
    assert outcomes == {"fork-1": "completed", "fork-2": "killed", "fork-3": "completed"}
    assert refused == [
        "signal `task_stop` refused: unknown field taskid (did you mean task_id?); its fields "
        "are task_id, shell_id",
        "signal `task_stop` refused: no fork is `fork-9`; name one by its number "
        "(1-3 or fork-1..fork-3), agent id or workflow id",
        "signal `task_stop` refused: fork 1 has ended (completed)",
        "signal `stop` refused: ForkJoinWorkflow has no such signal (did you mean task_stop?); "
        "the signals it takes: task_stop; a fork-join has no graceful stop: a cancel "
        "(`outlast kill`) ends it",
    ]
    assert [f.status for f in result.forks] == ["completed", "killed", "completed"]
    assert re.match(r"fork-join: 3 forks, [12] ended · waiting for the forks\n", running), running
    assert f"| 2 | DIRECTIVE-1: check part 1 | running | `{handle.id}/fork-2` |" in running, running
    assert "signal `task_stop` refused: fork 1 has ended (completed)" in running, running
    assert ended.startswith("fork-join: 3 forks, 3 ended · ended: forks not done"), ended
    assert f"| 2 | DIRECTIVE-1: check part 1 | killed | `{handle.id}/fork-2` |" in ended, ended
    assert result.forks[1].final_text == ""
    # What the killed fork spent (its Glob turn) counts, read from its run after the end.
    assert result.forks[1].usage.tool_uses == 1
    assert result.usage.tool_uses == 1


async def test_a_fork_stopped_by_hand_is_reported_stopped(client, git_repo):
    """`outlast stop <fork-join>/fork-2` ends that fork after its turn: it completes its
    workflow but not its part, and the join says so (the outcome dropped `stopped`, so the
    fork-join looked fully done and `outlast run` exited 0)."""
    script = hanging_fork_2_script()
    glob = {"tool_use": {"name": "Glob", "input": {"pattern": "*"}}}
    # The stop must come while its second call runs: at 2 s, a loaded CI run's status
    # queries (each a replay) missed that window, and the fork ended first (2026-12-07).
    script["agents"][-1]["turns"][2:] = [{"delay_ms": 8000, **glob}, {"text": "never"}]
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_fork_join(client, queues, git_repo, 3)
            await when_fork_2_hangs(client, handle)
            fork_2 = client.get_workflow_handle(f"{handle.id}/fork-2")
            await fork_2.signal("stop", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), 60)
            shown = (await handle.describe()).typed_search_attributes.get(sa.AGENT_STATUS)
    assert [f.status for f in result.forks] == ["completed"] * 3
    assert [f.stopped for f in result.forks] == [False, True, False]
    assert not result.forks[1].finished()
    assert shown == "forks not done", shown


async def test_a_killed_fork_join_ends_cancelled_and_says_so(client, git_repo):
    with scripted_model(hanging_fork_2_script()) as model:
        async with running_workers(client) as queues:
            handle = await start_fork_join(client, queues, git_repo, 3)
            await when_fork_2_hangs(client, handle)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError) as ended:
                await asyncio.wait_for(handle.result(), 60)
    assert isinstance(ended.value.cause, CancelledError)
    assert "synth" not in [r["agent"] for r in model.log]  # no synthesis after a kill
    desc = await handle.describe()
    assert desc.status == WorkflowExecutionStatus.CANCELED
    assert desc.typed_search_attributes.get(sa.AGENT_STATUS) == "killed"


SLOW_FORK_2_S = 4
"""How long fork 2's start is held: a `task_stop` for it lands meanwhile."""


async def stop_as_fork_2_starts(client, repo, wf_id: str | None = None):
    """A fork-join of 3 whose `task_stop fork-2` comes while fork 2's start is held."""
    held = threading.Event()
    with scripted_model(fork_script(3)):
        hold = Hold(SLOW_FORK_2_S, child_suffix="/fork-2", on_hold=held.set)
        async with running_workers(client, interceptors=[hold]) as queues:
            handle = await start_fork_join(client, queues, repo, 3, wf_id=wf_id)
            await wait_for(held.is_set)
            await handle.signal("task_stop", TaskStopInput(task_id="fork-2"))
            return handle, await asyncio.wait_for(handle.result(), 60)


async def test_task_stop_of_a_fork_still_starting_kills_it_once_started(client, git_repo):
    """The stop is kept until the fork's start completes (a cancel sent before it failed the
    whole fork-join, every fork's work lost)."""
    _, result = await stop_as_fork_2_starts(client, git_repo)
    assert [f.status for f in result.forks] == ["completed", "killed", "completed"]


async def test_with_background_tasks_disabled_a_fork_runs_sync(client, git_repo):
    """R18: the fork experiment makes children async only while background tasks are on."""
    from agents.config import AgentSettings
    from tests.support import agent_input, start, tool_results

    config = fast_config(
        features=Features(fork_subagent=True),
        agents=AgentSettings(background_tasks_disabled=True),
    )
    script = {
        "agents": [
            {
                "name": "forked",
                "match": {"last_user_contains": "Fork directive:"},
                # Its first turn is the parent's, in the conversation it inherits.
                "turns": [{"text": "unused"}, {"text": "Scope: the half\nResult: FORK-DONE"}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {"description": "half one", "prompt": "do half one"},
                        }
                    },
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result: AgentResult = await handle.result()
    (answer,) = tool_results(result)
    assert "FORK-DONE" in answer.content and "Async agent launched" not in answer.content
    notes = [
        t.text
        for m in transcripts.load(default_store(), result.transcript)
        for t in m.content
        if isinstance(t, TextBlock) and t.text.startswith("<task-notification>")
    ]
    assert notes == []


async def test_a_raw_start_with_a_blank_directive_is_refused(client, git_repo):
    """`outlast run --fork ''` was refused; a start from another client ran a fork with
    nothing to do, its model asked to work out a task from whitespace."""
    async with running_workers(client) as queues:
        inp = ForkJoinInput(
            workspace=Workspace(root=str(git_repo), host_queue=queues.host_queue),
            directives=["check part 0", "  "],
            context=CONTEXT,
        )
        handle = await client.start_workflow(
            "ForkJoinWorkflow", inp, id=f"fj-{uuid.uuid4().hex[:8]}", task_queue=queues.task_queue
        )
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
    assert "directives[1] is blank: say what fork 2 should do" in str(failed.value.cause)
    events = [e.event_type async for e in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED not in events
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in events  # nor anything else


async def test_a_follow_says_what_each_running_fork_is_doing(client, git_repo):
    """Off a terminal a follow printed nothing between the start and the first fork's end (a
    user test, 2026-12-06: 200 s of silence while the forks were at turn 126)."""
    import io

    from rich.console import Console

    from outlast.pattern_follow import follow_pattern

    script = fork_script(2)
    for fork in script["agents"][:2]:
        # Long enough for several of the follow's asks (every FORKS_EVERY_S) on a loaded CI
        # machine: at 1.5 s one ask could come after fork 2's call had ended (CI, 2026-12-06).
        fork["turns"][-1]["delay_ms"] = 5000
    out = io.StringIO()
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start_fork_join(client, queues, git_repo, 2)
            console = Console(file=out, width=300, force_terminal=False)
            result = await follow_pattern(handle, "fork-join", console, client)
    assert [f.status for f in result.forks] == ["completed", "completed"], result
    text = out.getvalue()
    for line in ("fork 1: turn 1: calling", "fork 2: turn 1: calling", "fork 1: completed"):
        assert line in text, text
