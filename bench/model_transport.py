"""The model client's HTTP transport: aiohttp (Outlast's default) against httpx (the SDK's).

Each call is what `llm.call_model` sends on an agent's 6th turn: the general-purpose system
prompt and Outlast's tool definitions, 5 earlier turns of one Read each, streamed, through
the real `anthropic` SDK to the scripted model in its own process (zero latency). Calls go
one at a time, then 20 at once (a 20-way fan-out calling together); the two transports take
turns, round by round. Per call: wall time and this process's CPU time (the scripted model's
is not counted), medians over rounds. Fan-out and turn overhead show the effect in a whole
run (bench/fanout.py, bench/turn_overhead.py with `OUTLAST_MODEL_HTTP=httpx|aiohttp`).

    python bench/model_transport.py [--calls 200] [--width 20] [--rounds 3]

Last line: `cpu_ms_per_call_httpx=<a> cpu_ms_per_call_aiohttp=<b> wall_ms_at_20_httpx=<c>
wall_ms_at_20_aiohttp=<d>` (CPU from the calls 20 at once).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.context import environment_block, tool_definitions  # noqa: E402
from activities.model_body import wire_messages, wire_system, wire_tools  # noqa: E402
from activities.model_http import HTTP_BACKEND_ENV, HTTP_BACKENDS, sdk_client  # noqa: E402
from activities.tools import TOOLS  # noqa: E402
from agents.builtin.general_purpose import PROMPT  # noqa: E402
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from bench.harness import median, scripted_model_process  # noqa: E402

SCRIPT = {
    "agents": [
        {
            "name": "reader",
            "after_last": "repeat_last",
            "turns": [{"text": "Reading.", "tool_use": {"name": "Read", "input": {"a": 1}}}],
        }
    ]
}
LINES = "".join(f"{i:6d}\tline {i} of the file the agent keeps reading\n" for i in range(1, 41))


def conversation(turns: int) -> list[Message]:
    messages = [Message.user_text("Read data.txt again and again.")]
    for i in range(turns):
        use = ToolUseBlock(id=f"toolu_{i:024d}", name="Read", input={"file_path": "/w/data.txt"})
        messages.append(Message(role="assistant", content=[TextBlock(text="Reading."), use]))
        result = ToolResultBlock(tool_use_id=use.id, content=LINES, is_error=False)
        messages.append(Message(role="user", content=[result]))
    return messages


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def timed(client, body: dict, calls: int, width: int) -> tuple[float, float]:
    """Wall and CPU milliseconds per call, `calls` calls made `width` at a time."""

    async def one() -> None:
        async with await client.messages.create(**body, stream=True) as stream:
            async for _ in stream:
                pass

    wall0, cpu0 = time.perf_counter(), cpu_s()
    for _ in range(calls // width):
        await asyncio.gather(*(one() for _ in range(width)))
    done = calls // width * width
    return (time.perf_counter() - wall0) * 1000 / done, (cpu_s() - cpu0) * 1000 / done


def client_on(backend: str, url: str):
    os.environ[HTTP_BACKEND_ENV] = backend
    return sdk_client(api_key="bench", base_url=url)


async def main(calls: int, width: int, rounds: int) -> None:
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 32000,
        "system": wire_system([PROMPT, environment_block("/w", date.today(), True)]),
        "tools": wire_tools(tool_definitions(list(TOOLS))),
        "messages": wire_messages(conversation(5)),
    }
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with scripted_model_process(SCRIPT) as url:
        clients = {b: client_on(b, url) for b in HTTP_BACKENDS}
        for client in clients.values():
            await timed(client, body, width, width)  # warm-up: connections, imports
        for r in range(rounds):
            for w in (1, width):
                order = HTTP_BACKENDS if r % 2 == 0 else HTTP_BACKENDS[::-1]
                for backend in order:
                    wall, cpu = await timed(clients[backend], body, calls, w)
                    results.setdefault((backend, w), []).append((wall, cpu))
                    print(
                        f"round {r + 1}: {backend:7s} {w:2d} at once: "
                        f"{wall:6.2f} ms/call wall, {cpu:5.2f} ms/call CPU"
                    )
        for client in clients.values():
            await client.close()
    med = {
        key: (median([w for w, _ in runs]), median([c for _, c in runs]))
        for key, runs in results.items()
    }
    for (backend, w), (wall, cpu) in sorted(med.items()):
        print(f"median {backend:7s} {w:2d} at once: {wall:6.2f} ms/call wall, {cpu:5.2f} CPU")
    print(
        f"cpu_ms_per_call_httpx={med['httpx', width][1]:.2f} "
        f"cpu_ms_per_call_aiohttp={med['aiohttp', width][1]:.2f} "
        f"wall_ms_at_{width}_httpx={med['httpx', width][0]:.2f} "
        f"wall_ms_at_{width}_aiohttp={med['aiohttp', width][0]:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--width", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.width, args.rounds))
