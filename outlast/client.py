"""Connecting to Temporal the same way everywhere (CLI, worker, tests, benchmarks)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes

from activities.payload_store import external_storage
from outlast.codec import codec_from_env
from outlast.converter import OutlastPayloadConverter

DEFAULT_ADDRESS = "localhost:7233"


async def data_converter(env: Mapping[str, str] | None = None) -> DataConverter:
    """pydantic payloads, with large ones claim-checked into external storage, encrypted when
    OUTLAST_PAYLOAD_KEY is set (outlast/codec.py)."""
    env = os.environ if env is None else env
    storage = await external_storage(env)
    codec = codec_from_env(env)
    return dataclasses.replace(
        pydantic_data_converter,
        payload_converter_class=OutlastPayloadConverter,
        external_storage=storage,
        payload_codec=codec,
        # With a key, failure messages and stack traces are encrypted as well (they are not
        # payloads otherwise, and a tool's error can quote what it read).
        failure_converter_class=(
            DefaultFailureConverterWithEncodedAttributes
            if codec is not None
            else pydantic_data_converter.failure_converter_class
        ),
    )


class ServerUnreachable(RuntimeError):
    """No Temporal server answered at the address: `reason` says how it failed, in a few
    words (the SDK raised a bare RuntimeError with the transport's debug dump)."""

    def __init__(self, address: str, reason: str) -> None:
        super().__init__(f"cannot reach Temporal at {address}: {reason}")
        self.address, self.reason = address, reason


def connect_failure(error: Exception) -> str:
    """The gist of a failed connection, not the Rust transport's debug dump of it."""
    if isinstance(error, ServerUnreachable):
        return error.reason
    text = str(error)
    if "ConnectionRefused" in text or "Connection refused" in text:
        return "nothing listens there (connection refused)"
    if "dns error" in text or "failed to lookup address" in text:
        return "the host name does not resolve"
    return text


async def connect(address: str | None = None, namespace: str | None = None) -> Client:
    """A client with Outlast's data converter and OpenTelemetry tracing.

    `address` defaults to `$TEMPORAL_ADDRESS`, then the embedded dev server's address.

    Raises:
        ServerUnreachable: no server answered there (a RuntimeError, as the SDK's was).
        ValueError: the payload settings do not make sense.
    """
    where = address or os.environ.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS
    try:
        return await Client.connect(
            where,
            namespace=namespace or os.environ.get("TEMPORAL_NAMESPACE", "default"),
            data_converter=await data_converter(),
            interceptors=[TracingInterceptor()],
        )
    except RuntimeError as e:
        # From code it was the SDK's `Failed client connect: ...` and a transport dump
        # (a user test, 2026-12-07); the CLI said it in a sentence.
        if not str(e).startswith("Failed client connect"):
            raise
        raise ServerUnreachable(where, connect_failure(e)) from e
