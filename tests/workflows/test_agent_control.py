"""TaskStop, SendMessage and resume chains, cancellation reach (R26, R64-R67)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from outlast.inspect import agent_tree
from outlast.tree_text import tree_lines
from tests.activities.test_tool_bash import marker
from tests.support import (
    agent_input,
    listed,
    running_workers,
    scripted_model,
    spawn,
    start,
    taken_changes,
    tool_results,
    user_texts,
    wait_for,
)
from tests.workflows.test_stop_and_kill import processes_with
from workflows.agent_handlers import STOP_REACHES_SYNC_CHILDREN
from workflows.contracts import (
    AgentNotification,
    AgentResult,
    AgentStatus,
    BackgroundRequest,
    ChildSummary,
    StopRequest,
)
from workflows.starting_children import (
    BACKGROUND_REACHES_STARTING_CHILD,
    NOTICE_BEFORE_START_KEPT,
)
from workflows.subagent_sync import STOP_REACHES_STARTING_CHILD


async def wait_status(handle, predicate, timeout: float = 30) -> AgentStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = await handle.query("status", result_type=AgentStatus)
            if predicate(status):
                return status
        except Exception:  # noqa: BLE001 - not running on a worker yet
            pass
        await asyncio.sleep(0.05)
    raise AssertionError("status never matched")


def resuming_parent(first: dict, message: str) -> dict:
    """A parent that makes the Agent call `first`, then sends `helper` `message`."""
    return {
        "name": "parent",
        "after_last": "repeat_last",
        "turns": [
            {"tool_use": first},
            {"tool_use": {"name": "SendMessage", "input": {"to": "helper", "message": message}}},
            {"text": "Waiting for helper."},
        ],
    }


async def test_task_stop_kills_the_child_tree_and_notifies_killed(client, git_repo):
    sleeps = [f"sleep {marker(1101)}", f"sleep {marker(1102)}"]
    script = {
        "agents": [
            {
                "name": "sleeper",
                "match": {"agent_name": "sleeper"},
                "turns": [
                    {
                        "tool_use": {
                            "name": "Bash",
                            "input": {"command": f"{sleeps[0]} & {sleeps[1]} & wait"},
                        }
                    },
                    {"text": "never"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("sleeper", "sleep a lot", True)},
                    {
                        # Time for the child to start, render, call its model and have Bash
                        # running: the stop must find the command there to kill.
                        "delay_ms": 3000,
                        "tool_use": {"name": "TaskStop", "input": {"task_id": "sleeper"}},
                    },
                    {"text": "Stopped it; carrying on."},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{handle.id}/sleeper")
            await wait_status(child, lambda s: "Bash" in s.current_tools)
            await wait_for(lambda: all(processes_with(s, exact=True) for s in sleeps))
            await wait_for(lambda: not any(processes_with(s) for s in sleeps), interval=0.02)
            gone = time.time()
            result = await handle.result()
            requested = None
            async for event in child.fetch_history_events():
                if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
                    requested = event.event_time.ToDatetime().timestamp()
            # `outlast show` says it was killed, as the parent and `outlast run` do.
            tree = await agent_tree(client, handle.id)
    assert requested is not None and gone - requested < 2.0
    (stopped,) = tree.children
    assert stopped.row.status == "canceled" and stopped.outcome == "killed", stopped
    assert "(general-purpose, canceled, killed, " in tree_lines(tree)[1]
    assert (await child.describe()).status == WorkflowExecutionStatus.CANCELED
    assert result.status == "completed" and result.final_text == "Stopped it; carrying on."
    notes = [t for t in user_texts(result) if t.startswith("<task-notification>")]
    assert len(notes) == 1
    assert "<status>killed</status>" in notes[0]
    assert '<summary>Agent "task sleeper" was stopped</summary>' in notes[0]
    stop_result = [r for r in tool_results(result) if "Stopped agent" in r.content]
    assert len(stop_result) == 1 and not stop_result[0].is_error


async def test_a_child_its_parent_stopped_earlier_is_not_given_a_later_kill_s_words(
    client, git_repo
):
    """`show` gives a child its parent's end ended the words the person gave that end; one
    the parent's own TaskStop ended before reads the same "stopped by workflow", and was
    given the kill's words too (a review, 2026-12-07)."""
    script = {
        "agents": [
            {
                "name": "sleeper",
                "match": {"agent_name": "sleeper"},
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 30"}}},
                    {"text": "never"},
                ],
            },
            {
                "name": "parent",
                "turns": [
                    {"tool_use": spawn("sleeper", "sleep a lot", True)},
                    {
                        "delay_ms": 1500,
                        "tool_use": {"name": "TaskStop", "input": {"task_id": "sleeper"}},
                    },
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 30"}}},
                    {"text": "never"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: s.turn >= 3 and "Bash" in s.current_tools)
            await handle.cancel(reason="enough")
            with contextlib.suppress(WorkflowFailureError):
                await asyncio.wait_for(handle.result(), 30)
            tree = await agent_tree(client, handle.id)
    assert tree.error == "reason: enough", tree.error
    (stopped,) = tree.children
    assert stopped.error == f"reason: stopped by workflow {handle.id}", stopped.error


async def test_send_message_resumes_a_finished_child_in_the_same_workflow_id(client, git_repo):
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [
                    {"text": "first answer: 42"},
                    {"text": "second answer, building on 42"},
                ],
            },
            resuming_parent(spawn("helper", "what is the answer?", False), "and then?"),
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            runs = await listed(
                client,
                f'WorkflowId = "{handle.id}/helper"',
                until=lambda rows: {r.status for r in rows} == {WorkflowExecutionStatus.COMPLETED},
            )
    assert len(runs) == 2 and {r.status for r in runs} == {WorkflowExecutionStatus.COMPLETED}
    helper_calls = [r for r in model.log if r["agent"] == "helper"]
    assert [r["turn"] for r in helper_calls] == [0, 1]
    resumed = helper_calls[1]["body"]["messages"]
    assert resumed[1]["content"][0]["text"] == "first answer: 42"
    assert "and then?" in str(resumed[-1]["content"])
    sent = [r for r in tool_results(result) if "resumed it in the background" in r.content]
    assert len(sent) == 1 and re.search(r"Output: /\S+/agent-\w+\.jsonl$", sent[0].content)
    notes = [t for t in user_texts(result) if t.startswith("<task-notification>")]
    assert len(notes) == 1 and "second answer, building on 42" in notes[0]


async def test_send_message_reaches_a_running_child_at_its_next_turn(client, git_repo):
    script = {
        "agents": [
            {
                "name": "worker",
                "match": {"agent_name": "worker"},
                "after_last": "repeat_last",
                "turns": [
                    {"delay_ms": 3000, "tool_use": {"name": "Glob", "input": {"pattern": "*.md"}}},
                    {"text": "got it"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("worker", "work", True)},
                    {
                        # Held so the worker's first call (held 3 s) is surely in flight
                        # when the message arrives, however fast or slow the rest runs.
                        "delay_ms": 1500,
                        "tool_use": {
                            "name": "SendMessage",
                            "input": {"to": "worker", "message": "EXTRA-INFO-77"},
                        },
                    },
                    {"text": "waiting"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    worker_calls = [r for r in model.log if r["agent"] == "worker"]
    assert "EXTRA-INFO-77" not in str(worker_calls[0]["body"]["messages"])
    last_user = worker_calls[1]["body"]["messages"][-1]["content"]
    assert [b["type"] for b in last_user] == ["tool_result", "text"]
    assert "EXTRA-INFO-77" in last_user[1]["text"]
    queued = [r for r in tool_results(result) if "Message queued for delivery" in r.content]
    assert len(queued) == 1


SPAWN_AND_MESSAGE = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "after_last": "repeat_last",
            "turns": [
                {"delay_ms": 2000, "tool_use": {"name": "Glob", "input": {"pattern": "*"}}},
                {"text": "helper done"},
            ],
        },
        {
            "name": "parent",
            "after_last": "repeat_last",
            "turns": [
                {
                    "tool_use": [
                        spawn("helper", "work", True),
                        {
                            "name": "SendMessage",
                            "input": {"to": "helper", "message": "NOTE-FROM-PARENT-5"},
                        },
                    ]
                },
                {"text": "waiting"},
            ],
        },
    ]
}
"""A background helper spawned and messaged in one response (also the replay corpus's
`subagents_message_after_spawn`)."""


async def test_a_message_in_the_response_that_spawns_its_recipient_reaches_it(client, git_repo):
    """`Agent{name: helper}` and `SendMessage{to: helper}` in one response: run together, the
    message was answered "No agent named or with ID 'helper'" (a user test; models often
    do this). The message now waits for the spawn (patched messages-after-spawns)."""
    with scripted_model(SPAWN_AND_MESSAGE, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
    launched, sent = tool_results(result)[:2]
    assert not sent.is_error and "Message queued for delivery" in sent.content, sent.content
    helper_calls = [r for r in model.log if r["agent"] == "helper"]
    assert "NOTE-FROM-PARENT-5" in str(helper_calls[-1]["body"]["messages"])
    assert "messages-after-spawns" in await taken_changes(handle)


async def wait_closed(handle, timeout: float = 30) -> WorkflowExecutionStatus:
    deadline = time.monotonic() + timeout
    while (status := (await handle.describe()).status) == WorkflowExecutionStatus.RUNNING:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    return status


async def test_cancelling_the_parent_cancels_its_sync_and_background_children(client, git_repo):
    """R26: the sync child shares its parent's fate; R92: a killed agent stops its background
    children too (ABANDON had left them working for a parent that was gone)."""
    slow = {"delay_ms": 60000, "text": "late"}
    script = {
        "agents": [
            {"name": "bg", "match": {"agent_name": "bg"}, "turns": [slow]},
            {"name": "fg", "match": {"agent_name": "fg"}, "turns": [slow]},
            {
                "name": "parent",
                "turns": [
                    {
                        "tool_use": [
                            spawn("bg", "background work", True),
                            spawn("fg", "foreground work", False),
                        ]
                    },
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: len(s.children) == 2)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
            fg = client.get_workflow_handle(f"{handle.id}/fg")
            bg = client.get_workflow_handle(f"{handle.id}/bg")
            assert await wait_closed(fg) == WorkflowExecutionStatus.CANCELED
            assert await wait_closed(bg) == WorkflowExecutionStatus.CANCELED


async def test_a_killed_agent_s_sync_child_reads_killed_in_its_view(client, git_repo):
    """The sync child, cancelled with the wait, tells its `killed` end to a closed
    workflow: the ended agent's `status` query read it `running` for good (a review,
    2026-12-07)."""
    slow = {"delay_ms": 60000, "text": "late"}
    script = {
        "agents": [
            {"name": "fg", "match": {"agent_name": "fg"}, "turns": [slow]},
            {"name": "parent", "turns": [{"tool_use": spawn("fg", "foreground work", False)}]},
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: len(s.children) == 1)
            await handle.cancel()
            with pytest.raises(WorkflowFailureError):
                await handle.result()
            fg = client.get_workflow_handle(f"{handle.id}/fg")
            assert await wait_closed(fg) == WorkflowExecutionStatus.CANCELED
            status = await handle.query("status", result_type=AgentStatus)
    assert [(c.name, c.status) for c in status.children] == [("fg", "killed")], status.children


async def test_a_stopped_agent_stops_the_background_children_it_leaves(client, git_repo):
    """R92 at a stop (`outlast stop`): the agent ends after its turn without waiting for its
    background sub-agent, which is stopped rather than left working with nobody to report to
    (each agent does the same at its own end, so a whole tree goes)."""
    script = {
        "agents": [
            {
                "name": "child",
                "match": {"agent_name": "child"},
                "turns": [{"delay_ms": 60000, "text": "late"}],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("child", "background work", True)}, {"text": "wait"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await wait_status(handle, lambda s: len(s.children) == 1)
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await handle.result()
            assert result.stopped and result.stopped_children == ["child"]
            # Its end's own stop of the child is no news it missed (a review, 2026-12-07).
            assert result.undelivered == [], result.undelivered
            child = client.get_workflow_handle(f"{handle.id}/child")
            assert await wait_closed(child) == WorkflowExecutionStatus.CANCELED
            # Its `killed` end reaches a closed workflow: the ended agent's view read the
            # child `running` for good (a user test, 2026-12-07).
            status = await handle.query("status", result_type=AgentStatus)
            assert [c.status for c in status.children] == ["killed"], status.children
            tasks = await handle.query("tasks", result_type=list[ChildSummary])
            assert [c.status for c in tasks] == ["killed"], tasks


async def test_a_name_reused_after_its_agent_ended_gets_a_workflow_of_its_own(client, git_repo):
    """R20: a name goes to the latest agent that took it. The second agent named "v" runs in
    a workflow of its own: under the first one's id its start became the first agent's next
    run, and a SendMessage to the first agent's id reached the second."""
    script = {
        "agents": [
            {
                "name": "v-first",
                "match": {"agent_name": "v", "conversation_contains": ["first job"]},
                "turns": [{"text": "FIRST"}],
            },
            {
                "name": "v-second",
                "match": {"agent_name": "v", "conversation_contains": ["second job"]},
                "turns": [{"text": "SECOND"}],
            },
            {
                "name": "parent",
                "turns": [
                    {"tool_use": spawn("v", "first job", False)},
                    {"tool_use": spawn("v", "second job", False)},
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            status = await handle.query("status", result_type=AgentStatus)
            ids = [c.workflow_id for c in status.children]
            answers = [
                (await client.get_workflow_handle(i, result_type=AgentResult).result()).final_text
                for i in ids
            ]
    assert result.final_text == "done"
    assert len(set(ids)) == 2 and ids[0] == f"{handle.id}/v"
    assert ids[1] == f"{handle.id}/v.{status.children[1].agent_id}"
    assert answers == ["FIRST", "SECOND"]


async def test_one_agent_per_name_in_a_batch(client, git_repo):
    """Two Agent calls of one response with the same name: the second is refused, as a call
    naming a running agent is; with a name reused from an ended agent each had taken its
    own workflow id, so two agents ran under one name."""
    script = {
        "agents": [
            {"name": "v", "match": {"agent_name": "v"}, "turns": [{"text": "V-DONE"}]},
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("v", "first job", False)},
                    {"tool_use": [spawn("v", "job a", True), spawn("v", "job b", True)]},
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            status = await handle.query("status", result_type=AgentStatus)
    assert len(status.children) == 2  # the first job, and one of the batch
    refused = [r for r in tool_results(result) if "already running or starting" in r.content]
    assert len(refused) == 1 and refused[0].is_error


async def test_an_agent_out_of_turns_stops_the_background_children_it_leaves(client, git_repo):
    """R92 at max_turns: the run ends there (mail waiting included), so the background
    sub-agent it launched in its last turn is stopped, not left working."""
    script = {
        "agents": [
            {
                "name": "child",
                "match": {"agent_name": "child"},
                "turns": [{"delay_ms": 60000, "text": "late"}],
            },
            {"name": "parent", "turns": [{"tool_use": spawn("child", "background work", True)}]},
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, max_turns=1), queues)
            result = await handle.result()
            assert result.max_turns_reached and result.stopped_children == ["child"]
            assert result.undelivered == [], result.undelivered
            child = client.get_workflow_handle(f"{handle.id}/child")
            assert await wait_closed(child) == WorkflowExecutionStatus.CANCELED


STOP_THEN_MAIL = {
    "agents": [
        {
            "name": "sleeper-1",
            "match": {"agent_name": "sleeper", "conversation_lacks": ["TRY-AGAIN"]},
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 30"}}},
                {"text": "never"},
            ],
        },
        {
            "name": "sleeper-2",
            "match": {"agent_name": "sleeper", "conversation_contains": ["TRY-AGAIN"]},
            # Its turn index counts the Bash call the kill cut off (kept, as interrupted).
            "after_last": "repeat_last",
            "turns": [{"text": "RESUMED: trying again as told"}],
        },
        {
            "name": "parent",
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": spawn("sleeper", "sleep a lot", True)},
                {
                    # The coordinator's move (R61): stop a worker going the wrong way, then
                    # continue it with corrected instructions, in one response.
                    "delay_ms": 3000,
                    "tool_use": [
                        {"name": "TaskStop", "input": {"task_id": "sleeper"}},
                        {"name": "SendMessage", "input": {"to": "sleeper", "message": "TRY-AGAIN"}},
                    ],
                },
                {"text": "Waiting for sleeper."},
            ],
        },
    ]
}


async def test_a_message_right_after_task_stop_resumes_the_stopped_agent(client, git_repo):
    """SendMessage to an agent TaskStop is stopping: it waits for the end and resumes the
    agent with the message. It went to the ending run, which reads no mail after a kill:
    the tool said "queued" and the message was lost."""
    with scripted_model(STOP_THEN_MAIL) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), 90)
    sent = [r.content for r in tool_results(result)]
    assert any("resumed it in the background with your message" in c for c in sent), sent
    assert [r["agent"] for r in model.log].count("sleeper-2") == 1
    notes = [t for t in user_texts(result) if t.startswith("<task-notification>")]
    assert any("<status>killed</status>" in n for n in notes), notes
    assert any("RESUMED: trying again as told" in n for n in notes), notes


STOP_WHILE_WAITING = {
    "agents": [
        {
            "name": "slow",
            "match": {"agent_name": "slow"},
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": "sleep 3"}}},
                {"text": "CHILD-SECOND-TURN"},
            ],
        },
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [{"tool_use": spawn("slow", "work on", False)}, {"text": "PARENT-AFTER"}],
        },
    ]
}


async def test_a_stop_reaches_the_sync_sub_agent_the_agent_waits_on(client, git_repo):
    """A stop of an agent waiting on a sync sub-agent waited for that sub-agent's own end,
    which a long task (or a hook that kept blocking its stops) put off for good (a user test,
    2026-12-05): it is sent on, the sub-agent ends after its current turn, then the agent."""
    with scripted_model(STOP_WHILE_WAITING, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{handle.id}/slow")
            for _ in range(150):
                try:
                    status = await child.query("status", result_type=AgentStatus)
                    if status.state == "running_tools":
                        break
                except Exception:  # noqa: BLE001 - not started yet
                    pass
                await asyncio.sleep(0.1)
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), 60)
            tree = await agent_tree(client, handle.id)
    asked = [r["agent"] for r in model.log]
    assert asked.count("slow") == 1 and asked.count("main") == 1, asked  # no turn after
    # `show` gives the sub-agent the words of the stop that reached it (they were said on
    # the agent's own line only: a user test, 2026-12-07).
    (slow,) = tree.children
    assert slow.error == "reason: the agent that waits on it was stopped: enough", slow.error
    assert result.status == "completed" and "PARENT-AFTER" not in result.final_text
    assert STOP_REACHES_SYNC_CHILDREN in await taken_changes(handle)


STOP_BEFORE_SPAWN = {
    "agents": [
        {
            "name": "busy",
            "match": {"agent_name": "busy"},
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": {"name": "Bash", "input": {"command": "true"}}},
                {"tool_use": {"name": "Bash", "input": {"command": "true"}}},
                {"tool_use": {"name": "Bash", "input": {"command": "true"}}},
                {"text": "CHILD-DONE"},
            ],
        },
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [
                {"delay_ms": 1500, "tool_use": spawn("busy", "work on", False)},
                {"text": "PARENT-AFTER"},
            ],
        },
    ]
}


async def test_a_sync_sub_agent_started_after_a_stop_is_stopped_too(client, git_repo):
    """A stop that came while the agent's model wrote an Agent call (or while the sub-agent
    was starting) reached only the sync sub-agents already running: the new one ran its whole
    course before the agent stopped (a review, 2026-12-07). It is stopped at its start now."""
    handle, result, log = await stop_as_the_model_spawns(client, git_repo)
    asked = [r["agent"] for r in log]
    # Stopped before its first model call, as a rule; after it at the latest.
    assert asked.count("busy") <= 1 and asked.count("main") == 1, asked
    assert result.status == "completed" and "PARENT-AFTER" not in result.final_text
    (told,) = [r.content for r in tool_results(result)]
    assert "It was stopped before it finished, because you were stopped" in told, told
    assert STOP_REACHES_STARTING_CHILD in await taken_changes(handle)


BACKGROUND_AS_IT_STARTS = {
    "agents": [
        {"name": "starting", "match": {"agent_name": "starting"}, "turns": [{"text": "CHILD"}]},
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [
                {"tool_use": spawn("starting", "work on", False, isolation="worktree")},
                {"text": "PARENT-AFTER"},
            ],
        },
    ]
}


@pytest.mark.parametrize("named", [None, "starting"])
async def test_a_background_signal_while_a_sync_sub_agent_starts_moves_it(
    client, git_repo, tmp_path, named
):
    """A `background` signal that came while a sync sub-agent's child workflow was starting
    found no sub-agent running and was refused (as when the parent's worker was away and the
    signal came in one task with the start). It moves the sub-agent once it runs now."""
    request = BackgroundRequest(agent_id=named)
    handle, result, status = await background_as_a_child_starts(
        client, git_repo, tmp_path, request=request
    )
    (told, *_) = [r.content for r in tool_results(result)]
    assert "was moved to the background (on request)" in told, told
    assert status.refused_signals == [], status.refused_signals
    assert BACKGROUND_REACHES_STARTING_CHILD in await taken_changes(handle)


@pytest.mark.parametrize("named", ["starting", None])
async def test_a_background_signal_kept_for_a_start_that_fails_is_refused_then(
    client, git_repo, tmp_path, named
):
    """Kept for a sync sub-agent whose start then failed (its workflow id taken), the signal
    had moved nothing and said nothing: it is refused then, where `show` lists it, if it named
    that sub-agent. One for every sync sub-agent named none of them (a review, 2026-12-07)."""
    wf_id = f"test-{uuid.uuid4().hex[:10]}"
    blocker = await client.start_workflow(
        "NoSuchWorkflow", id=f"{wf_id}/starting", task_queue=f"nobody-{wf_id}"
    )
    try:
        handle, result, status = await background_as_a_child_starts(
            client, git_repo, tmp_path, wf_id, BackgroundRequest(agent_id=named)
        )
    finally:
        await blocker.terminate(reason="test over")
    (told, *_) = [r.content for r in tool_results(result)]
    assert "is already running" in told, told
    refused = ["signal `background` refused: the sub-agent starting it named could not start"]
    assert status.refused_signals == (refused if named else []), status.refused_signals


async def background_as_a_child_starts(
    client, repo, tmp_path, wf_id: str | None = None, request=BackgroundRequest()
):
    """`background` while the sync sub-agent's worktree is made (its post-checkout hook holds
    the start until the signal is in). (handle, result, the parent's last status)"""
    started, go = tmp_path / "hook-started", tmp_path / "hook-go"
    hold_worktrees(repo, started, go)
    with scripted_model(BACKGROUND_AS_IT_STARTS):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", repo, queues), queues, wf_id)
            await wait_for(started.exists, timeout=30)
            await handle.signal("background", request)
            go.touch()
            result = await asyncio.wait_for(handle.result(), 60)
            status = await handle.query("status", result_type=AgentStatus)
    return handle, result, status


EARLY_WORD = {
    "agents": [
        {
            "name": "child",
            "match": {"prompt_contains": "CHILD-PROMPT"},
            "turns": [{"text": "LATE"}],
        },
        {
            "name": "main",
            "after_last": "repeat_last",
            "turns": [
                {
                    "tool_use": {
                        "name": "Agent",
                        "input": {
                            "description": "early",
                            "prompt": "CHILD-PROMPT",
                            "run_in_background": True,
                            "isolation": "worktree",
                        },
                    }
                },
                {"text": "PARENT-AFTER"},
            ],
        },
    ]
}


async def test_a_notification_that_comes_before_its_child_s_start_resolved_is_kept(
    client, git_repo, tmp_path
):
    """A sub-agent's `agent_notification` that reached its parent before the parent had seen
    the child's start (in one workflow task with the start's resolution, whose signal handler
    runs first) found no task and was dropped: an end that `continues` lost that run's answer.
    It is kept for the child now. Sent here by the test while the child's start is held."""
    handle, result = await notice_before_the_start(client, git_repo, tmp_path)
    told = "\n".join(user_texts(result))
    assert "EARLY-WORD" in told and "LATE" not in told, told
    assert NOTICE_BEFORE_START_KEPT in await taken_changes(handle)


async def notice_before_the_start(client, repo, tmp_path, wf_id: str | None = None):
    """The child's end, sent while its worktree is made (a post-checkout hook holds it), with
    the agent id the parent gave it (from the worktree activity's input). (handle, result)"""
    started, go = tmp_path / "hook-started", tmp_path / "hook-go"
    hold_worktrees(repo, started, go)
    with scripted_model(EARLY_WORD):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", repo, queues), queues, wf_id)
            await wait_for(started.exists, timeout=30)
            owner = await worktree_owner(client, handle)
            agent_id = owner.rsplit("/", 1)[1]
            end = AgentNotification(
                agent_id=agent_id,
                run_generation=1,
                status="completed",
                description="early",
                final_text="EARLY-WORD",
            )
            await handle.signal("agent_notification", end)
            go.touch()
            result = await asyncio.wait_for(handle.result(), 60)
            await asyncio.wait_for(client.get_workflow_handle(owner).result(), 60)
    return handle, result


def hold_worktrees(repo, started, go) -> None:
    """A post-checkout hook that touches `started` and waits (up to 30 s) for `go`."""
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(
        f"#!/bin/sh\ntouch '{started}'\n"
        f"i=0; while [ ! -e '{go}' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done\n"
    )
    hook.chmod(0o755)


async def worktree_owner(client, handle) -> str:
    """The child workflow id the parent's `workspace.create_worktree` call names."""
    async for event in handle.fetch_history_events():
        attrs = event.activity_task_scheduled_event_attributes
        if attrs.activity_type.name == "workspace.create_worktree":
            (inp,) = await client.data_converter.decode(attrs.input.payloads)
            return inp["owner_workflow_id"]
    raise AssertionError("no workspace.create_worktree call in the history")


async def stop_as_the_model_spawns(client, repo, wf_id: str | None = None):
    """A stop while the model writes a sync Agent call. (handle, result, the model's log)"""
    with scripted_model(STOP_BEFORE_SPAWN, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", repo, queues), queues, wf_id)
            await wait_status(handle, lambda s: s.state == "calling_model")
            await handle.signal("stop", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), 60)
    return handle, result, model.log
