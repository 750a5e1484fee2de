"""Edge cases of an agent's end, each once a real bug (found in review): late mail, a kill
during the final checks, messages to a parent that is gone, resuming a fork, a child that
can no longer report."""

from __future__ import annotations

import asyncio

import pytest
from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from activities.handoff import HandoffInput, HandoffVerdict
from agents.config import AgentSettings, Features, OutlastConfig
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    heartbeat_for,
    host_activities_with,
    notifications,
    running_workers,
    scripted_model,
    spawn,
    start,
    tool_results,
)
from tests.workflows.test_agent_control import wait_status
from workflows.contracts import AgentResult, MailMessage


@activity.defn(name="classifier.classify_handoff")
async def slow_handoff(inp: HandoffInput) -> HandoffVerdict:
    """The real check, slowed down: the agent sits in its final steps for ~3 s."""
    await heartbeat_for(3)
    return HandoffVerdict(flagged=False)


SLOW_HOST = host_activities_with(slow_handoff)


def helper_script(helper_turns: list[dict], background: bool = True) -> dict:
    return {
        "agents": [
            {"name": "helper", "match": {"agent_name": "helper"}, "turns": helper_turns},
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("helper", "answer", background)},
                    {"text": "waiting"},
                ],
            },
        ]
    }


async def mail_while_finishing(client, git_repo, background: bool):
    """A helper sub-agent gets mail while in its final checks: (its result, the parent's,
    the scripted model's log)."""
    script = helper_script([{"text": "helper done"}, {"text": "read your mail"}], background)
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client, host_activities=SLOW_HOST) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            await wait_status(child, lambda s: s.state == "finishing")  # in its final checks
            await child.signal("send_message", MailMessage(text="URGENT-MAIL also fix bug 7"))
            kid = await child.result()
            result = await parent.result()
    return kid, result, model


async def test_mail_arriving_while_the_agent_finishes_is_answered(client, git_repo):
    kid, result, model = await mail_while_finishing(client, git_repo, background=True)
    assert kid.final_text == "read your mail" and kid.run_generation == 1
    helper_calls = [r for r in model.log if r["agent"] == "helper"]
    assert "URGENT-MAIL" in str(helper_calls[-1]["body"]["messages"])
    (note,) = notifications(result)  # told once, with the answer to the mail
    assert "read your mail" in note


async def test_a_kill_during_the_final_checks_is_a_kill(client, git_repo):
    with scripted_model(helper_script([{"text": "helper done"}])):
        async with running_workers(client, host_activities=SLOW_HOST) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            await wait_status(child, lambda s: s.state == "finishing")
            await child.cancel()
            with pytest.raises(WorkflowFailureError):
                await child.result()
            result = await parent.result()
    assert (await child.describe()).status == WorkflowExecutionStatus.CANCELED
    (note,) = notifications(result)
    assert "<status>killed</status>" in note


