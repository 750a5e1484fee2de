"""Outlast's payload converter: pydantic JSON, plus a clear end for a workflow started with
input that does not fit its type.

Without this, a start from the plain `temporal` CLI (or any client) with, say,
`{"prompt": 1}` fails the workflow's first task on every attempt: the workflow shows as
Running forever and nothing says why outside the worker's log. Here the validation errors of
a workflow input become a non-retryable `InvalidWorkflowInput` failure of that workflow,
whose message lists them. Unknown fields, top-level or inside the strict models an input
carries (the config, a stage), are no validation error: the input keeps them by name and the
workflow refuses a client's start with them, or waits for a newer worker for one of its own
(`workflows/client_input.py`). An `extra_forbidden` error that still reaches this converter
(inside a union of shapes, say) is taken for newer code's, and the task is retried. The
converter cannot tell a first task from a replay; a code change that made recorded inputs
invalid would fail those workflows too, which is why the committed replay corpus decodes
every recorded input with this converter (tests/replay). Anything else that fails to decode
(an activity result, a signal) behaves as before: a signal is dropped with a log line,
anything else retries the task.
"""

from __future__ import annotations

import difflib
import json
import typing
from collections.abc import Sequence
from typing import Any, ClassVar, final

from pydantic import BaseModel, ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import SerializationContext
from temporalio.exceptions import ApplicationError

from agents.questions import QuestionAnswers
from workflows.client_input import fields_of, named_unknown, with_guess
from workflows.contracts import AgentInput, ClientInput, ForkJoinInput, PlanDecisionInput
from workflows.nested_unknowns import empty, optional_of, strip_unknown
from workflows.pattern_contracts import (
    AddMemberRequest,
    CoordinatorInput,
    PipelineInput,
    ShutdownAsk,
    StageDecision,
    TaskCreateRequest,
    TaskUpdateRequest,
    TeamInput,
    TeamMail,
    VerifiedTaskInput,
)
from workflows.shells import ShellTaskInput

WORKFLOW_INPUTS: tuple[type[ClientInput], ...] = (
    AgentInput,
    CoordinatorInput,
    ForkJoinInput,
    PipelineInput,
    TeamInput,
    VerifiedTaskInput,
)
INTERNAL_INPUTS: tuple[type[BaseModel], ...] = (ShellTaskInput,)
"""Inputs of workflows only Outlast's own start, which any client can start all the same: a
malformed one failed the first workflow task on every attempt (a user test, 2026-12-05). They
are lenient about unknown fields, so a rolling deploy's newer input decodes."""
UPDATE_INPUTS: tuple[type[ClientInput], ...] = (
    StageDecision,
    TeamMail,
    ShutdownAsk,
    PlanDecisionInput,
)
"""The updates people send: a misspelt required field (`aprove`) came back as pydantic's
"Field required" with the whole input dumped after it (a user test, 2026-12-05)."""
PLAIN_UPDATE_INPUTS: tuple[type[BaseModel], ...] = (
    QuestionAnswers,
    AddMemberRequest,
    TaskCreateRequest,
    TaskUpdateRequest,
)
"""Updates an agent's call sends as well (all but `answer_question` client inputs too, whose
unknown fields their validators refuse): one that does not fit was refused as "Failed
decoding arguments", the reason only in its cause (a user test, 2026-12-05). A field a
strict model in them does not have is refused with the rest: an update is refused either
way, so there is no newer worker to wait for."""


@final
class OutlastPayloadConverter(PydanticPayloadConverter):
    """One instance per process, whoever asks for one.

    temporalio (1.35) makes a new `DataConverter` for every payload sequence it may store
    externally (`_with_store_context` is a `dataclasses.replace`), and each one instantiated
    its payload converter class: a composite of five converters, a schema serializer and an
    empty TypeAdapter cache, so every decode built its TypeAdapter again. That was 4% of the
    fan-out worker's busy samples (py-spy, bench/fanout.py). The converter keeps no state
    beyond that cache, so one instance serves every context. What would change it in place is
    kept off it: a context-aware part gets a converter of its own (`with_context`), and a copy
    or an unpickled one is the shared instance itself. Not for subclassing: a subclass's
    `__init__` would run again on the shared instance at every instantiation.
    """

    _shared: ClassVar[OutlastPayloadConverter]
    """Built once, when this module is imported (below the class)."""

    def __new__(cls) -> OutlastPayloadConverter:
        return cls._shared

    def __init__(self) -> None:
        """Built once, in `__new__`; Python calls this on every instantiation."""

    @classmethod
    def _build(cls) -> OutlastPayloadConverter:
        made = super().__new__(cls)
        PydanticPayloadConverter.__init__(made)
        return made

    def with_context(self, context: SerializationContext) -> OutlastPayloadConverter:
        # The SDK's composite builds its "new instance" with `type(self)()`, which here is the
        # shared one: it would be re-bound in place, for every context at once.
        converters = self.get_converters_with_context(context)
        if converters is None:
            return self
        own = self._build()
        own._set_converters(*converters)
        return own

    def __reduce__(self) -> tuple[type, tuple[()]]:
        # copy, deepcopy and pickle would otherwise write their state back onto the shared
        # instance (`copyreg.__newobj__` calls `__new__`, which returns it).
        return (OutlastPayloadConverter, ())

    def from_payloads(
        self, payloads: Sequence[Payload], type_hints: list[type] | None = None
    ) -> list[Any]:
        try:
            return super().from_payloads(payloads, type_hints)
        except ValidationError as e:
            hints = [_required(t) for t in type_hints or []]
            inputs = (*WORKFLOW_INPUTS, *INTERNAL_INPUTS, *UPDATE_INPUTS, *PLAIN_UPDATE_INPUTS)
            wanted = next((t for t in hints if t in inputs), None)
            if wanted is None or (_newer_schema(e) and wanted not in PLAIN_UPDATE_INPUTS):
                raise
            workflows = (*WORKFLOW_INPUTS, *INTERNAL_INPUTS)
            unknown = _unknown_keys(payloads[hints.index(wanted)], wanted)
            # A misspelt required field (`promt`) is "prompt: Field required": name the key.
            also = f"; {named_unknown(unknown, fields_of(wanted))}" if unknown else ""
            raise ApplicationError(
                f"invalid {wanted.__name__}: {_errors(e, wanted)}{also}",
                type="InvalidWorkflowInput" if wanted in workflows else "InvalidUpdateInput",
                non_retryable=True,
                # Said whole above: pydantic's chained error reached `temporal` as a second,
                # "retryable: true" failure with its internals (a user test, 2026-12-06).
            ) from None


