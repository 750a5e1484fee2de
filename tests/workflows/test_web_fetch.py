"""WebFetch (T15) in an agent: the page is fetched and read by the small model on the
workflow's queue; the agent gets the answer, and history never holds the page."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowFailureError

from agents.web_fetch import WEB_FETCH_AGENT_TYPE
from tests.activities.test_web_fetch import HTML, PAGE, site
from tests.support import (
    agent_input,
    fast_config,
    running_workers,
    scripted_model,
    start,
    tool_results,
)


async def test_an_agent_fetches_a_page_and_gets_the_small_models_answer(client, git_repo):
    with site({"/notes": (200, HTML, PAGE)}) as base:
        url = f"{base}/notes"
        script = {
            "agents": [
                {
                    "name": "reader",
                    "match": {"agent_type": WEB_FETCH_AGENT_TYPE},
                    "turns": [{"text": "Version 2.0 adds docs."}],
                },
                {
                    "name": "main",
                    "turns": [
                        {
                            "tool_use": [
                                {
                                    "name": "WebFetch",
                                    "input": {"url": url, "prompt": "What's new?"},
                                },
                                {"name": "WebFetch", "input": {"url": "notaurl", "prompt": "x"}},
                            ]
                        },
                        {"text": "2.0 adds docs."},
                    ],
                },
            ]
        }
        config = fast_config()
        tools = config.tools.model_copy(update={"web_fetch_private_hosts": True})
        config = config.model_copy(update={"tools": tools})
        with scripted_model(script, log_bodies=True) as model:
            async with running_workers(client) as queues:
                inp = agent_input("what is new in 2.0?", git_repo, queues, config=config)
                handle = await start(client, inp, queues)
                result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed", result.error
    answer, invalid = tool_results(result)
    assert answer.content == "Version 2.0 adds docs." and not answer.is_error
    assert invalid.is_error and "fully-formed" in invalid.content
    summarizer = [e for e in model.log if e["headers"].get("x-outlast-agent-type") == "web-fetch"]
    assert len(summarizer) == 1 and summarizer[0]["body"]["model"] == "claude-haiku-5-5"
    events = [e async for e in handle.fetch_history_events()]
    history = b"".join(e.SerializeToString() for e in events)
    assert b"Release notes" not in history  # the page stayed in the activity
    assert b"Version 2.0 adds docs." in history


async def test_an_agent_searches_and_the_searchs_tokens_count_in_its_usage(client, git_repo):
    hits = [{"title": "Temporal docs", "url": "https://docs.temporal.io/"}]
    script = {
        "agents": [
            {
                "name": "search",
                "match": {"agent_type": "web-search"},
                "turns": [{"web_search": {"query": "temporal", "results": hits}, "text": "Docs."}],
            },
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "WebSearch", "input": {"query": "temporal docs"}}},
                    {"text": "See [Temporal docs](https://docs.temporal.io/)."},
                ],
            },
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("find the docs", git_repo, queues), queues)
            result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "completed", result.error
    (found,) = tool_results(result)
    assert not found.is_error and '"url": "https://docs.temporal.io/"' in found.content
    calls = {e["agent"]: e for e in model.log}
    # The agent's own model searched (no tools.web_search_model set).
    assert calls["search"]["body"]["model"] == calls["main"]["body"]["model"]
    spent = [e["usage"] for e in model.log]
    assert result.usage.tokens.output_tokens == sum(u["output_tokens"] for u in spent)
    assert result.usage.tokens.web_search_requests == 1


async def test_tools_an_operator_disabled_are_not_offered_and_a_typo_is_refused(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "WebSearch", "input": {"query": "anything"}}},
                    {"text": "No web here."},
                ],
            }
        ]
    }
    config = fast_config()
    off = config.model_copy(
        update={"tools": config.tools.model_copy(update={"disabled": ["WebSearch", "WebFetch"]})}
    )
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("search", git_repo, queues, config=off), queues
            )
            result = await asyncio.wait_for(handle.result(), timeout=60)
            typo = config.model_copy(
                update={"tools": config.tools.model_copy(update={"disabled": ["WebSerch"]})}
            )
            bad = await start(client, agent_input("x", git_repo, queues, config=typo), queues)
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(bad.result(), timeout=60)
    (refused,) = tool_results(result)
    assert refused.is_error and "No such tool available" in refused.content
    offered = {t["name"] for t in model.log[0]["body"]["tools"]}
    assert "WebSearch" not in offered and "WebFetch" not in offered and "Read" in offered
    assert "tools.disabled names no tool: WebSerch" in str(failed.value.cause)
