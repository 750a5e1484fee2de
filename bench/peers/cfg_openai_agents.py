"""(d) Temporal's OpenAI Agents SDK integration (temporalio.openai_agents, package
temporalio-openai-agents; temporalio.contrib.openai_agents re-exports it).

From shared/bench-peers: the model is a zero-latency scripted `agents.Model` served by a
`ModelProvider` given to `OpenAIAgentsPlugin` (the pattern of the integration's own
`testing.TestModel`); every model call runs in the plugin's model activity (d) or, with
`ModelActivityParameters(use_local_activity=True)`, as a local activity (d2). The tool is a
Temporal activity exposed with `activity_as_tool` (the integration's way to make a tool an
activity). Changed here: the tool reads a file instead of echoing an integer, and the
in-process (d0) variant is gone (this harness compares durable runs only).

Added here: (d-http) an agent whose model is "http" calls the scripted HTTP server Outlast
uses (`outlast fake-model`, ANTHROPIC_BASE_URL) through `anthropic`, streamed, on the transport
Outlast's activity uses: the model path Outlast pays, inside the plugin's own model activity.
openai-agents ships no Anthropic model (its LiteLLM extension would add a translation layer of
its own), so `AnthropicHttpModel` maps Responses-API items to the Messages API and back. Every
model call has one attempt, as Outlast's have in this harness.

This module imports `agents` (openai-agents), which is why the family runs in its own venv:
Outlast has a top-level `agents` package of its own.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from common import (
        FINAL_TEXT,
        SYSTEM_PROMPT,
        anthropic_client,
        fanout_prompt,
        oai_fanout_prompt,
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

    from agents import (
        Agent,
        Model,
        ModelProvider,
        ModelResponse,
        Runner,
        ToolCallOutputItem,
        Usage,
    )

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


# ---- (d-http) the model over HTTP: Responses-API items <-> Anthropic Messages API --------


def _append(wire: list[dict[str, Any]], role: str, block: dict[str, Any]) -> None:
    """Add a block to the last message if it has `role`, else open a new message: a model
    answer's parallel tool calls are one assistant message, their results one user message."""
    if wire and wire[-1]["role"] == role:
        wire[-1]["content"].append(block)
    else:
        wire.append({"role": role, "content": [block]})


def to_messages(input: Any) -> list[dict[str, Any]]:
    """The Messages API `messages` for a Responses-API input (a string or a list of items)."""
    if isinstance(input, str):
        return [{"role": "user", "content": [{"type": "text", "text": input}]}]
    wire: list[dict[str, Any]] = []
    for item in input:
        kind, role = _get(item, "type"), _get(item, "role")
        if kind == "function_call":
            args = json.loads(_get(item, "arguments") or "{}")
            use = {"type": "tool_use", "id": _get(item, "call_id"), "name": _get(item, "name")}
            _append(wire, "assistant", {**use, "input": args})
        elif kind == "function_call_output":
            result = {"type": "tool_result", "tool_use_id": _get(item, "call_id")}
            _append(wire, "user", {**result, "content": _text(_get(item, "output"))})
        elif role in ("user", "assistant"):
            text = _text(_get(item, "content"))
            _append(wire, role, {"type": "text", "text": text})
        else:
            raise ValueError(f"no Messages API form for input item {item!r}"[:300])
    return wire