OutlastPayloadConverter._shared = OutlastPayloadConverter._build()


def _required(hint: Any) -> Any:
    """`X` for `X | None`: an update's argument is optional so that its validator, not the
    handler, answers an update sent without one (`require_update_input`)."""
    args = typing.get_args(hint)
    if type(None) in args and len(args) == 2:
        return next(a for a in args if a is not type(None))
    return hint


def _newer_schema(e: ValidationError) -> bool:
    """Fields this worker does not know: the input comes from newer code (a rolling deploy),
    and a worker of that version can run it."""
    return any(err["type"] == "extra_forbidden" for err in e.errors())


def _unknown_keys(payload: Payload, model: type[BaseModel]) -> list[str]:
    """The top-level keys of `payload` that `model` does not have (with, for a ClientInput,
    those inside its strict models): a lenient model drops them without a word, and a strict
    one's own error names them already."""
    try:
        given = json.loads(payload.data)
    except ValueError:
        return []
    if not isinstance(given, dict):
        return []
    if not issubclass(model, ClientInput):
        if model.model_config.get("extra") == "forbid":
            return []
        return sorted(str(k) for k in given if k not in model.model_fields and not empty(given[k]))
    nested: list[str] = []
    for name, field in model.model_fields.items():
        if name in given:
            strip_unknown(field.annotation, given[name], name, nested)
    # A stage's misspelt `name` is "stages.0.name: Field required": name the key there too.
    return [*model.unknown_in(given), *nested, *_inputs_unknown(model, given)]


def _inputs_unknown(model: type[BaseModel], given: dict, prefix: str = "") -> list[str]:
    """`lead.promt (did you mean prompt?)`: the unknown keys of the inputs nested in `given`
    (a team's lead, a teammate), each named with its path. A lead's misspelt `promt` read
    only "lead.prompt: Field required" (a user test, 2026-12-07)."""
    found: list[str] = []
    for name, field in model.model_fields.items():
        value, annotation = given.get(name), optional_of(field.annotation)
        if typing.get_origin(annotation) is list and typing.get_args(annotation):
            inner = optional_of(typing.get_args(annotation)[0])
            # Not a list (`"teammates": 5`): pydantic's own error says so.
            listed = value if isinstance(value, list) else []
            items = [(f"{prefix}{name}[{i}]", v) for i, v in enumerate(listed)]
        else:
            inner, items = annotation, [(f"{prefix}{name}", value)]
        if not (isinstance(inner, type) and issubclass(inner, ClientInput)):
            continue
        for path, data in items:
            if isinstance(data, dict):
                known = fields_of(inner)
                found += [f"{path}.{with_guess(k, known)}" for k in inner.unknown_in(data)]
                found += _inputs_unknown(inner, data, f"{path}.")
    return found


def _errors(e: ValidationError, model: type[BaseModel], limit: int = 8) -> str:
    parts = [
        f"{_path(err['loc']) or '(input)'}: {err['msg']}{_guess(model, err)}"
        for err in e.errors()[:limit]
    ]
    more = e.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _path(loc: Sequence[Any]) -> str:
    """`stages[0].name`, as the unknown fields beside it are named (pydantic's own is
    `stages.0.name`)."""
    path = ""
    for step in loc:
        path += f"[{step}]" if isinstance(step, int) else f".{step}" if path else str(step)
    return path


def _guess(model: type[BaseModel], err: Any) -> str:
    """` (did you mean subject?)` for a field a strict model does not have (`subjectt`)."""
    if err["type"] != "extra_forbidden" or not err["loc"]:
        return ""
    owner = _model_at(model, err["loc"][:-1])
    if owner is None:
        return ""
    close = difflib.get_close_matches(str(err["loc"][-1]), list(owner.model_fields), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _model_at(model: Any, loc: Sequence[Any]) -> type[BaseModel] | None:
    """The model that holds the field at `loc` (a validation error's path) in `model`."""
    for step in loc:
        model = optional_of(model)
        if isinstance(model, type) and issubclass(model, BaseModel):
            field = model.model_fields.get(str(step))
            if field is None:
                return None
            model = field.annotation
        elif typing.get_origin(model) is list and typing.get_args(model):
            model = typing.get_args(model)[0]
        elif typing.get_origin(model) is dict and len(typing.get_args(model)) == 2:
            model = typing.get_args(model)[1]
        else:
            return None
    model = optional_of(model)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None
