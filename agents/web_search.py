"""`WebSearch` (spec T15): search the web through the model API's own search tool and hand
the agent the results and their sources.

Carried out by one activity on the workflow's own queue (activities/web_search.py), which
asks a model with the API's server-side `web_search` tool, as Claude Code does; only the
formatted result reaches history. Only the contract, the texts and the pure decisions live
here.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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

    @field_validator("query")
    @classmethod
    def _words(cls, value: str) -> str:
        if len(value.strip()) < 2:
            raise ValueError("must have at least 2 characters besides spaces")
        return value.strip()

    @field_validator("allowed_domains", "blocked_domains")
    @classmethod
    def _domains(cls, value: list[str] | None) -> list[str] | None:
        """Domain names as the API takes them: `https://Docs.Python.org/` is
        `docs.python.org`; a path or a space is refused; empty entries go."""
        if value is None:
            return None
        names = []
        for raw in value:
            name = raw.strip().lower().removeprefix("https://").removeprefix("http://")
            name = name.rstrip("/")
            if not name:
                continue
            if "/" in name or " " in name:
                raise ValueError(f"{raw!r} is not a domain name (e.g. example.com)")
            names.append(name)
        return names

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


def results_text(query: str, blocks: list[dict]) -> tuple[str, bool]:
    """The agent's result from the answer's blocks, in their order (Claude Code's layout):
    each run of text as one part (its blocks joined as they are: citations split sentences),
    each search as its `Links:` (or "No links found.", or its error). Also whether it is an
    error: nothing was found and nothing written, and a search failed."""
    parts: list[str] = []
    run: list[str] = []
    found = failed = False
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            run.append(str(block.get("text", "")))
            continue
        if run:
            parts.append("".join(run).strip())
            run = []
        if kind != "web_search_tool_result":
            continue
        content = block.get("content")
        if isinstance(content, dict):  # web_search_tool_result_error
            failed = True
            parts.append(f"Web search error: {content.get('error_code') or 'unknown error'}")
            continue
        hits = [
            SearchHit(title=str(item.get("title", "")), url=str(item["url"]))
            for item in content or []
            if isinstance(item, dict) and item.get("type") == "web_search_result"
        ]
        if hits:
            found = True
            links = json.dumps([h.model_dump() for h in hits], ensure_ascii=False)
            parts.append(f"Links: {links}")
        else:
            parts.append("No links found.")
    if run:
        parts.append("".join(run).strip())
    wrote = any(p and not p.startswith(("Links: ", "No links", "Web search error")) for p in parts)
    text = "\n\n".join(
        [
            f'Web search results for query: "{query}"',
            *[p for p in parts if p],
            "REMINDER: You MUST include the sources above in your response to the user using "
            "markdown hyperlinks.",
        ]
    )
    return text, failed and not found and not wrote


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
