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


IMAGE_TOKENS = 1600
"""What an image counts, whatever its size: about what the API charges for one at the most it
keeps (1568 pixels on the long side). Its base64 counted as text would be ~1,000x that."""


DOCUMENT_TOKENS = 3000
"""What a PDF counts, whatever its length: the API charges ~1,500-3,000 a page (its text and
its image); a flat figure keeps the estimate from decoding every PDF on every request."""


def estimate_tokens(block: Any) -> int:
    """ceil(bytes of the block's canonical JSON, `cache_control` removed and each image's or
    PDF's data left empty, / 4), plus IMAGE_TOKENS per image and DOCUMENT_TOKENS per PDF."""
    bare, weight = _without_image_data(strip_cache_control(block))
    return math.ceil(len(canonical_json(bare).encode()) / 4) + weight


def _without_image_data(block: Any) -> tuple[Any, int]:
    """The block with its images' and PDFs' data left empty, and the tokens they count."""
    if not isinstance(block, dict):
        return block, 0
    kind = block.get("type")
    if kind in ("image", "document") and isinstance(block.get("source"), dict):
        tokens = IMAGE_TOKENS if kind == "image" else DOCUMENT_TOKENS
        return {**block, "source": {**block["source"], "data": ""}}, tokens
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        parts = [_without_image_data(b) for b in block["content"]]
        return {**block, "content": [p for p, _ in parts]}, sum(n for _, n in parts)
    return block, 0


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
    yield from _head_items(body)
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


class _Hashing:
    """A layout being built: the running hash over the items, one canonical JSON line each
    (the hash at a breakpoint covers the whole prefix, roles included, without re-hashing
    it per breakpoint), and what is known of each block so far."""

    def __init__(self) -> None:
        self.running = hashlib.sha256()
        self.total = 0
        self.boundaries: list[Boundary] = []
        self.positions: list[int] = []
        self.heads: dict[tuple[str, str | None], bytes] = {}

    def add(self, kind: str, role: str | None, block: Any) -> None:
        # Each block is serialized once, for its tokens and its line: a 1,000-turn
        # conversation's request has ~4,000 blocks, and this runs on every request.
        marked = has_cache_control(block)
        text = canonical_json(strip_cache_control(block) if marked else block).encode()
        self.total += math.ceil(len(text) / 4)  # estimate_tokens
        # The bytes of canonical_json([kind, role, stripped]):
        head = self.heads.get((kind, role))
        if head is None:
            head = self.heads[(kind, role)] = b"[%s,%s," % (
                canonical_json(kind).encode(),
                canonical_json(role).encode(),
            )
        self.running.update(b"%s%s]\n" % (head, text))
        self.boundaries.append(Boundary(self.running.hexdigest(), self.total))
        if marked:
            self.positions.append(len(self.boundaries) - 1)

    def mark(self) -> _Mark:
        return _Mark(self.running.copy(), self.total, len(self.boundaries), len(self.positions))

    def resume(self, mark: _Mark, boundaries: list[Boundary], positions: list[int]) -> None:
        self.running = mark.running.copy()
        self.total = mark.total
        self.boundaries = boundaries[: mark.boundaries]
        self.positions = positions[: mark.positions]

    def result(self) -> PromptLayout:
        # Built as they are (no validation pass over ~4,000 boundaries of a long conversation).
        return PromptLayout.model_construct(
            total_tokens=self.total,
            breakpoints=[Breakpoint(**self.boundaries[i]._asdict()) for i in self.positions],
            boundaries=self.boundaries,
            breakpoint_positions=self.positions,
        )


class _Mark(NamedTuple):
    running: Any  # a sha256 object, never updated once marked (copied to go on)
    total: int
    boundaries: int
    positions: int


def _head_items(body: Mapping[str, Any]) -> Iterator[tuple[str, str | None, Any]]:
    for tool in body.get("tools") or []:
        yield "tool", None, tool
    for block in _as_blocks(body.get("system")):
        yield "system", None, block


def layout(body: Mapping[str, Any]) -> PromptLayout:
    """Token total and breakpoint prefixes of a (validated) request."""
    hashing = _Hashing()
    for kind, role, block in cacheable_items(body):
        hashing.add(kind, role, block)
    return hashing.result()


class _Remembered(NamedTuple):
    tools: Any
    system: Any
    messages: list[Any]
    marks: list[_Mark]
    """After the head (tools and system), then after each message."""
    layout: PromptLayout


class Layouts:
    """`layout`, extended from the conversation's last request where it starts the same: each
    request repeats the whole conversation, and laying out all of it again made a 1,000-turn
    conversation's requests cost time that grew with every turn. Thread-safe."""

    KEPT = 64
    """Conversations remembered (the most recent)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, _Remembered] = {}

    def last_messages(self, key: str) -> list[Any] | None:
        """The messages of the conversation's last request laid out (a valid one)."""
        with self._lock:
            before = self._last.get(key)
        return before.messages if before is not None else None

    def layout(self, key: str, body: Mapping[str, Any]) -> PromptLayout:
        """The same as `layout(body)`; `key` names the conversation."""
        with self._lock:
            before = self._last.get(key)
        messages = list(body.get("messages") or [])
        tools, system = body.get("tools"), body.get("system")
        hashing, marks, start = _Hashing(), [], 0
        if before is not None and before.tools == tools and before.system == system:
            start = common_prefix(before.messages, messages)
            marks = before.marks[: start + 1]
            hashing.resume(marks[-1], before.layout.boundaries, before.layout.breakpoint_positions)
        else:
            for kind, role, block in _head_items(body):
                hashing.add(kind, role, block)
            marks = [hashing.mark()]
        for message in messages[start:]:
            for block in _as_blocks(message.get("content")):
                hashing.add("message", message.get("role"), block)
            marks.append(hashing.mark())
        result = hashing.result()
        with self._lock:
            self._last.pop(key, None)
            self._last[key] = _Remembered(tools, system, messages, marks, result)
            while len(self._last) > self.KEPT:
                self._last.pop(next(iter(self._last)))
        return result


def common_prefix(before: list[Any], now: list[Any]) -> int:
    """How many leading messages are equal (a moved `cache_control` makes one differ). By
    Python's equality, for which `1 == 1.0 == True`: a conversation whose repeated messages
    change only so would keep the earlier hash; requests that went through JSON never do."""
    n = 0
    for old, new in zip(before, now, strict=False):
        if old != new:
            break
        n += 1
    return n


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
