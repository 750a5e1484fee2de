"""The workers' runner (outlast/workflow_runner.py) answers the SDK's per-payload questions
outside the sandbox only where no answer can matter. A converter that does read them, a codec
keyed by serialization context or a storage driver keyed by workflow, gets the SDK's own
answers: each test below sees a child's payloads stamped with the child, not the parent."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import ExternalStorageReference
from temporalio.client import Client
from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    ExternalStorage,
    PayloadCodec,
    SerializationContext,
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from outlast.client import data_converter
from outlast.codec import new_key
from outlast.workflow_runner import ignores_context, ignores_store_target
from tests.support import agent_input, running_workers, scripted_model, start
from tests.workflows.test_agent_endings import helper_script
from worker import sandbox_runner


def stamp_of(context: SerializationContext | None) -> str:
    if isinstance(context, ActivitySerializationContext):
        return f"activity {context.activity_type}"
    if isinstance(context, WorkflowSerializationContext):
        return f"workflow {context.workflow_id}"
    return "none"


class StampingCodec(PayloadCodec, WithSerializationContext):
    """Marks each payload with the context it was encoded under; decoding leaves it be."""

    def __init__(self, context: SerializationContext | None = None) -> None:
        self.context = context

    def with_context(self, context: SerializationContext) -> StampingCodec:
        return StampingCodec(context)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        stamped = []
        for p in payloads:
            copy = Payload()
            copy.CopyFrom(p)
            copy.metadata["stamp"] = stamp_of(self.context).encode()
            stamped.append(copy)
        return stamped

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


class TargetRecordingDriver(StorageDriver):
    """Keeps payloads in memory, content-addressed as a driver must be (a replayed workflow
    task stores its commands' payloads again), and notes which workflow each was stored for."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.targets: dict[str, str | None] = {}

    def name(self) -> str:
        return "recording"

    def type(self) -> str:
        return "test.recording"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        claims = []
        for p in payloads:
            # Bytes, not the Payload: the SDK reuses that message for the reference.
            data = p.SerializeToString(deterministic=True)
            key = hashlib.sha256(data).hexdigest()
            self.blobs[key] = data
            self.targets[key] = getattr(context.target, "id", None)
            claims.append(StorageDriverClaim(claim_data={"key": key}))
        return claims

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        return [Payload.FromString(self.blobs[c.claim_data["key"]]) for c in claims]


async def client_with(client: Client, converter: DataConverter) -> Client:
    return Client(**{**client.config(), "data_converter": converter})


async def run_helper(client: Client, git_repo) -> str:
    """A parent that asks one sync sub-agent: the parent's workflow id."""
    with scripted_model(helper_script([{"text": "the answer is 42"}], background=False)):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            await parent.result()
    return parent.id


async def test_outlasts_converters_are_answered_outside_the_sandbox():
    plain, keyed = (
        await data_converter({}),
        await data_converter({"OUTLAST_PAYLOAD_KEY": new_key()}),
    )
    for converter in (plain, keyed):
        runner = sandbox_runner(converter)
        assert runner.context_free and runner.store_target_free
    off = await data_converter({"OUTLAST_PAYLOAD_STORE": "off"})
    assert ignores_context(off) and ignores_store_target(off)


async def test_a_codec_that_reads_the_context_gets_the_sdks_context(client, git_repo):
    converter = dataclasses.replace(await data_converter({}), payload_codec=StampingCodec())
    assert not ignores_context(converter) and ignores_store_target(converter)
    parent_id = await run_helper(await client_with(client, converter), git_repo)
    stamps = {}
    async for e in client.get_workflow_handle(parent_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = e.activity_task_scheduled_event_attributes
            stamps[attrs.activity_type.name] = attrs.input.payloads[0].metadata["stamp"]
        elif e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            attrs = e.start_child_workflow_execution_initiated_event_attributes
            stamps["child"] = attrs.input.payloads[0].metadata["stamp"]
    assert stamps["llm.call_model"] == b"activity llm.call_model"
    assert stamps["child"] == f"workflow {parent_id}/helper".encode()


def claim_key(payload: Payload) -> str:
    ref = json_format.Parse(payload.data, ExternalStorageReference())
    return ref.claim_data["key"]


async def test_a_driver_that_reads_the_target_gets_the_sdks_target(client, git_repo):
    driver = TargetRecordingDriver()
    storage = ExternalStorage(drivers=[driver], payload_size_threshold=256)
    converter = dataclasses.replace(await data_converter({}), external_storage=storage)
    assert ignores_context(converter) and not ignores_store_target(converter)
    parent_id = await run_helper(await client_with(client, converter), git_repo)
    child_id = f"{parent_id}/helper"
    targets = {}
    async for e in client.get_workflow_handle(parent_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = e.activity_task_scheduled_event_attributes
            targets[attrs.activity_type.name] = driver.targets[claim_key(attrs.input.payloads[0])]
        elif e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            attrs = e.start_child_workflow_execution_initiated_event_attributes
            targets["child input"] = driver.targets[claim_key(attrs.input.payloads[0])]
    async for e in client.get_workflow_handle(child_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
            result = e.workflow_execution_completed_event_attributes.result.payloads[0]
            targets["child result"] = driver.targets[claim_key(result)]
    # The SDK's rules: an activity's payloads belong to its workflow, a child's input to the
    # child, and a child's result to the parent that reads it.
    assert targets["llm.call_model"] == parent_id
    assert targets["child input"] == child_id
    assert targets["child result"] == parent_id
