"""Outlast's search attributes on a namespace: which are missing, and registering them.

The embedded dev server registers them at start. On another server, `outlast run` checks
first: without them every upsert would fail the workflow task, so it starts agents with
search attributes off (and says how to register them) rather than start agents that stall.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client

from workflows.search_attributes import ALL


async def missing_search_attributes(client: Client) -> list[str]:
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    known = set(listed.custom_attributes) | set(listed.system_attributes)
    return [key.name for key in ALL if key.name not in known]


async def register_search_attributes(client: Client) -> list[str]:
    """Register the missing ones; returns their names."""
    missing = set(await missing_search_attributes(client))
    wanted = {
        key.name: IndexedValueType.Value(f"INDEXED_VALUE_TYPE_{key.indexed_value_type.name}")
        for key in ALL
        if key.name in missing
    }
    if wanted:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=client.namespace, search_attributes=wanted)
        )
    return sorted(wanted)
