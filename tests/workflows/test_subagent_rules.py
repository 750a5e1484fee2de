"""Spawn rules: bad input starts nothing, type resolution, nesting, lineage (R2-R4, R13, R16)."""

from __future__ import annotations

import asyncio
import re

from temporalio.api.enums.v1 import EventType

from agents.config import AgentSettings, OutlastConfig
from tests.support import (
    FAST_MODEL,
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from workflows.contracts import AgentResult


async def started_children(handle) -> int:
    count = 0
    async for event in handle.fetch_history_events():
        count += event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    return count


def agent_call(**inp) -> dict:
    return {"name": "Agent", "input": {"description": "do a thing", "prompt": "do it", **inp}}


async def test_bad_agent_calls_are_errors_and_start_nothing(client, git_repo):
    config = fast_config(agents=AgentSettings(deny_rules=["Agent(Plan)"]))
    script = {
        "agents": [
            {
                "name": "parent",
                "turns": [
                    {
                        "tool_use": [
                            agent_call(name="main"),
                            agent_call(name="-x"),
                            agent_call(subagent_type="Wizard"),
                            agent_call(subagent_type="Plan"),
                            {"name": "Agent", "input": {"prompt": "no description"}},
                            agent_call(isolation="remote"),
                            agent_call(team_name="ghost"),  # this agent is in no team
                            # Their mail would read as the person's own words.
                            agent_call(name="user"),
                            agent_call(name="parent"),
                        ]
                    },
                    {"text": "all refused"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result = await handle.result()
    results = tool_results(result)
    assert [r.is_error for r in results] == [True] * 9
    texts = [r.content for r in results]
    assert "reserved for the main conversation" in texts[0]
    assert "must start with a letter or digit" in texts[1]
    assert (
        "Agent type 'Wizard' not found. Available agents: general-purpose, Explore, Plan"
        in texts[2]
    )
    assert "Agent type 'Plan' has been denied by permission rule 'Agent(Plan)'" in texts[3]
    assert "`description` is missing" in texts[4]
    assert "isolation" in texts[5]
    assert "There is no team 'ghost' here: you are not in a team" in texts[6]
    assert all("reserved: mail under it reads as the user's" in t for t in texts[7:]), texts
    assert await started_children(handle) == 0


async def test_with_background_tasks_off_a_child_that_plans_first_is_refused(client, git_repo):
    """R16: no background tasks, so sub-agents run sync; one that plans first would wait for
    its parent's approval while the parent waits for it. It ran in the background anyway."""
    config = fast_config(agents=AgentSettings(background_tasks_disabled=True))
    script = {
        "agents": [
            {"name": "parent", "turns": [{"tool_use": agent_call(mode="plan")}, {"text": "ok"}]}
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues, config=config), queues)
            result = await handle.result()
    (refused,) = tool_results(result)
    assert refused.is_error and "Background tasks are disabled" in refused.content
    assert "leave out mode" in refused.content
    assert await started_children(handle) == 0
    (agent_tool,) = [t for t in model.log[0]["body"]["tools"] if t["name"] == "Agent"]
    assert not {"mode", "run_in_background"} & set(agent_tool["input_schema"]["properties"])


async def test_subagents_cannot_nest_by_default_and_depth_is_enforced(client, git_repo):
    nested = OutlastConfig(
        model=FAST_MODEL, agents=AgentSettings(allow_nested_agents=True, max_depth=1)
    )
    script = {
        "agents": [
            {
                "name": "kid",
                "match": {"agent_name": "kid"},
                "turns": [
                    {"tool_use": agent_call(name="grandkid")},
                    {"text": "could not nest"},
                ],
            },
            {
                "name": "parent",
                "turns": [
                    {"tool_use": agent_call(name="kid")},
                    {"text": "done"},
                ],
            },
        ]
    }
    for config, expect in (
        (None, "No such tool available: Agent"),
        (nested, "Agent nesting depth limit reached (max_depth=1)"),
    ):
        with scripted_model(script) as model:
            async with running_workers(client) as queues:
                kw = {"config": config} if config else {}
                handle = await start(client, agent_input("go", git_repo, queues, **kw), queues)
                await handle.result()
                kid = await client.get_workflow_handle(
                    f"{handle.id}/kid", result_type=AgentResult
                ).result()
        kid_tools = next(r["tools"] for r in model.log if r["agent"] == "kid")
        assert ("Agent" in kid_tools) is (config is not None)
        assert not {"TaskStop", "AskUserQuestion"} & set(kid_tools)
        assert expect in tool_results(kid)[0].content
        assert await started_children(client.get_workflow_handle(f"{handle.id}/kid")) == 0


async def test_lineage_is_in_search_attributes(client, git_repo):
    script = {
        "agents": [
            {"name": "a", "match": {"agent_name": "a"}, "turns": [{"text": "a done"}]},
            {"name": "b", "match": {"agent_name": "b"}, "turns": [{"text": "b done"}]},
            {
                "name": "parent",
                "turns": [
                    {"tool_use": [agent_call(name="a"), agent_call(name="b")]},
                    {"text": "done"},
                ],
            },
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            await handle.result()
    found = []
    for _ in range(50):
        found = [w async for w in client.list_workflows(f"SessionId = '{handle.id}'")]
        if len(found) == 3:
            break
        await asyncio.sleep(0.2)
    assert len(found) == 3
    attrs = {w.id: w.typed_search_attributes for w in found}
    from workflows import search_attributes as sa

    depths = sorted(a.get(sa.AGENT_DEPTH) for a in attrs.values())
    assert depths == [0, 1, 1]
    chains = {a.get(sa.CHAIN_ID) for a in attrs.values()}
    assert len(chains) == 3
    ids = {a.get(sa.AGENT_ID) for a in attrs.values()}
    assert all(re.fullmatch(r"a[0-9a-f]{16}", i) for i in ids)
    assert {a.get(sa.AGENT_STATUS) for a in attrs.values()} == {"completed"}
    child = attrs[f"{handle.id}/a"]
    assert child.get(sa.PARENT_AGENT_ID) == attrs[handle.id].get(sa.AGENT_ID)
    assert child.get(sa.AGENT_NAME) == "a"
