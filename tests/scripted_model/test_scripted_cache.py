"""Prompt-cache accounting: the expected numbers are computed here from the documented rule."""

from __future__ import annotations

import json
import math
from typing import Any

from outlast.scripted_model.cache import Layouts, layout
from tests.scripted_model.conftest import ClientFn, ServeFn, user

CACHED = {"type": "ephemeral"}
TOOLS = [
    {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}},
    {
        "name": "Grep",
        "description": "Search file contents",
        "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
        "cache_control": CACHED,
    },
]
SYSTEM = [{"type": "text", "text": "You are a careful agent. " * 20, "cache_control": CACHED}]
SCRIPT = {"agents": [{"name": "m", "turns": [{"text": "one"}, {"text": "two"}]}]}


def tokens(block: Any) -> int:
    """The documented estimate, written independently of the server's code."""
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    raw = json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return math.ceil(len(raw.encode("utf-8")) / 4)


def text(value: str, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    return block | {"cache_control": CACHED} if cached else block


def usage_of(message: Any) -> tuple[int, int, int]:
    u = message.usage
    return u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens


def ask(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 100, "messages": messages} | extra


async def test_shared_tools_and_system_are_read_back(serve: ServeFn, client_for: ClientFn) -> None:
    server = serve(SCRIPT)
    client = client_for(server)
    prefix = sum(tokens(t) for t in TOOLS) + tokens(SYSTEM[0])
    first = await client.messages.create(**ask([user("question one")], tools=TOOLS, system=SYSTEM))
    assert usage_of(first) == (tokens(text("question one")), prefix, 0)
    second = ask([user("a different, longer question")], tools=TOOLS, system=SYSTEM)
    async with client.messages.stream(**second) as stream:
        streamed = await stream.get_final_message()
    assert usage_of(streamed) == (tokens(text("a different, longer question")), 0, prefix)
    assert streamed.usage.output_tokens == tokens(text("one"))
    records = server.log
    assert records[0]["prefix_hashes"] == records[1]["prefix_hashes"]
    assert len(records[1]["prefix_hashes"]) == 2
    assert records[1]["usage"]["cache_read_input_tokens"] == prefix
    assert records[1]["tools"] == ["Read", "Grep"]


async def test_identical_request_reads_up_to_last_breakpoint(
    serve: ServeFn, client_for: ClientFn
) -> None:
    client = client_for(serve(SCRIPT))
    messages = [{"role": "user", "content": [text("hello"), text("cached tail", cached=True)]}]
    body = ask(messages, system=SYSTEM)
    total = tokens(SYSTEM[0]) + tokens(text("hello")) + tokens(text("cached tail"))
    assert usage_of(await client.messages.create(**body)) == (0, total, 0)
    assert usage_of(await client.messages.create(**body)) == (0, 0, total)


async def test_growing_conversation_reads_the_previous_turn(
    serve: ServeFn, client_for: ClientFn
) -> None:
    client = client_for(serve(SCRIPT))
    first_user = {"role": "user", "content": [text("start here", cached=True)]}
    await client.messages.create(**ask([first_user], system=SYSTEM))
    answer = {"role": "assistant", "content": "one"}
    second_user = {"role": "user", "content": [text("now continue", cached=True), text("tail")]}
    second = await client.messages.create(**ask([first_user, answer, second_user], system=SYSTEM))
    read = tokens(SYSTEM[0]) + tokens(text("start here"))
    created = tokens(text("one")) + tokens(text("now continue"))
    assert usage_of(second) == (tokens(text("tail")), created, read)
    assert second.content[0].text == "two"


async def test_lookback_reads_the_previous_turn_without_its_breakpoint(
    serve: ServeFn, client_for: ClientFn
) -> None:
    """One breakpoint on the newest block each turn (what Outlast sends) still reads the
    previous turn's prefix: the API looks back up to 20 blocks for a cached boundary."""
    client = client_for(serve(SCRIPT))
    first_user = {"role": "user", "content": [text("start here", cached=True)]}
    await client.messages.create(**ask([first_user], system=SYSTEM))
    plain_first = {"role": "user", "content": [text("start here")]}
    answer = {"role": "assistant", "content": "one"}
    second_user = {"role": "user", "content": [text("now continue", cached=True)]}
    second = await client.messages.create(**ask([plain_first, answer, second_user], system=SYSTEM))
    read = tokens(SYSTEM[0]) + tokens(text("start here"))
    assert usage_of(second) == (0, tokens(text("one")) + tokens(text("now continue")), read)
    far = [
        user(f"filler {i}") if i % 2 == 0 else {"role": "assistant", "content": f"a{i}"}
        for i in range(22)
    ]
    beyond = [plain_first, answer, *far, {"role": "user", "content": [text("x", cached=True)]}]
    beyond[2:4] = []  # keep roles alternating: drop one user/assistant pair of filler
    late = await client.messages.create(**ask(beyond, system=SYSTEM))
    assert usage_of(late)[2] == tokens(SYSTEM[0])  # the earlier hit is more than 20 blocks back


async def test_no_breakpoints_means_plain_input(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    body = ask([user("plain")], system="a string system prompt")
    expected = (tokens(text("a string system prompt")) + tokens(text("plain")), 0, 0)
    assert usage_of(await client.messages.create(**body)) == expected
    assert usage_of(await client.messages.create(**body)) == expected


async def test_a_changed_tool_invalidates_the_prefix(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT))
    await client.messages.create(**ask([user("q")], tools=TOOLS, system=SYSTEM))
    changed = [TOOLS[0] | {"description": "Read a file, edited"}, TOOLS[1]]
    again = await client.messages.create(**ask([user("q")], tools=changed, system=SYSTEM))
    prefix = sum(tokens(t) for t in changed) + tokens(SYSTEM[0])
    assert usage_of(again) == (tokens(text("q")), prefix, 0)


async def test_min_cache_tokens(serve: ServeFn, client_for: ClientFn) -> None:
    client = client_for(serve(SCRIPT | {"min_cache_tokens": 100_000}))
    body = ask([user("q")], system=SYSTEM)
    total = tokens(SYSTEM[0]) + tokens(text("q"))
    for _ in range(2):
        assert usage_of(await client.messages.create(**body)) == (total, 0, 0)


def test_role_boundaries_are_part_of_the_prefix() -> None:
    together = {
        "messages": [{"role": "user", "content": [text("a"), text("b", cached=True)]}],
    }
    split = {
        "messages": [
            {"role": "user", "content": [text("a")]},
            {"role": "assistant", "content": [text("b", cached=True)]},
        ],
    }
    one, other = layout(together), layout(split)
    assert one.total_tokens == other.total_tokens
    assert one.breakpoints[0].prefix_hash != other.breakpoints[0].prefix_hash


def test_string_content_equals_one_text_block() -> None:
    as_string = layout({"system": "s", "messages": [{"role": "user", "content": "hi"}]})
    as_block = layout(
        {"system": [text("s")], "messages": [{"role": "user", "content": [text("hi")]}]}
    )
    assert as_string.total_tokens == as_block.total_tokens == tokens(text("s")) + tokens(text("hi"))


def test_a_layout_extended_from_the_last_request_equals_one_made_afresh() -> None:
    """Each request repeats the conversation with the breakpoint moved to its new end, and
    sometimes a different history (a retry, a repaired transcript): `Layouts` extends its last
    layout where the messages are the same and redoes the rest."""
    layouts = Layouts()
    conversation: list[dict[str, Any]] = [{"role": "user", "content": [text("start")]}]
    bodies = []
    for turn in range(6):
        messages = json.loads(json.dumps(conversation))
        messages[-1]["content"][-1]["cache_control"] = CACHED
        bodies.append({"tools": TOOLS, "system": SYSTEM, "messages": messages})
        conversation += [
            {"role": "assistant", "content": [text(f"answer {turn}")]},
            {"role": "user", "content": [text(f"more {turn}"), text("x" * turn)]},
        ]
    changed = json.loads(json.dumps(bodies[4]))
    changed["messages"][3]["content"][0]["text"] = "a different answer"
    other_system = {**bodies[5], "system": "another system prompt"}
    for body in [*bodies, changed, bodies[5], other_system, bodies[2]]:
        assert layouts.layout("one conversation", body) == layout(body)


def test_an_image_counts_a_fixed_number_of_tokens_not_its_base64() -> None:
    from outlast.scripted_model.cache import IMAGE_TOKENS, estimate_tokens

    def result(data: str) -> dict:
        image = {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        }
        return {"type": "tool_result", "tool_use_id": "t", "content": [image]}

    small, big = estimate_tokens(result("AAAA")), estimate_tokens(result("A" * 4_000_000))
    assert small == big and IMAGE_TOKENS < small < IMAGE_TOKENS + 100
    assert estimate_tokens({"type": "text", "text": "abcd"}) == 8  # 29 bytes of JSON, as before
