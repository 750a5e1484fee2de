"""Reading and extending transcript chains in the blob store (see agents/transcript.py)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence

from activities.store import BlobStore
from agents.canonical import canonical_bytes
from agents.messages import Message
from agents.transcript import TranscriptRef

_CACHE_HEADS = 256
# Most model calls extend the head the previous call returned, so keeping recent heads in
# memory turns a chain walk into a dictionary hit.
_cache: OrderedDict[str, tuple[Message, ...]] = OrderedDict()
# Loads and appends run on the event loop and in threads (an export, a model call's store
# work): one thread's eviction must not pull a head out from under another's read.
_lock = threading.Lock()


def _remember(head: str, messages: tuple[Message, ...]) -> None:
    with _lock:
        _cache[head] = messages
        _cache.move_to_end(head)
        while len(_cache) > _CACHE_HEADS:
            _cache.popitem(last=False)


def _cached(head: str | None) -> tuple[Message, ...] | None:
    if head is None:
        return ()
    with _lock:
        return _cache.get(head)


def load(store: BlobStore, ref: TranscriptRef) -> tuple[Message, ...]:
    """Every message of the chain ending at `ref.head`, oldest first."""
    if ref.head is None:
        return ()
    segments: list[list[Message]] = []
    head: str | None = ref.head
    base: tuple[Message, ...] = ()
    while head is not None:
        if (hit := _cached(head)) is not None:
            base = hit
            break
        node = json.loads(store.get(head))
        segments.append([Message.model_validate(m) for m in node["messages"]])
        head = node["prev"]
    messages = base + tuple(m for seg in reversed(segments) for m in seg)
    _remember(ref.head, messages)
    return messages


def append(store: BlobStore, ref: TranscriptRef, messages: Sequence[Message]) -> TranscriptRef:
    """A new head extending `ref` with `messages`; `ref` stays valid (nodes are immutable)."""
    if not messages:
        return ref
    node = {"prev": ref.head, "messages": [m.model_dump(mode="json") for m in messages]}
    head = store.put(canonical_bytes(node))
    if (prior := _cached(ref.head)) is not None:
        _remember(head, prior + tuple(messages))
    return TranscriptRef(head=head, length=ref.length + len(messages))
