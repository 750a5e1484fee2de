"""(d) Temporal's OpenAI Agents SDK integration (temporalio.openai_agents, package
temporalio-openai-agents; temporalio.contrib.openai_agents re-exports it).

From shared/bench-peers: the model is a zero-latency scripted `agents.Model` served by a
`ModelProvider` given to `OpenAIAgentsPlugin` (the pattern of the integration's own
`testing.TestModel`); every model call runs in the plugin's model activity (d) or, with
`ModelActivityParameters(use_local_activity=True)`, as a local activity (d2). The tool is a
Temporal activity exposed with `activity_as_tool` (the integration's way to make a tool an
activity). Changed here: the tool reads a file instead of echoing an integer, and the
in-process (d0) variant is gone (this harness compares durable runs only).

This module imports `agents` (openai-agents), which is why the family runs in its own venv:
Outlast has a top-level `agents` package of its own.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from common import (
        FINAL_TEXT,
        SYSTEM_PROMPT,
        fanout_prompt,
        parse_fanout,
        parse_prompt,
        read_impl,
        user_prompt,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from agents import Agent, Model, ModelProvider, ModelResponse, Runner, Usage

MAX_TURNS = 10_000  # the SDK's default max_turns is 10 model calls


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(_get(c, "text") or "") for c in content)
    return str(content)


def _tool_call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        arguments=json.dumps(args),
        call_id=call_id,
        name=name,
        type="function_call",
        id=f"fc_{call_id}",
        status="completed",
    )


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_final",
        content=[ResponseOutputText(text=text, annotations=[], type="output_text")],
        role="assistant",
        status="completed",
        type="message",
    )


class ScriptedModel(Model):
    """Stateless scripted model over Responses-API input items."""

    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        **kwargs: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        prompt = next(_text(_get(it, "content")) for it in items if _get(it, "role") == "user")
        outputs = sum(1 for it in items if _get(it, "type") == "function_call_output")
        fan = parse_fanout(prompt)
        if fan is not None:  # orchestrator for the agent-as-tool fan-out
            n_children, child_turns, path = fan
            if outputs == 0:
                out = [
                    _tool_call(
                        "sub_agent", {"input": user_prompt(child_turns, path, j)}, f"sub_{j}"
                    )
                    for j in range(n_children)
                ]
            else:
                out = [_message(FINAL_TEXT)]
        else:
            n, path = parse_prompt(prompt)
            # The tool's name is whatever the agent registered (activity_as_tool names it
            # after the function), so take it from the request rather than hard-coding it.
            name = tools[0].name
            done = outputs >= n
            out = (
                [_message(FINAL_TEXT)]
                if done
                else [_tool_call(name, {"file_path": path}, f"call_{outputs}")]
            )
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError


class ScriptedProvider(ModelProvider):
    def __init__(self) -> None:
        self._model = ScriptedModel()

    def get_model(self, model_name: str | None) -> Model:
        return self._model


@activity.defn(name="Read")
async def Read(file_path: str) -> str:  # named like the tool it becomes
    """Read a file and return its text."""
    return read_impl(file_path)


ACTIVITIES = [Read]


def _temporal_agent() -> Agent:
    from temporalio.openai_agents.workflow import activity_as_tool

    return Agent(
        name="bench_agent",
        instructions=SYSTEM_PROMPT,
        model="scripted",
        tools=[activity_as_tool(Read, start_to_close_timeout=timedelta(seconds=30))],
    )


async def _run(prompt: str) -> str:
    result = await Runner.run(_temporal_agent(), input=prompt, max_turns=MAX_TURNS)
    return str(result.final_output)


@workflow.defn(name="OAIAgent")
class OAIAgent:
    @workflow.run
    async def run(self, prompt: str) -> str:
        return await _run(prompt)


@workflow.defn(name="OAIFanout")
class OAIFanout:
    """mode="child":  each sub-agent is an OAIAgent child workflow;
    mode="inline": n_children `Runner.run()` calls gathered inside this workflow;
    mode="tool":   the SDK's own sub-agent pattern: an orchestrator agent whose model returns
                   n_children parallel calls to `sub_agent.as_tool()` in one response."""

    @workflow.run
    async def run(self, n_children: int, child_turns: int, path: str, mode: str) -> list[str]:
        prompts = [user_prompt(child_turns, path, worker=i) for i in range(n_children)]
        if mode == "child":
            wid = workflow.info().workflow_id
            runs = (
                workflow.execute_child_workflow(OAIAgent.run, p, id=f"{wid}-c{i}")
                for i, p in enumerate(prompts)
            )
            return list(await asyncio.gather(*runs))
        if mode == "inline":
            return list(await asyncio.gather(*(_run(p) for p in prompts)))
        sub = _temporal_agent()
        orchestrator = Agent(
            name="orchestrator",
            instructions=SYSTEM_PROMPT,
            model="scripted",
            tools=[sub.as_tool(tool_name="sub_agent", tool_description="Run a sub-agent.")],
        )
        prompt = fanout_prompt(n_children, child_turns, path)
        r = await Runner.run(orchestrator, input=prompt, max_turns=MAX_TURNS)
        return [str(r.final_output)]


WORKFLOWS = [OAIAgent, OAIFanout]


def plugins(local: bool = False) -> list:
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin

    params = ModelActivityParameters(
        start_to_close_timeout=timedelta(seconds=30), use_local_activity=local
    )
    return [OpenAIAgentsPlugin(model_params=params, model_provider=ScriptedProvider())]
