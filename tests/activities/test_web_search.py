"""WebSearch (T15): one call to the model with the API's own web_search tool (the scripted
model plays the API's part), the hits and the model's words formatted for the agent."""

from __future__ import annotations

import json

import anthropic
import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities.web_search import WebSearchRequest, web_search
from agents.web_search import WEB_SEARCH_AGENT_TYPE, WebSearchInput
from tests.support import scripted_model

HITS = [
    {"title": "Temporal Python SDK", "url": "https://docs.temporal.io/develop/python"},
    {"title": "temporalio on PyPI", "url": "https://pypi.org/project/temporalio/"},
]


def searcher(*turns: dict) -> dict:
    return {
        "agents": [
            {"name": "search", "match": {"agent_type": WEB_SEARCH_AGENT_TYPE}, "turns": list(turns)}
        ]
    }


def request(**kw) -> WebSearchRequest:
    return WebSearchRequest(input=WebSearchInput(query="temporal python sdk", **kw), model="m")


def test_the_input_is_checked():
    with pytest.raises(ValidationError):
        WebSearchInput(query=" x ")
    with pytest.raises(ValidationError, match="not both"):
        WebSearchInput(query="abc", allowed_domains=["a.org"], blocked_domains=["b.org"])
    inp = WebSearchInput(query=" q q ", allowed_domains=["https://Docs.Python.org/", " ", "a.io"])
    assert inp.query == "q q" and inp.allowed_domains == ["docs.python.org", "a.io"]
    with pytest.raises(ValidationError, match="not a domain name"):
        WebSearchInput(query="abc", blocked_domains=["example.com/path"])


async def test_the_hits_and_the_models_words_come_back_in_order_with_the_reminder():
    turn = {
        "web_search": {"query": "temporal python sdk", "results": HITS},
        "text": "The SDK is temporalio.",
    }
    with scripted_model(searcher(turn), log_bodies=True) as model:
        out = await ActivityEnvironment().run(web_search, request(allowed_domains=["temporal.io"]))
    assert not out.is_error and out.usage is not None
    head, links, words, reminder = out.content.split("\n\n")
    assert head == 'Web search results for query: "temporal python sdk"'
    assert json.loads(links.removeprefix("Links: ")) == HITS
    assert words == "The SDK is temporalio."
    assert reminder.startswith("REMINDER: You MUST include the sources")
    (tool,) = model.log[0]["body"]["tools"]
    assert tool == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 8,
        "allowed_domains": ["temporal.io"],
    }


async def test_a_paused_turn_is_sent_back_and_goes_on():
    paused = {"web_search": {"query": "first", "results": HITS[:1]}, "stop_reason": "pause_turn"}
    rest = {"web_search": {"query": "second", "results": HITS[1:]}, "text": "Both found."}
    with scripted_model(searcher(paused, rest), log_bodies=True) as model:
        out = await ActivityEnvironment().run(web_search, request())
    assert not out.is_error
    assert out.content.count("Links: ") == 2 and "Both found." in out.content
    second = model.log[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant"]
    assert [b["type"] for b in second[1]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert out.usage is not None
    assert out.usage.output_tokens == sum(e["usage"]["output_tokens"] for e in model.log)
    # Searches are billed per call: both answers' counts are summed.
    assert out.usage.web_search_requests == 2


async def test_a_failed_search_is_said_and_only_an_empty_answer_is_an_error():
    failed_but_wrote = {"web_search": {"query": "q", "error": "too_many_requests"}, "text": "Hm."}
    with scripted_model(searcher(failed_but_wrote)):
        out = await ActivityEnvironment().run(web_search, request())
    assert not out.is_error and "Web search error: too_many_requests" in out.content
    assert out.usage is not None and out.usage.web_search_requests == 0  # not billed
    assert out.content.split("\n\n")[2] == "Hm."
    failed = {"web_search": {"query": "q", "error": "max_uses_exceeded"}, "stop_reason": "end_turn"}
    with scripted_model(searcher(failed)):
        bare = await ActivityEnvironment().run(web_search, request())
    assert bare.is_error and "max_uses_exceeded" in bare.content
    empty = {"web_search": {"query": "q", "results": []}, "text": "Nothing."}
    with scripted_model(searcher(empty)):
        none = await ActivityEnvironment().run(web_search, request())
    assert not none.is_error and "No links found." in none.content


async def test_a_search_the_request_did_not_offer_is_refused_like_the_api_would():
    with scripted_model(searcher({"web_search": {"query": "q"}, "text": "t"})) as model:
        client = anthropic.Anthropic(base_url=model.url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="offers no web_search tool"):
            client.messages.create(
                model="m",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"x-outlast-agent-type": WEB_SEARCH_AGENT_TYPE},
            )


async def test_the_streamed_answer_carries_the_search_blocks_too():
    turn = {"web_search": {"query": "q", "results": HITS[:1]}, "text": "One hit."}
    with scripted_model(searcher(turn)) as model:
        client = anthropic.Anthropic(base_url=model.url, api_key="k", max_retries=0)
        with client.messages.stream(
            model="m",
            max_tokens=10,
            messages=[{"role": "user", "content": "search"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
            extra_headers={"x-outlast-agent-type": WEB_SEARCH_AGENT_TYPE},
        ) as stream:
            message = stream.get_final_message()
    kinds = [b.type for b in message.content]
    assert kinds == ["server_tool_use", "web_search_tool_result", "text"]
    assert message.content[0].input == {"query": "q"}
    assert message.content[1].content[0].url == HITS[0]["url"]
    assert message.usage.server_tool_use.web_search_requests == 1
