"""What outlast/workflow_runner.py relies on in temporalio, pinned. The SDK's per-command
converter choice is private API: for Outlast's converter, the workflow's own context must
select the converter an activity's context would (encoding), or one that decodes alike. A
failure here after an SDK upgrade means checking the runner again, not mending this test."""

from __future__ import annotations

from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
    WorkflowSerializationContext,
)
from temporalio.worker._workflow import _CommandAwareDataConverter

from outlast.client import data_converter

WORKFLOW = WorkflowSerializationContext(namespace="default", workflow_id="wf")
ACTIVITY = ActivitySerializationContext(
    namespace="default",
    workflow_id="wf",
    workflow_type="AgentWorkflow",
    activity_type="llm.call_model",
    activity_id="1",
    activity_task_queue="outlast",
    is_local=False,
)


class Answers:
    """A workflow instance as the SDK's converter choice sees it: only its answers."""

    def __init__(self, context: SerializationContext | None) -> None:
        self.context = context

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        return self.context

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return StorageDriverStoreContext(target=None)


def chosen(dc: DataConverter, workflow_dc: DataConverter, context) -> DataConverter:
    return _CommandAwareDataConverter.create(
        instance=Answers(context),  # type: ignore[arg-type]
        context_free_dc=dc,
        workflow_context_dc=workflow_dc,
        workflow_context=WORKFLOW,
    )._get_current_dc()


async def test_encoding_selects_the_same_converter_for_any_context():
    dc = await data_converter({})
    encoding = dc.with_context(WORKFLOW)  # as the SDK builds it for a completion
    assert chosen(dc, encoding, WORKFLOW) is dc
    assert chosen(dc, encoding, ACTIVITY) is dc
    assert chosen(dc, encoding, None) is dc


async def test_decoding_selects_a_converter_that_decodes_alike(tmp_path):
    dc = await data_converter(
        {"OUTLAST_STORE_DIR": str(tmp_path), "OUTLAST_PAYLOAD_THRESHOLD": "16"}
    )
    target = StorageDriverStoreContext(
        target=StorageDriverWorkflowInfo(id="wf", namespace="default")
    )
    decoding = dc._with_contexts(WORKFLOW, target)  # as the SDK builds it for an activation
    ours, sdks = chosen(dc, decoding, WORKFLOW), chosen(dc, decoding, ACTIVITY)
    assert sdks is dc and ours is decoding
    assert ours.payload_codec is sdks.payload_codec
    assert type(ours.payload_converter) is type(sdks.payload_converter)
    assert ours.external_storage.drivers == sdks.external_storage.drivers
    # A stored payload comes back the same through either: retrieval reads no store target.
    value = {"text": "x" * 100}
    stored = await dc.encode([value])
    assert stored[0].metadata.get("messageType") == b"temporal.api.sdk.v1.ExternalStorageReference"
    assert await ours.decode(stored, [dict]) == await sdks.decode(stored, [dict]) == [value]
