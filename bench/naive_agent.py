"""The peers' way, for comparison only: the whole conversation is the model activity's input
on every turn (as in bench-peers' minimal workflow), so history grows with its square."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

with workflow.unsafe.imports_passed_through():
    import anthropic

TIMEOUT = timedelta(seconds=60)


@activity.defn(name="bench.naive_model")
async def naive_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    client = anthropic.AsyncAnthropic(max_retries=0)
    reply = await client.messages.create(
        model="claude-sonnet-5-5",
        max_tokens=1024,
        system="Working directory: " + messages[0]["cwd"],
        messages=[{k: v for k, v in m.items() if k != "cwd"} for m in messages],
    )
    await client.close()
    return {
        "role": "assistant",
        "content": [b.model_dump(exclude_none=True) for b in reply.content],
    }


@activity.defn(name="bench.naive_read")
async def naive_read(path: str) -> str:
    with open(path) as f:
        return f.read()


@workflow.defn(name="NaiveAgent")
class NaiveAgent:
    @workflow.run
    async def run(self, cwd: str, turns: int) -> int:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "read", "cwd": cwd}]
        for _ in range(turns):
            reply = await workflow.execute_activity(
                naive_model, messages, start_to_close_timeout=TIMEOUT
            )
            messages.append(reply)
            use = next(b for b in reply["content"] if b["type"] == "tool_use")
            text = await workflow.execute_activity(
                naive_read, use["input"]["file_path"], start_to_close_timeout=TIMEOUT
            )
            messages.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": text}],
                }
            )
        return len(messages)
