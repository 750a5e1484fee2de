"""`WebSearch` (spec T15): search the web through the model API's own search tool and hand
the agent the results and their sources.

Carried out by one activity on the workflow's own queue (activities/web_search.py), which
asks a model with the API's server-side `web_search` tool, as Claude Code does; only the
formatted result reaches history. Only the contract, the texts and the pure decisions live
here.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, model_validator

WEB_SEARCH_TOOL = "WebSearch"
WEB_SEARCH_AGENT_TYPE = "web-search"
"""The search call's agent type (`x-outlast-agent-type`), so a scripted model can answer it."""
SERVER_TOOL = "web_search_20250305"
MAX_SEARCHES = 8
"""Searches the model may make for one WebSearch call (the API's `max_uses`)."""


class WebSearchInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    query: str = Field(min_length=2, max_length=500, description="The search query to use")
    allowed_domains: list[str] | None = Field(
        default=None, max_length=50, description="Only include search results from these domains"
    )
    blocked_domains: list[str] | None = Field(
        default=None, max_length=50, description="Never include search results from these domains"
    )

    @model_validator(mode="after")
    def _one_list(self) -> WebSearchInput:
        if self.allowed_domains and self.blocked_domains:
            raise ValueError("give allowed_domains or blocked_domains, not both")
        return self


class SearchHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    title: str
    url: str


def server_tool(inp: WebSearchInput) -> dict:
    """The API's web search tool, as the request's `tools` entry."""
    tool: dict = {"type": SERVER_TOOL, "name": "web_search", "max_uses": MAX_SEARCHES}
    if inp.allowed_domains:
        tool["allowed_domains"] = list(inp.allowed_domains)
    if inp.blocked_domains:
        tool["blocked_domains"] = list(inp.blocked_domains)
    return tool


def search_prompt(query: str) -> str:
    return f"Perform a web search for the query: {query}"


def results_text(query: str, hits: list[SearchHit], text: str) -> str:
    """What the agent gets: the links, what the model made of them, and the reminder to cite
    them (Claude Code's shape)."""
    links = json.dumps([h.model_dump() for h in hits], ensure_ascii=False)
    parts = [f'Web search results for query: "{query}"', f"Links: {links}"]
    if text:
        parts.append(text)
    parts.append(
        "REMINDER: You MUST include the sources above in your response to the user using "
        "markdown hyperlinks."
    )
    return "\n\n".join(parts)


def no_results_text(query: str) -> str:
    return f'Web search results for query: "{query}"\n\nNo results found.'


def search_error_text(code: str) -> str:
    return f"Web search failed: {code}. Try again later, or with another query."


WEB_SEARCH_DESCRIPTION = """\
- Allows you to search the web and use the results to inform responses
- Provides up-to-date information for current events and recent data
- Returns search result information formatted as search result blocks, including links as \
markdown hyperlinks
- Use this tool for accessing information beyond your knowledge cutoff
- Searches are performed automatically within a single API call

CRITICAL REQUIREMENT - You MUST follow this:
  - After answering the user's question, you MUST include a "Sources:" section at the end \
of your response
  - In the Sources section, list all relevant URLs from the search results as markdown \
hyperlinks: [Title](URL)
  - This is MANDATORY - never skip including sources in your response

Usage notes:
  - Domain filtering is supported to include or block specific websites (not both at once)
  - Use the current year (Today's date, in your environment) when searching for recent \
information, documentation or current events."""
