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
from temporalio.service import RPCError

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


async def worker_warning(client: Client) -> str | None:
    """What a worker starting on this namespace should say when Outlast's search attributes
    are missing, or None. A workflow started with them on (the default from code or the
    `temporal` CLI) would stall there, every workflow task failing with BadSearchAttributes,
    and nothing said so until someone read its history. A namespace that cannot be listed
    (no permission) is not checked: the worker is not the one to refuse."""
    try:
        missing = await missing_search_attributes(client)
    except RPCError:
        return None
    if not missing:
        return None
    return (
        f"namespace {client.namespace} lacks Outlast's search attributes "
        f"({', '.join(missing)}): a workflow started with search attributes on (the default "
        "from code or the temporal CLI) stalls, its workflow tasks failing with "
        "BadSearchAttributes, until `outlast setup` registers them; `outlast run` starts "
        "without them"
    )
