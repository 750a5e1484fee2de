"""Per-turn overhead of a durable Outlast agent versus a plain asyncio loop.

Workload (50 turns, as in bench-peers): each turn is one model call that returns one Read
tool call, then that Read. The scripted model (own process, zero latency) answers both
loops over HTTP through the same `anthropic` SDK. Outlast: `AgentWorkflow` on a local dev
server (transfer-queue throttle lifted), worker in this process; its per-turn time is the
gap between consecutive `llm.call_model` schedulings in history. Plain: the same requests,
tool code and conversation in one asyncio loop, timed per iteration. Rounds alternate the
two, and the ratio is taken within the run.

    python bench/turn_overhead.py [--turns 50] [--rounds 3]

Last line: `turn_overhead_ms=<median Outlast turn - median plain turn> ratio_vs_plain=<x>`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.context import environment_block, tool_definitions  # noqa: E402
from activities.model_body import wire_messages, wire_system, wire_tools  # noqa: E402
from activities.model_http import sdk_client  # noqa: E402
from activities.tools import TOOLS  # noqa: E402
from activities.tools.base import ToolContext  # noqa: E402
from activities.tools.read import ReadInput, ReadRequest, read_file  # noqa: E402
from agents.builtin.general_purpose import PROMPT  # noqa: E402
from agents.config import ModelSettings  # noqa: E402
from agents.messages import Message, ToolResultBlock  # noqa: E402
from bench.harness import (  # noqa: E402
    add_model_mode,
    agent_turn_gaps,
    client_for,
    dev_server,
    make_repo,
    median,
    model_env,
    model_mode,
    scripted_model_process,
    workers,
)

SCRIPT = {
    "agents": [
        {
            "name": "bench",
            "after_last": "repeat_last",
            "turns": [{"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/data.txt"}}}],
        }
    ]
}


async def outlast_turns(client, repo: Path, turns: int, model: ModelSettings) -> list[float]:
    async with workers(client) as (tq, hq):
        prompt = "Read data.txt again and again."
        return await agent_turn_gaps(client, tq, hq, repo, prompt, turns, model)


async def plain_turns(base_url: str, repo: Path, turns: int) -> list[float]:
    # The worker's transport (OUTLAST_MODEL_HTTP), so the ratio compares orchestration only.
    client = sdk_client(api_key="bench", base_url=base_url)
    system = wire_system([PROMPT, environment_block(str(repo), date.today())])
    tools = wire_tools(tool_definitions(list(TOOLS)))
    messages = [Message.user_text("Read data.txt again and again.")]
    ctx = ToolContext(workspace_root=str(repo), cwd=str(repo))
    times = []
    for _ in range(turns):
        t0 = time.perf_counter()
        async with client.messages.stream(
            model="claude-sonnet-5-5",
            max_tokens=32000,
            system=system,
            tools=tools,
            messages=wire_messages(messages),
        ) as stream:
            final = await stream.get_final_message()
        use = next(b for b in final.content if b.type == "tool_use")
        messages.append(
            Message(
                role="assistant",
                content=[{"type": "tool_use", "id": use.id, "name": use.name, "input": use.input}],
            )
        )
        out = await read_file(ReadRequest(input=ReadInput(**use.input), ctx=ctx))
        messages.append(
            Message(
                role="user",
                content=[
                    ToolResultBlock(tool_use_id=use.id, content=out.content, is_error=out.is_error)
                ],
            )
        )
        times.append((time.perf_counter() - t0) * 1000)
    await client.close()
    return times


async def main(turns: int, rounds: int, persist: bool, model: ModelSettings) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(
            Path(tmp) / "repo", {"data.txt": "".join(f"line {i}\n" for i in range(40))}
        )
        with (
            dev_server(persist=persist) as server,
            scripted_model_process(SCRIPT) as url,
            model_env(url, Path(tmp) / "store"),
        ):
            client = await client_for(server)
            await outlast_turns(client, repo, 3, model)  # warm-up: sandbox, connections, caches
            await plain_turns(url, repo, 3)
            durable: list[float] = []
            plain: list[float] = []
            for r in range(rounds):
                d = await outlast_turns(client, repo, turns, model)
                p = await plain_turns(url, repo, turns)
                print(
                    f"round {r + 1}: outlast median {median(d):.2f} ms/turn, "
                    f"plain median {median(p):.2f} ms/turn"
                )
                durable += d
                plain += p
    md, mp = median(durable), median(plain)
    print(f"outlast_turn_ms={md:.2f} plain_turn_ms={mp:.2f} turns={turns} rounds={rounds}")
    print(f"turn_overhead_ms={md - mp:.2f} ratio_vs_plain={md / mp:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--in-memory",
        action="store_true",
        help="an in-memory dev server instead of the SQLite file `outlast dev` uses",
    )
    add_model_mode(parser)
    args = parser.parse_args()
    model = ModelSettings(max_attempts=1, local_activity=model_mode(args))
    asyncio.run(main(args.turns, args.rounds, persist=not args.in_memory, model=model))
