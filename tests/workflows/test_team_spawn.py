"""A team's lead grows its team (R69): its `Agent` call with a `name` starts a new teammate,
whom every member can then reach by name; the team refuses what it cannot add."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

from temporalio.client import WorkflowExecutionStatus

from tests.interceptors import Hold
from tests.support import Queues, fast_config, running_workers, scripted_model, wait_for
from tests.workflows.test_team import last_request, member, send, start_team
from tests.workflows.test_visibility import current_details
from workflows.contracts import AgentResult, StopRequest, Workspace
from workflows.pattern_contracts import TeamInput, TeammateSpec, TeamResult


def spawn_script() -> dict:
    """The lead spawns d (and is refused a name in use and another team); d greets the lead
    and b; b, an older member, answers the newcomer by name."""
    newcomer = {"description": "greeter", "prompt": "Greet the lead and b.", "name": "d"}
    return {
        "agents": [
            member("a", "done", {"text": "A-HEARD-D"}, contains=["HELLO-A-FROM-D"]),
            member(
                "a",
                "spawn",
                {
                    "tool_use": [
                        {"name": "Agent", "input": newcomer},
                        {"name": "Agent", "input": {**newcomer, "name": "b"}},
                        {"name": "Agent", "input": {**newcomer, "name": "e", "team_name": "x"}},
                    ]
                },
                lacks=["greeter"],  # once: then its calls are in the conversation
            ),
            member("a", "wait", {"text": "Waiting for d."}),
            member(
                "d",
                "greet",
                {"tool_use": [send("a", "HELLO-A-FROM-D"), send("b", "HELLO-B-FROM-D")]},
                lacks=["Message queued"],
            ),
            member("d", "idle", {"text": "D idle."}),
            member(
                "b",
                "answer",
                {"tool_use": send("d", "WELCOME-D-FROM-B")},
                contains=["HELLO-B-FROM-D"],
                lacks=["WELCOME-D-FROM-B"],
            ),
            member("b", "idle", {"text": "B idle."}),
            member("c", "idle", {"text": "C idle."}),
        ]
    }


async def test_the_lead_spawns_a_teammate_by_name(client, git_repo):
    """R69: the lead's `Agent({name, ...})` adds a member to its team (a teammate's is
    refused, above). The newcomer talks to the lead and to an older member, who reaches it
    by name; the team ends quiet with it in its result."""
    with scripted_model(spawn_script(), log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start_team(client, queues, git_repo)
            result = await handle.result()
            details = await current_details(client, handle.id)
    assert result.status == "completed", result
    assert [(m.name, m.status) for m in result.members] == [
        ("a", "completed"),
        ("b", "completed"),
        ("c", "completed"),
        ("d", "completed"),
    ]
    # The Web UI's details list every member, the one the lead added too.
    assert "- `d` (general-purpose): ended, 1 received, 2 sent" in details, details
    assert result.members[3].workflow_id == f"{handle.id}/d"
    assert result.lead_text == "A-HEARD-D"
    assert result.messages == 3  # d to a and b, b to d: each received once
    assert last_request(model.log, "d").count("WELCOME-D-FROM-B") == 1
    a_calls = [r for r in model.log if r["headers"].get("x-outlast-agent-name") == "a"]
    spawned, taken, other_team = a_calls[1]["body"]["messages"][2]["content"]
    assert "Spawned teammate 'd' (general-purpose) in team 'trio'" in json.dumps(spawned)
    assert not spawned.get("is_error")
    assert taken["is_error"] and "already has a member named 'b'" in json.dumps(taken)
    assert other_team["is_error"] and "You lead team 'trio'" in json.dumps(other_team)
    # The lead is offered what spawning takes; its own helpers still run synchronously.
    (agent_tool,) = [t for t in a_calls[0]["body"]["tools"] if t["name"] == "Agent"]
    fields = set(agent_tool["input_schema"]["properties"])
    assert {"name", "mode"} <= fields and "run_in_background" not in fields
    assert 'You lead the team "trio"' in agent_tool["description"]


async def test_two_teammates_spawned_at_once_reach_each_other(client, git_repo):
    """Two named Agent calls in one response: two adds run at once, and each newcomer can
    message the other by name, and every older member can message both."""
    d = {"description": "d", "prompt": "Greet e.", "name": "d"}
    e = {"description": "e", "prompt": "Wait for d.", "name": "e"}
    script = {
        "agents": [
            member("a", "done", {"text": "A-DONE"}, contains=["E-HEARD-D", "B-HEARD-E"]),
            member("a", "spawn", {"tool_use": [agent_call(d), agent_call(e)]}, lacks=["Greet e."]),
            member("a", "wait", {"text": "Waiting."}),
            member("d", "greet", {"tool_use": send("e", "HI-E-FROM-D")}, lacks=["Message queued"]),
            member("d", "idle", {"text": "D idle."}),
            member(
                "e",
                "answer",
                {"tool_use": [send("a", "E-HEARD-D"), send("b", "HI-B-FROM-E")]},
                contains=["HI-E-FROM-D"],
                lacks=["Message queued"],
            ),  # fmt: skip
            member("e", "idle", {"text": "E idle."}),
            member(
                "b",
                "answer",
                {"tool_use": send("a", "B-HEARD-E")},
                contains=["HI-B-FROM-E"],
                lacks=["Message queued"],
            ),  # fmt: skip
            member("b", "idle", {"text": "B idle."}),
            member("c", "idle", {"text": "C idle."}),
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            result = await (await start_team(client, queues, git_repo)).result()
    assert result.status == "completed", result
    # The two adds race (each is its own activity's update): either may be listed first.
    assert sorted((m.name, m.status) for m in result.members[3:]) == [
        ("d", "completed"),
        ("e", "completed"),
    ]
    assert result.lead_text == "A-DONE" and result.messages == 4


async def test_a_shutdown_while_a_teammate_starts_stops_it_too(client, git_repo):
    """The team begins to end while the member the lead added is still starting: it is
    stopped once started, and the team ends (it waited for ever for that member)."""
    held = threading.Event()
    # d's start ends while the team is still sending its stops, each held for 2 s.
    slow_d = Hold(1, child_suffix="/d", on_hold=held.set)
    slow_stops = Hold(2, signal="stop")
    with scripted_model(spawn_script()):
        async with running_workers(client, interceptors=[slow_d, slow_stops]) as queues:
            handle = await start_team(client, queues, git_repo)
            await wait_for(held.is_set)
            await handle.signal("shutdown", StopRequest(reason="enough"))
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "stopped"
    assert [m.name for m in result.members] == ["a", "b", "c", "d"]
    d = await client.get_workflow_handle(f"{handle.id}/d").describe()
    assert d.status == WorkflowExecutionStatus.COMPLETED


def agent_call(fields: dict) -> dict:
    return {"name": "Agent", "input": fields}


async def test_a_lead_started_alone_spawns_its_team(client, git_repo):
    """Claude Code's way to make a team: the lead starts with the task only and spawns its
    teammates (R69). Started from code with no teammate, as `outlast run --pattern team`
    without `--teammate` starts it."""
    from outlast.api import start_task

    writer = {"description": "writer", "prompt": "Write w.txt, then tell me.", "name": "w"}
    script = {
        "agents": [
            member("lead", "done", {"text": "LEAD-DONE"}, contains=["W-WROTE-IT"]),
            member(
                "lead", "spawn", {"tool_use": {"name": "Agent", "input": writer}}, lacks=["writer"]
            ),
            member("lead", "wait", {"text": "Waiting for w."}),
            {
                "name": "w",
                "match": {"agent_name": "w"},
                "after_last": "repeat_last",
                "turns": [
                    {"tool_use": {"name": "Bash", "input": {"command": "echo w > w.txt"}}},
                    {"tool_use": send("lead", "W-WROTE-IT")},
                    {"text": "W idle."},
                ],
            },
        ]
    }
    host = f"alone-{uuid.uuid4().hex[:6]}"
    queues = Queues(f"tq-{uuid.uuid4().hex[:8]}", f"outlast-host-{host}")
    with scripted_model(script):
        async with running_workers(client, queues=queues):
            task = await start_task(
                client, "Get w.txt written.", git_repo, pattern="team",
                task_queue=queues.task_queue, host_id=host, config=fast_config(),
            )  # fmt: skip
            result = await task.result()
            # A member's handle is bare (`agent()`): its result came as a dict.
            w_result = await task.agent("w").result()
    assert result.status == "completed", result
    assert isinstance(w_result, AgentResult) and w_result.status == "completed", w_result
    assert [(m.name, m.status) for m in result.members] == [
        ("lead", "completed"),
        ("w", "completed"),
    ]
    assert result.lead_text == "LEAD-DONE" and (git_repo / "w.txt").read_text() == "w\n"


async def test_a_lead_in_plan_mode_spawns_no_teammate(client, git_repo):
    """R76: a planning agent may launch only read-only agents, and a teammate is no
    exception: a general-purpose one would change files the lead may not yet."""
    script = {
        "agents": [
            {
                "name": "a",
                "match": {"agent_name": "a"},
                "after_last": "repeat_last",
                "turns": [
                    {
                        "tool_use": {
                            "name": "Agent",
                            "input": {"description": "w", "prompt": "Edit app.py", "name": "w"},
                        }
                    },
                    {"text": "A idle."},
                ],
            },
            member("b", "idle", {"text": "B idle."}),
        ]
    }
    inp = TeamInput(
        team_name="duo",
        workspace=Workspace(root=str(git_repo), host_queue="unset"),
        lead=TeammateSpec(name="a", prompt="Plan the change.", plan_mode_required=True),
        teammates=[TeammateSpec(name="b", prompt="Wait.")],
        config=fast_config(),
    )
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = inp.model_copy(
                update={"workspace": Workspace(root=str(git_repo), host_queue=queues.host_queue)}
            )
            handle = await client.start_workflow(
                "TeamWorkflow", inp, id=f"team-{uuid.uuid4().hex[:8]}",
                task_queue=queues.task_queue, result_type=TeamResult,
            )  # fmt: skip
            result = await handle.result()
    assert [m.name for m in result.members] == ["a", "b"]
    a_calls = [r for r in model.log if r["headers"].get("x-outlast-agent-name") == "a"]
    (refused,) = a_calls[1]["body"]["messages"][2]["content"]
    assert refused["is_error"] and "Plan mode is active: only read-only agents" in json.dumps(
        refused
    )


async def test_a_team_with_a_member_named_user_is_refused_when_it_starts(client, git_repo):
    """Its mail would read as the person's own words to its peers."""
    from temporalio.client import WorkflowFailureError

    from tests.workflows.test_team import start_team

    with scripted_model({"agents": [{"name": "any", "turns": [{"text": "unused"}]}]}) as model:
        async with running_workers(client) as queues:
            user = [TeammateSpec(name="user", prompt="p")]
            handle = await start_team(client, queues, git_repo, teammates=user)
            try:
                await handle.result()
                raise AssertionError("the team started")
            except WorkflowFailureError as e:
                assert "The name 'user' is reserved" in str(e.cause), e.cause
    assert model.log == []  # no member started
