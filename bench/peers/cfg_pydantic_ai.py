"""(c) pydantic-ai's Temporal integration (pydantic_ai.durable_exec.temporal).

From shared/bench-peers: a regular `Agent` with the `TemporalDurability` capability,
registered on a workflow via `__pydantic_ai_agents__` and `PydanticAIPlugin`; the model is a
zero-latency `FunctionModel` running the same stateless script as the other rows, and the
tool `Read` is an async function tool (a Temporal activity by default).

Added here: (c-http) the same agent with pydantic-ai's own `AnthropicModel` pointed at the
scripted HTTP server Outlast uses (`outlast fake-model`, ANTHROPIC_BASE_URL), so one peer
row pays exactly the model path Outlast pays (an HTTP round trip through `anthropic`).
"""

from __future__ import annotations

import asyncio
import os

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from common import FINAL_TEXT, SYSTEM_PROMPT, TOOL_NAME, parse_prompt, read_impl, user_prompt
    from pydantic_ai import Agent, Tool
    from pydantic_ai.durable_exec.temporal import PydanticAIWorkflow, TemporalDurability
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.usage import UsageLimits


# pydantic-ai's default UsageLimits(request_limit=50) would stop a 50-turn run (51 requests).
LIMITS = UsageLimits(request_limit=100_000)


def scripted_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = next(
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    n, path = parse_prompt(prompt if isinstance(prompt, str) else str(prompt))
    k = sum(
        1
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    )
    if k < n:
        call = ToolCallPart(TOOL_NAME, {"file_path": path}, tool_call_id=f"call_{k}")
        return ModelResponse(parts=[call])
    return ModelResponse(parts=[TextPart(FINAL_TEXT)])


async def read(file_path: str) -> str:
    """Read a file and return its text."""
    return read_impl(file_path)


def _agent(name: str, model) -> Agent:
    return Agent(
        model,
        name=name,
        instructions=SYSTEM_PROMPT,
        tools=[Tool(read, name=TOOL_NAME)],
        capabilities=[TemporalDurability()],
    )


def _http_model() -> AnthropicModel:
    # The worker's environment points at the scripted server; the driver never imports this.
    provider = AnthropicProvider(
        base_url=os.environ.get("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        api_key=os.environ.get("ANTHROPIC_API_KEY", "bench"),
    )
    return AnthropicModel("claude-sonnet-5-5", provider=provider)


bench_agent = _agent("bench_agent", FunctionModel(scripted_fn, model_name="scripted"))
http_agent = _agent("http_agent", _http_model())


async def _run(agent: Agent, prompt: str) -> str:
    return (await agent.run(prompt, usage_limits=LIMITS)).output


@workflow.defn(name="PydAgent")
class PydAgent(PydanticAIWorkflow):
    __pydantic_ai_agents__ = [bench_agent]

    @workflow.run
    async def run(self, prompt: str) -> str:
        return await _run(bench_agent, prompt)


@workflow.defn(name="PydAgentHttp")
class PydAgentHttp(PydanticAIWorkflow):
    __pydantic_ai_agents__ = [http_agent]

    @workflow.run
    async def run(self, prompt: str) -> str:
        return await _run(http_agent, prompt)


@workflow.defn(name="PydFanout")
class PydFanout(PydanticAIWorkflow):
    """mode="child": each sub-agent run is a PydAgent child workflow;
    mode="inline": n_children `bench_agent.run()` calls gathered inside this workflow."""

    __pydantic_ai_agents__ = [bench_agent]

    @workflow.run
    async def run(self, n_children: int, child_turns: int, path: str, mode: str) -> list[str]:
        prompts = [user_prompt(child_turns, path, worker=i) for i in range(n_children)]
        if mode == "child":
            wid = workflow.info().workflow_id
            runs = (
                workflow.execute_child_workflow(PydAgent.run, p, id=f"{wid}-c{i}")
                for i, p in enumerate(prompts)
            )
        else:
            runs = (_run(bench_agent, p) for p in prompts)
        return list(await asyncio.gather(*runs))


WORKFLOWS = [PydAgent, PydAgentHttp, PydFanout]
ACTIVITIES: list = []  # registered by PydanticAIPlugin from __pydantic_ai_agents__


def plugins() -> list:
    from pydantic_ai.durable_exec.temporal import PydanticAIPlugin

    return [PydanticAIPlugin()]
