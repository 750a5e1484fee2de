"""How a model call's request and answer are written into history: without what the other
side knows anyway (issue 9: every turn writes both once).

A request's tool result by reference is empty and no error (`workflows/turns.by_reference`),
so it goes as its `tool_use_id` alone, and its blob's name goes in a list in the order of
those bare results, not keyed by the id a second time. An answer's message is the
assistant's. Each `thin_*` has its `full_*`, which the model's validator runs first, and
both read the dict form they write and the one histories recorded before 2026-12-07 hold.
"""

from __future__ import annotations

import copy
from typing import Any


def _results(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in data.get("append") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def thin_request(data: dict[str, Any]) -> dict[str, Any]:
    refs = data.get("append_refs")
    if not isinstance(refs, dict) or not refs:
        return data
    bare = []
    for block in _results(data):
        if block.get("tool_use_id") in refs and block.get("content") == "":
            del block["content"]
            if block.get("is_error") is False:
                del block["is_error"]
            bare.append(block["tool_use_id"])
    if sorted(bare) == sorted(refs):
        data["append_refs"] = [refs[tool_use_id] for tool_use_id in bare]
    return data


def full_request(data: Any) -> Any:
    if not isinstance(data, dict) or not data.get("append_refs"):
        return data
    data = {**data, "append": copy.deepcopy(data.get("append"))}  # the caller's, unchanged
    refs = data["append_refs"]
    if isinstance(refs, list):
        bare = [block for block in _results(data) if "content" not in block]
        if len(bare) != len(refs):
            raise ValueError(
                f"append_refs names {len(refs)} results, and the append has {len(bare)} "
                "tool results without content"
            )
        data = {
            **data,
            "append_refs": {b.get("tool_use_id"): r for b, r in zip(bare, refs, strict=True)},
        }
        refs = data["append_refs"]
    for block in _results(data):
        if block.get("tool_use_id") in refs:
            block.setdefault("content", "")
    return data


def thin_response(data: dict[str, Any]) -> dict[str, Any]:
    message = data.get("message")
    if isinstance(message, dict) and message.get("role") == "assistant":
        del message["role"]
    return data


def full_response(data: Any) -> Any:
    if isinstance(data, dict) and isinstance(data.get("message"), dict):
        return {**data, "message": {"role": "assistant", **data["message"]}}
    return data
