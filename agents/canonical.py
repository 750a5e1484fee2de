"""Canonical JSON: one byte string per value, so equal content always hashes equal.

Prompt caching and the content-addressed store both depend on it: a request re-serialised
with a different key order would miss the cache, and a blob re-written with different
bytes would get a different address.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_bytes(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


REF_HEX_DIGITS = 32
"""128 bits of SHA-256 name a blob: a collision stays out of reach, and each reference is
written into history several times a turn (the transcript's head in the model call and its
answer, each stored tool output), so the digest's other half cost ~130 bytes a turn (issue 9).
Names of the full 64 digits, which histories recorded before 2026-12-07 hold, still read."""


def blob_ref(data: bytes) -> str:
    """The name the blob store gives `data`."""
    return sha256_hex(data)[:REF_HEX_DIGITS]


def names(ref: str, data: bytes) -> bool:
    """Whether `ref`, a blob's name (a SHA-256 hex digest or its first half), names `data`;
    a name of any other length names nothing (an empty one would name everything)."""
    return len(ref) in (REF_HEX_DIGITS, 64) and sha256_hex(data)[: len(ref)] == ref
