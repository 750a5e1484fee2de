"""(b) / (b2) Minimal hand-written Temporal agent workflow: the reference rows.

From shared/bench-peers: the model call and the tool call are Temporal activities,
  (b)  regular activities  (workflow.execute_activity)
  (b2) local activities    (workflow.execute_local_activity)
and the model activity receives the whole conversation each turn, as a real model call
would, so history grows like it does for the framework integrations.

Added here: `model="http"` makes the model activity a real Anthropic SDK call to the same
scripted HTTP server Outlast talks to (`outlast fake-model`), so (b-http) versus Outlast
isolates what Outlast's own framework adds on top of Temporal + the same model path.
This family runs in Outlast's venv (it needs `anthropic` and nothing peer-specific), so it
also shares Outlast's temporalio version.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    from common import (
        FINAL_TEXT,
        SYSTEM_PROMPT,
        TOOL_DESCRIPTION,
        TOOL_NAME,
        anthropic_client,
        parse_prompt,
        read_impl,
        user_prompt,
    )

TIMEOUT = timedelta(seconds=30)


def scripted_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Zero-latency stateless scripted model over chat-style dict messages."""
    n, path = parse_prompt(next(m["content"] for m in messages if m["role"] == "user"))
    k = sum(1 for m in messages if m["role"] == "tool")
    if k < n:
        call = {"id": f"call_{k}", "name": TOOL_NAME, "arguments": {"file_path": path}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": FINAL_TEXT, "tool_calls": []}


def initial_messages(prompt: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]


# ---- the HTTP model: chat dicts <-> Anthropic Messages API --------------------------------

_TOOLS = [
    {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "input_schema": {
            "type": "object",
            "properties": {"file_path": {"type": "string"}},
            "required": ["file_path"],
        },
    }
]


def _to_wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wire = []
    for m in messages:
        if m["role"] == "user":
            wire.append({"role": "user", "content": m["content"]})
        elif m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"]}] if m["content"] else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in m["tool_calls"]
            ]
            wire.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m["content"],
            }
            wire.append({"role": "user", "content": [block]})
    return wire


async def http_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    # Streaming, like Outlast's llm.call_model, so both pay the same SSE parsing.
    async with anthropic_client().messages.stream(
        model="claude-sonnet-5-5",
        max_tokens=32000,
        system=SYSTEM_PROMPT,
        tools=_TOOLS,
        messages=_to_wire(messages),
    ) as stream:
        final = await stream.get_final_message()
    calls = [
        {"id": b.id, "name": b.name, "arguments": b.input}
        for b in final.content
        if b.type == "tool_use"
    ]
    text = "".join(b.text for b in final.content if b.type == "text") or None
    return {"role": "assistant", "content": text, "tool_calls": calls}


# ---- activities and workflows ------------------------------------------------------------


@activity.defn(name="minimal_model")
async def model_activity(messages: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return await http_model(messages) if model == "http" else scripted_model(messages)


@activity.defn(name="minimal_read")
async def read_activity(file_path: str) -> str:
    return read_impl(file_path)


ACTIVITIES = [model_activity, read_activity]


async def _agent_loop(prompt: str, local: bool, model: str) -> str:
    run = workflow.execute_local_activity if local else workflow.execute_activity
    messages = initial_messages(prompt)
    while True:
        resp = await run(model_activity, args=[messages, model], start_to_close_timeout=TIMEOUT)
        messages.append(resp)
        if not resp["tool_calls"]:
            return resp["content"]
        for tc in resp["tool_calls"]:
            path = tc["arguments"]["file_path"]
            out = await run(read_activity, path, start_to_close_timeout=TIMEOUT)
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": out})


@workflow.defn(name="MinimalAgent")
class MinimalAgent:
    @workflow.run
    async def run(self, prompt: str, local: bool, model: str) -> str:
        return await _agent_loop(prompt, local, model)


@workflow.defn(name="MinimalFanout")
class MinimalFanout:
    """Parent that fans out to n_children agents of child_turns turns each.

    mode="child":  each agent is a child workflow (MinimalAgent)
    mode="inline": each agent is a coroutine inside this one workflow (asyncio.gather)
    """

    @workflow.run
    async def run(
        self, n_children: int, child_turns: int, path: str, local: bool, model: str, mode: str
    ) -> list[str]:
        prompts = [user_prompt(child_turns, path, worker=i) for i in range(n_children)]
        if mode == "child":
            wid = workflow.info().workflow_id
            runs = (
                workflow.execute_child_workflow(
                    MinimalAgent.run, args=[p, local, model], id=f"{wid}-c{i}"
                )
                for i, p in enumerate(prompts)
            )
        else:
            runs = (_agent_loop(p, local, model) for p in prompts)
        return list(await asyncio.gather(*runs))


WORKFLOWS = [MinimalAgent, MinimalFanout]
