"""A streamed model call's events: the SDK's typed objects against their JSON objects.

`llm.call_model` reads the stream with `AsyncStream[object]`, so the SDK hands over each
event's parsed JSON and `activities/model_stream.Accumulator` reads it, instead of building a
typed event (`RawMessageStreamEvent`) per SSE event only to read a few of its fields. Each
call here is the 6th-turn request of bench/model_transport.py (the general-purpose system
prompt, Outlast's tools, 5 earlier Read turns), on the worker's transport, to the scripted
model in its own process; the answer is a text and one Read. The JSON way builds the whole
message (`Accumulator`); the typed way only the blocks, as the old accumulator began, so the
ratio errs against the JSON way. The two take turns, block by block. CPU is this process's
only.

    python bench/stream_events.py [--calls 100] [--rounds 6]

Last line: `cpu_ms_per_call_typed=<a> cpu_ms_per_call_json=<b> json_vs_typed=<b/a>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anthropic  # noqa: E402

from activities.context import environment_block, tool_definitions  # noqa: E402
from activities.model_body import encode, wire_messages, wire_system, wire_tools  # noqa: E402
from activities.model_http import sdk_client  # noqa: E402
from activities.model_stream import Accumulator  # noqa: E402
from activities.tools import TOOLS  # noqa: E402
from agents.builtin.general_purpose import PROMPT  # noqa: E402
from bench.harness import median, scripted_model_process  # noqa: E402
from bench.model_transport import SCRIPT, conversation, cpu_s  # noqa: E402


def typed_message(events: list[Any]) -> dict[str, Any]:
    """What the accumulator did with typed events before: the same fields, read as
    attributes."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.type == "content_block_start":
            blocks[event.index] = {**event.content_block.to_dict(), "_json": ""}
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                blocks[event.index]["text"] = blocks[event.index].get("text", "") + delta.text
            elif delta.type == "input_json_delta":
                blocks[event.index]["_json"] += delta.partial_json
    return blocks


async def call(client, body: bytes, typed: bool) -> None:
    cls = anthropic.AsyncStream[anthropic.types.RawMessageStreamEvent if typed else object]
    stream = await client.post(
        "/v1/messages",
        cast_to=anthropic.types.Message,
        content=body,
        options={"headers": {"content-type": "application/json"}},
        stream=True,
        stream_cls=cls,
    )
    async with stream:
        if typed:
            typed_message([event async for event in stream])
        else:
            acc = Accumulator()
            async for event in stream:
                acc.feed(event)
            assert acc.complete and acc.message().content


async def main(calls: int, rounds: int) -> None:
    body = encode(
        {
            "model": "claude-sonnet-5-5",
            "max_tokens": 32000,
            "stream": True,
            "system": wire_system([PROMPT, environment_block("/w", date.today(), True)]),
            "tools": wire_tools(tool_definitions(list(TOOLS))),
            "messages": wire_messages(conversation(5)),
        }
    )
    per_call: dict[bool, list[float]] = {True: [], False: []}
    with scripted_model_process(SCRIPT) as url:
        client = sdk_client(api_key="bench", base_url=url)
        for typed in (True, False):  # warm-up: connections, the SDK's type adapters
            for _ in range(20):
                await call(client, body, typed)
        for r in range(rounds):
            for typed in (True, False) if r % 2 == 0 else (False, True):
                cpu0 = cpu_s()
                for _ in range(calls):
                    await call(client, body, typed)
                per_call[typed].append((cpu_s() - cpu0) * 1000 / calls)
                print(f"round {r + 1}: {'typed' if typed else 'json '} {per_call[typed][-1]:.3f}")
        await client.close()
    typed_ms, json_ms = median(per_call[True]), median(per_call[False])
    print(
        f"cpu_ms_per_call_typed={typed_ms:.3f} cpu_ms_per_call_json={json_ms:.3f} "
        f"json_vs_typed={json_ms / typed_ms:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
