"""Outlast's payload converter: pydantic JSON, plus a clear end for a workflow started with
input that does not fit its type.

Without this, a start from the plain `temporal` CLI (or any client) with, say,
`{"prompt": 1}` fails the workflow's first task on every attempt: the workflow shows as
Running forever and nothing says why outside the worker's log. Here the validation errors of
a workflow input become a non-retryable `InvalidWorkflowInput` failure of that workflow,
whose message lists them. Not for fields this worker does not know: newer code started it
(a rolling deploy), so the task is retried until a newer worker takes it. The converter cannot
tell a first task from a replay; a code change that made recorded inputs invalid would fail
those workflows too, which is why the committed replay corpus decodes every recorded input
with this converter (tests/replay). Anything else that fails to decode (an activity result,
a signal) behaves as before: a signal is dropped with a log line, anything else retries the
task.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.exceptions import ApplicationError

from workflows.contracts import AgentInput, ForkJoinInput
from workflows.pattern_contracts import (
    CoordinatorInput,
    PipelineInput,
    TeamInput,
    VerifiedTaskInput,
)

WORKFLOW_INPUTS: tuple[type, ...] = (
    AgentInput,
    CoordinatorInput,
    ForkJoinInput,
    PipelineInput,
    TeamInput,
    VerifiedTaskInput,
)


class OutlastPayloadConverter(PydanticPayloadConverter):
    """One instance per process, whoever asks for one.

    temporalio (1.35) makes a new `DataConverter` for every payload sequence it may store
    externally (`_with_store_context` is a `dataclasses.replace`), and each one instantiated
    its payload converter class: a composite of eight converters, a schema serializer and an
    empty TypeAdapter cache, so every decode built its TypeAdapter again. That was 4% of the
    fan-out worker's busy samples (py-spy, bench/fanout.py). The converter keeps no state
    beyond that cache and answers `with_context` with itself (outlast/workflow_runner.py
    relies on the same), so one instance serves every context.
    """

    _shared: ClassVar[OutlastPayloadConverter | None] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __new__(cls) -> OutlastPayloadConverter:
        shared = cls.__dict__.get("_shared")
        if shared is not None:
            return shared
        with cls._lock:
            if cls.__dict__.get("_shared") is None:
                made = super().__new__(cls)
                PydanticPayloadConverter.__init__(made)
                cls._shared = made
            return cls._shared

    def __init__(self) -> None:
        """Built once, in `__new__`; Python calls this on every instantiation."""

    def from_payloads(
        self, payloads: Sequence[Payload], type_hints: list[type] | None = None
    ) -> list[Any]:
        try:
            return super().from_payloads(payloads, type_hints)
        except ValidationError as e:
            wanted = next((t for t in type_hints or [] if t in WORKFLOW_INPUTS), None)
            if wanted is None or _newer_schema(e):
                raise
            raise ApplicationError(
                f"invalid {wanted.__name__}: {_errors(e)}",
                type="InvalidWorkflowInput",
                non_retryable=True,
            ) from e


def _newer_schema(e: ValidationError) -> bool:
    """Fields this worker does not know: the input comes from newer code (a rolling deploy),
    and a worker of that version can run it."""
    return any(err["type"] == "extra_forbidden" for err in e.errors())


def _errors(e: ValidationError, limit: int = 8) -> str:
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '(input)'}: {err['msg']}"
        for err in e.errors()[:limit]
    ]
    more = e.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
