"""The sandboxed workflow runner, without a trip into the sandbox for every payload.

For each payload sequence a worker decodes from an activation or encodes into a completion,
temporalio (1.35) asks the workflow instance which serialization context applies (the
converter may encode per workflow, activity or child), and when encoding also which workflow
an externally stored payload belongs to: three to four questions per sequence. The sandboxed
instance answers each by compiling and running a code string inside the sandbox, with its
import hooks swapped in and out. In the 20x5 fan-out that was 18% of the worker's busy samples
(py-spy, bench/fanout.py), for answers Outlast's converter never reads.

`sandbox_runner(data_converter)` answers them outside the sandbox where that changes nothing:
- the serialization context, when the converter does not react to one (checked with a
  workflow and two activity contexts: `DataConverter.with_context` hands back the converter
  itself): every command then gets the workflow's own context. Encoding selects the very
  converter the SDK would have; decoding, a copy that differs only in the storage target it
  carries, which retrieval does not read;
- the storage target, when the external storage cannot read it (none, or only Outlast's
  content-addressed local driver, exactly that class, without a driver selector): the
  workflow's own target.
A converter that does use either (a codec keyed by context, a driver keyed by workflow such
as S3's) gets the SDK's answers from inside the sandbox, as before; Nexus commands always do.
The runner must be given the converter its worker uses (worker.build_workers passes the
client's). tests/unit/test_workflow_runner_sdk.py pins the SDK behaviour this relies on.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import temporalio.workflow
from temporalio.api.enums.v1 import CommandType
from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
    WorkflowSerializationContext,
)
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from activities.payload_store import LocalDiskStorageDriver

_PROBES: tuple[SerializationContext, ...] = (
    WorkflowSerializationContext(namespace="probe", workflow_id="probe"),
    *(
        ActivitySerializationContext(
            namespace="probe",
            workflow_id="probe",
            workflow_type="probe",
            activity_type="probe",
            activity_id="1",
            activity_task_queue="probe",
            is_local=local,
        )
        for local in (False, True)
    ),
)


def ignores_context(dc: DataConverter) -> bool:
    """No payload converter, codec, failure converter or storage of `dc` changes with a
    serialization context."""
    return all(dc.with_context(probe) is dc for probe in _PROBES)


def ignores_store_target(dc: DataConverter) -> bool:
    """Where a payload is stored does not depend on the workflow it belongs to."""
    storage = dc.external_storage
    if storage is None:
        return True
    return storage.driver_selector is None and all(
        type(d) is LocalDiskStorageDriver for d in storage.drivers
    )


def sandbox_runner(
    restrictions: SandboxRestrictions, data_converter: DataConverter | None = None
) -> SandboxedWorkflowRunner:
    """The runner for `data_converter`'s workers; without one, the SDK's own."""
    if data_converter is None:
        return SandboxedWorkflowRunner(restrictions=restrictions)
    return AnsweringSandboxedRunner(
        restrictions=restrictions,
        context_free=ignores_context(data_converter),
        store_target_free=ignores_store_target(data_converter),
    )


@dataclasses.dataclass(frozen=True)
class AnsweringSandboxedRunner(SandboxedWorkflowRunner):
    """The SDK's sandboxed runner, whose instances answer what the flags allow themselves."""

    context_free: bool = False
    store_target_free: bool = False

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        inner = super().create_instance(det)
        if not (self.context_free or self.store_target_free):
            return inner
        return _AnsweredOutside(inner, self.context_free, self.store_target_free)


class _AnsweredOutside(WorkflowInstance):
    """The sandboxed instance, with the two questions answered here when they can be."""

    def __init__(self, inner: WorkflowInstance, context_free: bool, store_target_free: bool):
        self._inner = inner
        info = inner.get_info()
        self._context = (
            WorkflowSerializationContext(namespace=info.namespace, workflow_id=info.workflow_id)
            if context_free
            else None
        )
        self._store = (
            StorageDriverStoreContext(
                target=StorageDriverWorkflowInfo(
                    id=info.workflow_id,
                    run_id=info.run_id,
                    type=info.workflow_type,
                    namespace=info.namespace,
                )
            )
            if store_target_free
            else None
        )

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        return self._inner.activate(act)

    # `command_info` is the SDK's private CommandInfo (command_type, command_seq), or None.
    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        if self._context is None or _is_nexus(command_info):
            return self._inner.get_serialization_context(command_info)
        return self._context

    def get_external_store_context(self, command_info: Any) -> StorageDriverStoreContext:
        if self._store is None:
            return self._inner.get_external_store_context(command_info)
        return self._store

    def get_info(self) -> temporalio.workflow.Info:
        return self._inner.get_info()

    def get_thread_id(self) -> int | None:
        return self._inner.get_thread_id()


_NEXUS = CommandType.COMMAND_TYPE_SCHEDULE_NEXUS_OPERATION
"""Read once: a protobuf enum's attribute is looked up in Python on every access, and this is
asked for every payload sequence (0.5% of the fan-out worker's samples)."""


def _is_nexus(command_info: Any) -> bool:
    # Nexus contexts are not among the probes, and a system endpoint's depends on the input.
    return command_info is not None and command_info.command_type == _NEXUS
