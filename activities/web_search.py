"""The `WebSearch` activity (spec T15): one model call with the API's server-side
`web_search` tool; the results' titles and links, and what the model wrote about them, are
the tool's result.

Runs on the workflow's own queue, where the model calls run. A search the API reports as
failed (`web_search_tool_result_error`: too many requests, a query too long, ...) is an
`is_error` answer the agent can act on; a model outage is a failure Temporal retries.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.llm import ask_once, text_of
from activities.web_fetch import WebToolOutput
from activities.workspace import heartbeating
from agents.web_search import (
    WEB_SEARCH_AGENT_TYPE,
    SearchHit,
    WebSearchInput,
    no_results_text,
    results_text,
    search_error_text,
    search_prompt,
    server_tool,
)


class WebSearchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    input: WebSearchInput
    model: str
    max_tokens: int = 4096
    agent_id: str = ""
    agent_name: str = ""


def read_results(blocks: list[dict[str, Any]]) -> tuple[list[SearchHit], str | None]:
    """The hits of every search the answer holds, and the first error code, if any."""
    hits: list[SearchHit] = []
    error = None
    for block in blocks:
        if block.get("type") != "web_search_tool_result":
            continue
        content = block.get("content")
        if isinstance(content, dict):  # web_search_tool_result_error
            error = error or str(content.get("error_code") or "unknown error")
            continue
        for item in content or []:
            if isinstance(item, dict) and item.get("type") == "web_search_result":
                hits.append(SearchHit(title=str(item.get("title", "")), url=str(item["url"])))
    return hits, error


@activity.defn(name="tool.web_search")
async def web_search(req: WebSearchRequest) -> WebToolOutput:
    """The search results for the query, formatted for the agent to cite."""
    headers = {
        "x-outlast-agent-type": WEB_SEARCH_AGENT_TYPE,
        "x-outlast-agent-id": req.agent_id,
        "x-outlast-agent-name": req.agent_name,
    }
    async with heartbeating():
        blocks, usage = await ask_once(
            req.model,
            req.max_tokens,
            search_prompt(req.input.query),
            headers,
            tools=[server_tool(req.input)],
        )
    hits, error = read_results(blocks)
    if error is not None and not hits:
        return WebToolOutput(content=search_error_text(error), is_error=True, usage=usage)
    if not hits:
        return WebToolOutput(content=no_results_text(req.input.query), usage=usage)
    text = results_text(req.input.query, hits, text_of(blocks))
    return WebToolOutput(content=text, usage=usage)
