"""Prompt-cache accounting and the token estimate.

The numbers are an estimate (about four bytes of canonical JSON per token), but they follow
the API's rules closely enough that an engine which moves a `cache_control` breakpoint, or
changes a byte early in the prompt, sees its cache reads drop exactly as it would in
production. See SCRIPT_FORMAT.md for the rules.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """The four counts of a response's `usage`."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0


class Breakpoint(BaseModel):
    """A `cache_control` position: the hash of the prefix ending there and its tokens."""

    model_config = ConfigDict(frozen=True)

    prefix_hash: str
    tokens: int


LOOKBACK_BLOCKS = 20
"""Like the API, a breakpoint also reads a cached prefix ending up to this many blocks earlier."""


class Boundary(NamedTuple):
    """The prefix ending at one block. A tuple, not a `Breakpoint`: a 1,000-turn request has
    ~4,000 blocks, and a pydantic object each cost half the time of its layout."""

    prefix_hash: str
    tokens: int


class PromptLayout(BaseModel):
    """A request reduced to what caching needs."""

    model_config = ConfigDict(frozen=True)

    total_tokens: int
    breakpoints: list[Breakpoint]
    boundaries: list[Boundary] = []
    """The prefix ending at every block, in order (for the lookback)."""
    breakpoint_positions: list[int] = []
    """Index into `boundaries` of each breakpoint."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""One encoder for every call: `json.dumps` with options builds a new one each time, which
costs more than encoding a small block."""


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def estimate_tokens(block: Any) -> int:
    """ceil(bytes of the block's canonical JSON, `cache_control` removed, / 4)."""
    return math.ceil(len(canonical_json(strip_cache_control(block)).encode()) / 4)


def strip_cache_control(block: Any) -> Any:
    """The block without `cache_control`, also on blocks nested in a `tool_result`."""
    if not isinstance(block, dict):
        return block
    out = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(out.get("content"), list):
        out["content"] = [strip_cache_control(b) for b in out["content"]]
    return out


def has_cache_control(block: Any) -> bool:
    if not isinstance(block, dict):
        return False
    if block.get("cache_control") is not None:
        return True
    nested = block.get("content")
    return isinstance(nested, list) and any(has_cache_control(b) for b in nested)


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def cacheable_items(body: Mapping[str, Any]) -> Iterator[tuple[str, str | None, Any]]:
    """(kind, role, block) in the order the API caches them: tools, system, messages."""
    for tool in body.get("tools") or []:
        yield "tool", None, tool
    for block in _as_blocks(body.get("system")):
        yield "system", None, block
    for message in body.get("messages") or []:
        for block in _as_blocks(message.get("content")):
            yield "message", message.get("role"), block


def _cache_controls(block: Any) -> int:
    if not isinstance(block, dict):
        return 0
    nested = block.get("content")
    inner = sum(_cache_controls(b) for b in nested) if isinstance(nested, list) else 0
    return inner + (1 if block.get("cache_control") is not None else 0)


def count_breakpoints(body: Mapping[str, Any]) -> int:
    """Every `cache_control` counts toward the API's limit, nested ones included."""
    return sum(_cache_controls(block) for _, _, block in cacheable_items(body))


def layout(body: Mapping[str, Any]) -> PromptLayout:
    """Token total and breakpoint prefixes of a (validated) request."""
    # One running hash over the items, one canonical JSON line each: the hash at a
    # breakpoint covers the whole prefix, roles included, without re-hashing it per breakpoint.
    running = hashlib.sha256()
    total = 0
    boundaries: list[Boundary] = []
    positions: list[int] = []
    # Each block is serialized once, for its tokens and its line: a 1,000-turn conversation's
    # request has ~4,000 blocks, and this runs on every request.
    heads: dict[tuple[str, str | None], bytes] = {}
    for kind, role, block in cacheable_items(body):
        marked = has_cache_control(block)
        text = canonical_json(strip_cache_control(block) if marked else block).encode()
        total += math.ceil(len(text) / 4)  # estimate_tokens
        # The bytes of canonical_json([kind, role, stripped]):
        head = heads.get((kind, role))
        if head is None:
            head = heads[(kind, role)] = b"[%s,%s," % (
                canonical_json(kind).encode(),
                canonical_json(role).encode(),
            )
        running.update(b"%s%s]\n" % (head, text))
        boundaries.append(Boundary(running.hexdigest(), total))
        if marked:
            positions.append(len(boundaries) - 1)
    # Built as they are (no validation pass over ~4,000 boundaries of a long conversation).
    return PromptLayout.model_construct(
        total_tokens=total,
        breakpoints=[Breakpoint(**boundaries[i]._asdict()) for i in positions],
        boundaries=boundaries,
        breakpoint_positions=positions,
    )


def output_tokens(content: list[dict[str, Any]]) -> int:
    return sum(estimate_tokens(block) for block in content)


class CacheTable:
    """Prefix hash -> tokens of every breakpoint prefix answered so far; thread-safe."""

    def __init__(self, min_cache_tokens: int = 0) -> None:
        self._min = min_cache_tokens
        self._lock = threading.Lock()
        self._prefixes: dict[str, int] = {}

    def account(self, prompt: PromptLayout, output: int) -> Usage:
        """The usage of a request given what earlier requests put in the cache."""
        with self._lock:
            return self._account_locked(prompt, output)

    def _account_locked(self, prompt: PromptLayout, output: int) -> Usage:
        cacheable = [b for b in prompt.breakpoints if b.tokens >= self._min]
        if not cacheable:
            return Usage(input_tokens=prompt.total_tokens, output_tokens=output)
        hits = [self._longest_hit(prompt, i) for i in prompt.breakpoint_positions]
        read = max(hits, default=0)
        creation = cacheable[-1].tokens - read
        return Usage(
            input_tokens=prompt.total_tokens - read - creation,
            cache_creation_input_tokens=creation,
            cache_read_input_tokens=read,
            output_tokens=output,
        )

    def _longest_hit(self, prompt: PromptLayout, position: int) -> int:
        """Tokens of the cached prefix nearest before `position`, within the lookback."""
        for i in range(position, max(-1, position - LOOKBACK_BLOCKS - 1), -1):
            candidate = prompt.boundaries[i]
            if candidate.tokens >= self._min and candidate.prefix_hash in self._prefixes:
                return candidate.tokens
        return 0

    def account_and_commit(self, prompt: PromptLayout, output: int) -> Usage:
        """`account`, then `commit`, under one lock."""
        with self._lock:
            usage = self._account_locked(prompt, output)
            self._commit_locked(prompt)
        return usage

    def commit(self, prompt: PromptLayout) -> None:
        """Remember the request's breakpoint prefixes."""
        with self._lock:
            self._commit_locked(prompt)

    def _commit_locked(self, prompt: PromptLayout) -> None:
        for b in prompt.breakpoints:
            if b.tokens >= self._min:
                self._prefixes[b.prefix_hash] = b.tokens
