"""The `WebSearch` activity (spec T15): a model call with the API's server-side `web_search`
tool; the results' titles and links, and what the model wrote about them, in their order,
are the tool's result.

Runs on the workflow's own queue, where the model calls run. A turn the API pauses in its
searches (`pause_turn`) is sent back to be continued, a few times. A search the API reports
as failed is part of the result; only an answer with nothing found and nothing written is an
`is_error` one. A model outage is a failure Temporal retries.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from temporalio import activity

from activities.heartbeats import heartbeating
from activities.llm import ask_once
from activities.web_fetch import WebToolOutput
from agents.messages import Usage
from agents.web_search import (
    WEB_SEARCH_AGENT_TYPE,
    WebSearchInput,
    results_text,
    search_prompt,
    server_tool,
)

MAX_CONTINUATIONS = 3
"""`pause_turn` answers sent back to be continued before the result is taken as it is."""
CALL_TIMEOUT_S = 200.0
"""Up to 8 searches and a summary: longer than a plain call, inside the 4-minute attempt."""


class WebSearchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    input: WebSearchInput
    model: str
    max_tokens: int = 4096
    agent_id: str = ""
    agent_name: str = ""


@activity.defn(name="tool.web_search")
async def web_search(req: WebSearchRequest) -> WebToolOutput:
    """The search results for the query, formatted for the agent to cite."""
    headers = {
        "x-outlast-agent-type": WEB_SEARCH_AGENT_TYPE,
        "x-outlast-agent-id": req.agent_id,
        "x-outlast-agent-name": req.agent_name,
    }
    messages: list[dict] = [{"role": "user", "content": search_prompt(req.input.query)}]
    blocks: list[dict] = []
    usage = Usage()
    async with heartbeating():
        for _ in range(1 + MAX_CONTINUATIONS):
            answer = await ask_once(
                req.model,
                req.max_tokens,
                messages,
                headers,
                tools=[server_tool(req.input)],
                timeout_s=CALL_TIMEOUT_S,
            )
            blocks += answer.blocks
            usage = usage + answer.usage
            if answer.stop_reason != "pause_turn":
                break
            # The API paused its own tool's turn: the same turn, sent back, goes on.
            messages = [messages[0], {"role": "assistant", "content": blocks}]
    text, is_error = results_text(req.input.query, blocks)
    return WebToolOutput(content=text, is_error=is_error, usage=usage)
