"""Optional payload encryption (AES-256-GCM) for everything Outlast puts in Temporal.

Without it the server stores payloads as they are: Outlast keeps secrets out of them (the API
key never enters a workflow; Bash runs without it), but what an agent reads with a tool (a
`.env` file, say) is in the activity result, readable by anyone who can read the history. With
`OUTLAST_PAYLOAD_KEY` set (base64 of 32 random bytes, the same on every client and worker)
every payload is encrypted before it leaves the process: inputs, results, signals, queries,
memo, and the UI's summary and details; failure messages and stack traces too (they are
moved into an encoded attribute). Keys cannot be rotated yet: a workflow that started under
one key needs it for as long as it may replay. The cost: the Web UI and `temporal workflow show` see
`binary/encrypted` unless pointed at a codec server holding the key, and search attributes
stay in clear (the server must index them; Outlast puts only ids, types and statuses there).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping, Sequence

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

ENCODING = b"binary/encrypted"
KEY_ID = "encryption-key-id"


class PayloadKeyError(ValueError):
    """OUTLAST_PAYLOAD_KEY is set but is not a usable key."""


class AesGcmCodec(PayloadCodec):
    """Encrypts each payload whole (metadata included) with AES-256-GCM and a fresh nonce."""

    def __init__(self, key: bytes, key_id: str = "default") -> None:
        if len(key) != 32:
            raise PayloadKeyError("the payload key must be 32 bytes (AES-256)")
        self._aead = AESGCM(key)
        self._key_id = key_id.encode()

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            nonce = os.urandom(12)
            sealed = self._aead.encrypt(nonce, p.SerializeToString(), self._key_id)
            out.append(
                Payload(metadata={"encoding": ENCODING, KEY_ID: self._key_id}, data=nonce + sealed)
            )
        return out

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        out = []
        for p in payloads:
            if p.metadata.get("encoding") != ENCODING:
                out.append(p)  # written before encryption was turned on
                continue
            key_id = p.metadata.get(KEY_ID, b"")
            if key_id != self._key_id:
                raise PayloadKeyError(
                    f"payload encrypted with key {key_id.decode()!r}, this process has "
                    f"{self._key_id.decode()!r}"
                )
            plain = self._aead.decrypt(p.data[:12], p.data[12:], self._key_id)
            out.append(Payload.FromString(plain))
        return out


def codec_from_env(env: Mapping[str, str]) -> AesGcmCodec | None:
    """The codec `OUTLAST_PAYLOAD_KEY` (and `OUTLAST_PAYLOAD_KEY_ID`) ask for, or None."""
    raw = env.get("OUTLAST_PAYLOAD_KEY")
    if not raw:
        return None
    try:
        key = base64.b64decode(raw, validate=True)
    except binascii.Error as e:
        raise PayloadKeyError("OUTLAST_PAYLOAD_KEY is not base64") from e
    # The id names the key in each payload: by default a digest of the key itself, so a
    # process with another key says so instead of failing with a bare authentication error.
    key_id = env.get("OUTLAST_PAYLOAD_KEY_ID") or "k-" + hashlib.sha256(key).hexdigest()[:12]
    return AesGcmCodec(key, key_id)


def new_key() -> str:
    """A fresh key for OUTLAST_PAYLOAD_KEY."""
    return base64.b64encode(os.urandom(32)).decode()
