"""Connecting to Temporal the same way everywhere (CLI, worker, tests, benchmarks)."""

from __future__ import annotations

import os

from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.contrib.pydantic import pydantic_data_converter

DEFAULT_ADDRESS = "localhost:7233"


async def connect(address: str | None = None, namespace: str | None = None) -> Client:
    """A client with the pydantic converter and OpenTelemetry tracing.

    `address` defaults to `$TEMPORAL_ADDRESS`, then the embedded dev server's address.
    """
    return await Client.connect(
        address or os.environ.get("TEMPORAL_ADDRESS") or DEFAULT_ADDRESS,
        namespace=namespace or os.environ.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=pydantic_data_converter,
        interceptors=[TracingInterceptor()],
    )