class AnthropicHttpModel(Model):
    """A streamed Messages call per model call, through the SDK and transport Outlast's
    `llm.call_model` uses (the SDK's `messages.stream()` helper here; Outlast's activity
    streams with `messages.create(stream=True)` and its own accumulator)."""

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
        wire_tools = [
            {"name": t.name, "description": t.description, "input_schema": t.params_json_schema}
            for t in tools
        ]
        async with anthropic_client().messages.stream(
            model="claude-sonnet-5-5",
            max_tokens=32000,
            system=system_instructions or "",
            tools=wire_tools,
            messages=to_messages(input),
        ) as stream:
            final = await stream.get_final_message()
        out: list[Any] = [
            _tool_call(b.name, b.input, b.id) for b in final.content if b.type == "tool_use"
        ]
        text = "".join(b.text for b in final.content if b.type == "text")
        if text:
            out.insert(0, _message(text))
        return ModelResponse(output=out, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError


class ScriptedProvider(ModelProvider):
    """The model an agent names: "http" calls the scripted HTTP server, anything else is the
    in-process scripted model."""

    def __init__(self) -> None:
        self._scripted = ScriptedModel()
        self._http = AnthropicHttpModel()

    def get_model(self, model_name: str | None) -> Model:
        # Any other name is a mistake that would quietly measure the wrong model path.
        models = {"scripted": self._scripted, "http": self._http}
        if model_name not in models:
            raise ValueError(f"model {model_name!r}: this bench serves 'scripted' or 'http'")
        return models[model_name]


@activity.defn(name="Read")
async def Read(file_path: str) -> str:  # named like the tool it becomes
    """Read a file and return its text."""
    return read_impl(file_path)


ACTIVITIES = [Read]


def _temporal_agent(model: str = "scripted") -> Agent:
    from temporalio.openai_agents.workflow import activity_as_tool

    return Agent(
        name="bench_agent",
        instructions=SYSTEM_PROMPT,
        model=model,
        tools=[activity_as_tool(Read, start_to_close_timeout=timedelta(seconds=30))],
    )


async def _run(prompt: str, model: str = "scripted") -> str:
    result = await Runner.run(_temporal_agent(model), input=prompt, max_turns=MAX_TURNS)
    return str(result.final_output)


@workflow.defn(name="OAIAgent")
class OAIAgent:
    @workflow.run
    async def run(self, prompt: str, model: str = "scripted") -> str:
        return await _run(prompt, model)


@workflow.defn(name="OAIFanout")
class OAIFanout:
    """mode="child":  each sub-agent is an OAIAgent child workflow;
    mode="inline": n_children `Runner.run()` calls gathered inside this workflow;
    mode="tool":   the SDK's own sub-agent pattern: an orchestrator agent whose model returns
                   n_children parallel calls to `sub_agent.as_tool()` in one response.
    model: "scripted" (in process) or "http" (tool mode only: every agent calls the
    scripted HTTP server)."""

    @workflow.run
    async def run(
        self, n_children: int, child_turns: int, path: str, mode: str, model: str = "scripted"
    ) -> list[str]:
        if model != "scripted" and mode != "tool":
            raise ValueError(f"model {model!r} is only wired for mode 'tool'")
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
        sub = _temporal_agent(model)
        orchestrator = Agent(
            name="orchestrator",
            instructions=SYSTEM_PROMPT,
            model=model,
            tools=[sub.as_tool(tool_name="sub_agent", tool_description="Run a sub-agent.")],
        )
        make_prompt = oai_fanout_prompt if model == "http" else fanout_prompt
        prompt = make_prompt(n_children, child_turns, path)
        r = await Runner.run(orchestrator, input=prompt, max_turns=MAX_TURNS)
        # Each sub-agent's answer too, so the harness checks the sub-agents, not only the
        # orchestrator's last word.
        answers = [str(i.output) for i in r.new_items if isinstance(i, ToolCallOutputItem)]
        return [str(r.final_output), *answers]


WORKFLOWS = [OAIAgent, OAIFanout]


def plugins(local: bool = False) -> list:
    from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin

    # One attempt, as Outlast's runs here (model.max_attempts=1): a failed call fails the run
    # instead of being retried quietly into the times.
    params = ModelActivityParameters(
        start_to_close_timeout=timedelta(seconds=30),
        use_local_activity=local,
        retry_policy=RetryPolicy(maximum_attempts=1),
    )
    return [OpenAIAgentsPlugin(model_params=params, model_provider=ScriptedProvider())]
