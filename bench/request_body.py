"""The model request's body, built as `llm.call_model` builds it against how the SDK builds it.

A call sends the whole conversation. Before 2026-12-03 `llm.call_model` handed the messages to
`messages.create` as dicts (each block's dict cached while the block lived), and the SDK copied
the body (`copy_tree`) and encoded it on every call. Now each block's JSON is cached and the
call joins the strings (activities/model_body.py), sending the same bytes. This measures the
client CPU of both for a conversation of N turns (one `Read` of a ~2 KB file per turn, the
general-purpose system prompt and Outlast's tools), caches warm as on an agent's next call;
the two take turns, round by round, and each figure is the median over rounds.

    python bench/request_body.py [--turns 10,100,1000] [--rounds 5]

Last line: `body_ms_at_<N>=<ours> sdk_body_ms_at_<N>=<sdk> ratio=<sdk/ours>` for the largest N.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anthropic._utils._json import openapi_dumps  # noqa: E402
from anthropic._utils._prepare import prepare_request_data  # noqa: E402

from activities.context import environment_block, tool_definitions  # noqa: E402
from activities.model_body import (  # noqa: E402
    encode,
    messages_json,
    request_body,
    wire_messages,
    wire_system,
    wire_tools,
)
from activities.tools import TOOLS  # noqa: E402
from agents.builtin.general_purpose import PROMPT  # noqa: E402
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from bench.harness import median  # noqa: E402

CHUNK = "".join(f"{i:6d}\tline {i:04d} of the file the agent keeps reading\n" for i in range(40))


def conversation(turns: int) -> list[Message]:
    messages = [Message.user_text("Read chunk.txt, again and again.")]
    for n in range(turns):
        use = ToolUseBlock(id=f"toolu_{n:024d}", name="Read", input={"file_path": "/w/chunk.txt"})
        messages += [
            Message(role="assistant", content=[TextBlock(text="Reading it again."), use]),
            Message(role="user", content=[ToolResultBlock(tool_use_id=use.id, content=CHUNK)]),
        ]
    return messages


def main(sizes: list[int], rounds: int) -> None:
    system = wire_system([PROMPT, environment_block("/w", date.today())])
    tools = wire_tools(tool_definitions(list(TOOLS)))
    system_json, tools_json = encode(system), encode(tools)
    results: dict[int, tuple[float, float]] = {}
    for turns in sizes:
        messages = conversation(turns)
        wired = wire_messages(messages)  # the dicts the old path kept cached
        calls = max(3, 2000 // turns)
        ours_ms, sdk_ms = [], []
        messages_json(messages)  # warm the block cache, as an agent's earlier calls did
        for _ in range(rounds):
            began = time.process_time()
            for _ in range(calls):
                body = request_body(
                    model="claude-sonnet-5-5",
                    max_tokens=32000,
                    messages=messages_json(messages),
                    system=system_json,
                    tools=tools_json,
                )
            ours_ms.append((time.process_time() - began) * 1000 / calls)
            began = time.process_time()
            for _ in range(calls):
                params = {
                    "max_tokens": 32000,
                    "messages": wired,
                    "model": "claude-sonnet-5-5",
                    "stream": True,
                    "system": system,
                    "tools": tools,
                }
                sdk_body = openapi_dumps(prepare_request_data(params, location="body"))
            sdk_ms.append((time.process_time() - began) * 1000 / calls)
        assert body == sdk_body, "the two paths must send the same bytes"
        results[turns] = (median(ours_ms), median(sdk_ms))
        print(
            f"{turns:5d} turns ({len(body) / 1e6:.2f} MB): ours {results[turns][0]:7.2f} ms, "
            f"SDK {results[turns][1]:7.2f} ms per call (CPU, median of {rounds} rounds)"
        )
    top = max(sizes)
    ours, sdk = results[top]
    print(f"body_ms_at_{top}={ours:.2f} sdk_body_ms_at_{top}={sdk:.2f} ratio={sdk / ours:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", default="10,100,1000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    main([int(t) for t in args.turns.split(",")], args.rounds)