async def test_message_to_a_parent_that_is_gone_is_an_error_result(client, git_repo):
    config = fast_config(features=Features(fork_subagent=True))
    script = {
        "agents": [
            {
                "name": "helper",
                "match": {"agent_name": "helper"},
                "turns": [
                    {"text": "unused"},  # a fork's first request holds the forking message
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 2"}}},
                    {"tool_use": {"name": "SendMessage", "input": {"to": "main", "message": "hi"}}},
                    {"text": "helper done"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {"description": "h", "prompt": "do X", "name": "helper"},
                        }
                    },
                    {"text": "waiting"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            child = client.get_workflow_handle(f"{parent.id}/helper", result_type=AgentResult)
            await wait_status(child, lambda s: "Bash" in s.current_tools)
            # Terminated: a parent that is cancelled stops its background children (R92),
            # one that is terminated runs no code and leaves them on their own.
            await parent.terminate()
            kid = await child.result()
    assert kid.status == "completed" and kid.final_text == "helper done"
    sent = next(r for r in tool_results(kid) if "nobody is there" in r.content)
    assert sent.is_error


async def test_a_resumed_fork_continues_its_own_conversation(client, git_repo):
    config = fast_config(features=Features(fork_subagent=True))
    script = {
        "agents": [
            {
                "name": "forky",
                "match": {"agent_name": "forky"},
                "turns": [
                    {"text": "unused"},
                    {"text": "FORK-RESULT-A"},
                    {"text": "second answer"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {"description": "f", "prompt": "do X", "name": "forky"},
                        }
                    },
                    {"text": "waiting"},
                    {
                        "tool_use": {
                            "name": "SendMessage",
                            "input": {"to": "forky", "message": "AND-MORE"},
                        }
                    },
                    {"text": "waiting again"},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result = await asyncio.wait_for(parent.result(), 120)
    resumed = [r for r in model.log if r["agent"] == "forky" and "AND-MORE" in str(r["body"])]
    assert len(resumed) == 1 and resumed[0]["turn"] == 2
    assert "FORK-RESULT-A" in str(resumed[0]["body"]["messages"])
    assert any("second answer" in n for n in notifications(result))


async def test_a_child_terminated_after_continue_as_new_is_reported_failed(client, git_repo):
    config = OutlastConfig(
        model=FAST_MODEL, agents=AgentSettings(turns_per_run=1, liveness_check_s=1)
    )
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
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": spawn("sleeper", "sleep", True)},
                    {"text": "waiting"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            child = client.get_workflow_handle(f"{parent.id}/sleeper")
            await wait_status(child, lambda s: "Bash" in s.current_tools)
            await wait_status(parent, lambda s: s.state == "waiting")
            await child.terminate("operator")
            result = await asyncio.wait_for(parent.result(), 60)
    runs = [w async for w in client.list_workflows(f'WorkflowId = "{parent.id}"')]
    assert len(runs) > 1
    (note,) = notifications(result)
    assert "<status>failed</status>" in note and "terminated" in note
    # What it spent until then is read from its run after the end (its status query).
    assert "<tool_uses>1</tool_uses>" in note, note


async def test_a_waiting_agent_checks_its_children_less_and_less_often(client, git_repo):
    """While a background child runs, its parent checks that it still does (a terminated
    child cannot report), each check after the one before at twice the interval, up to 15
    minutes. At a fixed interval (two minutes by default) the checks' ~11 events each filled
    a waiting agent's history to Temporal's limit in about six days."""
    from temporalio.api.enums.v1 import EventType

    parent, result = await wait_for_a_sleeping_child(client, git_repo)
    assert any("SLEPT" in n for n in notifications(result))
    waits = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta().total_seconds()
        async for e in parent.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED
    ]
    checks = [w for w in waits if w < 60]
    assert checks[:3] == [0.5, 1.0, 2.0], waits
    assert len(checks) <= 5, waits  # ~12 at a fixed half second


async def wait_for_a_sleeping_child(client, git_repo, wf_id: str | None = None):
    """A parent (liveness checks every half second) waits for a background child whose Bash
    sleeps 6 s; the parent's handle and result."""
    config = OutlastConfig(model=FAST_MODEL, agents=AgentSettings(liveness_check_s=0.5))
    script = {
        "agents": [
            {
                "name": "sleeper",
                "match": {"agent_name": "sleeper"},
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "sleep 6"}}},
                    {"text": "SLEPT"},
                ],
            },
            {
                "name": "parent",
                "after_last": "repeat_last",
                "turns": [{"tool_use": spawn("sleeper", "sleep", True)}, {"text": "waiting"}],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            inp = agent_input("go", git_repo, queues, config=config)
            parent = await start(client, inp, queues, wf_id)
            result = await asyncio.wait_for(parent.result(), 60)
    return parent, result


async def test_mail_that_comes_as_the_last_turn_is_spent_is_reported_unread(client, git_repo):
    """An agent whose turns are spent does not go on for mail that came during its last
    turn: it went on as its next generation, which carried the spent turns, ended at once
    and went on again, a new run every moment (21 runs in 20 s), each telling its parent
    another would follow. It ends, and the result counts the mail it did not read."""
    script = {
        "agents": [
            {"name": "m", "after_last": "repeat_last", "turns": [{"delay_ms": 3000, "text": "x"}]}
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, max_turns=1), queues)
            await wait_status(handle, lambda s: s.state == "calling_model")
            mail = MailMessage(text="more please", sender="user", id="late-1")
            await handle.signal("send_message", mail)
            result = await asyncio.wait_for(handle.result(), timeout=60)
            runs = [w async for w in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert result.max_turns_reached and result.unread_messages == 1
    assert len(runs) == 1
