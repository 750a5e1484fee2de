"""Temporal's ExternalStorage claim-check, with Outlast's drivers.

Any payload bigger than the threshold (an activity input or result, a signal, a workflow
input) is written to external storage and history keeps only a reference, so no payload can
fail with PayloadsTooLarge and no single event bloats history. The conversation itself never
travels as a payload at all (see agents/transcript.py); this is the backstop for everything
else that can be large: tool results, file contents in Write calls, child inputs.

Drivers: `local` (default; content-addressed files under the state directory, for the
embedded server and single-host setups) and `s3` (Temporal's own S3 driver, for clusters;
needs `pip install 'temporalio[aioboto3]'`). Every client and worker of a namespace must be
configured alike, or they cannot read each other's references.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ExternalStorage,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from activities.store import LocalBlobStore, state_dir

DEFAULT_THRESHOLD = 128 * 1024


class LocalDiskStorageDriver(StorageDriver):
    """Payloads as content-addressed files: a retried store writes the same file."""

    def __init__(self, root: str | os.PathLike[str], name: str = "outlast-local") -> None:
        self._store = LocalBlobStore(root)
        self._name = name

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return "outlast.local-disk"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        def put_all() -> list[StorageDriverClaim]:
            return [
                StorageDriverClaim(
                    claim_data={"sha256": self._store.put(p.SerializeToString(deterministic=True))}
                )
                for p in payloads
            ]

        return await asyncio.to_thread(put_all)

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        def get_all() -> list[Payload]:
            return [Payload.FromString(self._store.get(c.claim_data["sha256"])) for c in claims]

        return await asyncio.to_thread(get_all)


def local_payload_root(env: Mapping[str, str]) -> Path:
    base = env.get("OUTLAST_STORE_DIR") or str(state_dir() / "store")
    return Path(base) / "payloads"


async def external_storage(env: Mapping[str, str]) -> ExternalStorage | None:
    """The claim-check configured by `OUTLAST_PAYLOAD_STORE` (local | s3 | off) and
    `OUTLAST_PAYLOAD_THRESHOLD` (bytes, default 128 KiB)."""
    kind = (env.get("OUTLAST_PAYLOAD_STORE") or "local").lower()
    threshold = int(env.get("OUTLAST_PAYLOAD_THRESHOLD") or DEFAULT_THRESHOLD)
    if kind == "off":
        return None
    if kind == "local":
        driver: StorageDriver = LocalDiskStorageDriver(local_payload_root(env))
    elif kind == "s3":
        driver = await _s3_driver(env)
    else:
        raise ValueError(f"OUTLAST_PAYLOAD_STORE={kind!r}: use local, s3 or off")
    return ExternalStorage(drivers=[driver], payload_size_threshold=threshold)


async def _s3_driver(env: Mapping[str, str]) -> StorageDriver:
    bucket = env.get("OUTLAST_S3_BUCKET")
    if not bucket:
        raise ValueError("OUTLAST_PAYLOAD_STORE=s3 needs OUTLAST_S3_BUCKET")
    try:
        import aioboto3
        from temporalio.contrib.aws.s3driver import S3StorageDriver
        from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client
    except ImportError as e:
        raise ValueError(
            "OUTLAST_PAYLOAD_STORE=s3 needs aioboto3: pip install 'temporalio[aioboto3]'"
        ) from e
    # The client lives as long as the process: every converter call may need it.
    s3 = await aioboto3.Session().client("s3").__aenter__()
    return S3StorageDriver(client=new_aioboto3_client(s3), bucket=bucket)
