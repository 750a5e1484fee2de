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


async def connect(address: str | None = None, namespace: str | None = None) -> Client:
    """A client with Outlast's data converter and OpenTelemetry tracing.

    `address` defaults to `$TEMPORAL_ADDRESS`, then the embedded dev server's address.
    """
    return await Client.connect(
        address or os.environ.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS,
        namespace=namespace or os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=await data_converter(),
        interceptors=[TracingInterceptor()],
    )
