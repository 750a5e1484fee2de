import copy
import dataclasses
import json
import pickle

import pytest
from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    EncodingPayloadConverter,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)
from temporalio.exceptions import ApplicationError

from agents.questions import QuestionAnswers
from outlast.client import data_converter
from outlast.converter import OutlastPayloadConverter
from workflows.client_input import wait_for_a_newer_worker
from workflows.contracts import AgentInput, PlanDecision
from workflows.pattern_contracts import TaskCreateRequest
from workflows.shells import ShellTaskInput


def payload(value: dict) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


WORKSPACE = {"root": "/w", "host_queue": "outlast-host-x"}


def test_a_malformed_input_of_an_internal_workflow_is_a_non_retryable_failure():
    """`ShellTaskWorkflow` is started by agents, but any client can start it: a malformed
    input failed its first workflow task on every attempt."""
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads([payload({"shell_id": 1})], [ShellTaskInput])
    assert failed.value.type == "InvalidWorkflowInput" and failed.value.non_retryable
    assert failed.value.message.startswith("invalid ShellTaskInput: shell_id: Input should be")
    assert "command: Field required" in failed.value.message


def test_an_update_input_that_is_no_client_input_is_refused_with_its_reasons():
    """`task_create` with `{"tsk": ...}` was refused as "Failed decoding arguments"."""
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads(
            [payload({"tsk": {"subject": "x"}})], [TaskCreateRequest | None]
        )
    assert failed.value.type == "InvalidUpdateInput" and failed.value.non_retryable
    assert failed.value.message == (
        "invalid TaskCreateRequest: task: Field required; unknown field tsk (did you mean task?)"
    )
    with pytest.raises(ApplicationError) as extra:
        OutlastPayloadConverter().from_payloads(
            [payload({"answers": {}, "request": "r1"})], [QuestionAnswers | None]
        )
    assert extra.value.message == (
        "invalid QuestionAnswers: request: Extra inputs are not permitted (did you mean "
        "request_id?)"
    )


def test_a_misspelt_field_of_an_update_input_is_named_with_the_field_meant():
    """`task_create` with `subjectt` said "Extra inputs are not permitted" and no more (a
    user test, 2026-12-05)."""
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads(
            [payload({"task": {"subjectt": "x"}})], [TaskCreateRequest | None]
        )
    said = failed.value.message
    assert said.startswith("invalid TaskCreateRequest: task.subject: Field required; "), said
    assert said.endswith("; unknown field task.subjectt (did you mean subject?)"), said
    with pytest.raises(ApplicationError) as far:
        OutlastPayloadConverter().from_payloads(
            [payload({"task": {"subject": "x", "zzz": 1}})], [TaskCreateRequest | None]
        )
    assert far.value.message.endswith("; unknown field task.zzz"), far.value


def test_a_workflow_input_of_the_wrong_shape_is_a_non_retryable_failure():
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads([payload({"prompt": 1})], [AgentInput])
    assert failed.value.type == "InvalidWorkflowInput" and failed.value.non_retryable
    assert "prompt: Input should be a valid string" in failed.value.message
    assert "workspace: Field required" in failed.value.message


def test_a_misspelt_required_field_is_named_beside_the_missing_one():
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads(
            [payload({"promt": "x", "workspace": WORKSPACE})], [AgentInput]
        )
    message = failed.value.message
    assert "prompt: Field required" in message
    assert message.endswith("; unknown field promt (did you mean prompt?)"), message


def test_a_misspelt_required_field_of_a_nested_input_is_named_with_its_path():
    """A team's lead with `promt` read only "lead.prompt: Field required", where an agent's
    start names the key (a user test, 2026-12-07)."""
    from workflows.pattern_contracts import TeamInput

    team = {
        "team_name": "t",
        "workspace": WORKSPACE,
        "lead": {"name": "lead", "promt": "x"},
        "teammates": [{"name": "b", "prompt": "y"}, {"nmae": "c", "prompt": "z"}],
    }
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads([payload(team)], [TeamInput])
    message = failed.value.message
    assert (
        "lead.prompt: Field required" in message and "teammates[1].name: Field required" in message
    )
    assert message.endswith(
        "; unknown fields lead.promt (did you mean prompt?), teammates[1].nmae (did you mean name?)"
    ), message
    # A list field given no list is pydantic's to name (it raised TypeError, and the run
    # hung on "Failed decoding arguments": a review).
    for odd in (5, True, "x"):
        with pytest.raises(ApplicationError) as failed:
            bad = {**team, "lead": {"name": "lead", "prompt": "x"}, "teammates": odd}
            OutlastPayloadConverter().from_payloads([payload(bad)], [TeamInput])
        assert "teammates: Input should be a valid array" in failed.value.message, failed.value


def test_fields_from_newer_code_are_kept_by_path_so_the_workflow_decides():
    """Inside the config they decode now (workflows/nested_unknowns.py): a client's start is
    refused with them named, and Outlast's own start of a child waits for a newer worker (its
    task fails, and is retried, as the decoding's failure was before)."""
    newer = {"prompt": "x", "workspace": WORKSPACE, "config": {"tools": {"new_knob": 1}}}
    [inp] = OutlastPayloadConverter().from_payloads([payload(newer)], [AgentInput])
    assert inp.unknown_nested_fields == ["config.tools.new_knob"]
    with pytest.raises(RuntimeError, match="config.tools.new_knob"):
        wait_for_a_newer_worker(inp)
    at_default = {**newer, "config": {"tools": {"new_knob": False}}}
    [inp] = OutlastPayloadConverter().from_payloads([payload(at_default)], [AgentInput])
    assert inp.unknown_nested_fields == []
    wait_for_a_newer_worker(inp)


def test_other_types_are_untouched():
    # A signal's payload, say: the SDK drops a signal that does not decode, as before.
    with pytest.raises(ValidationError):
        OutlastPayloadConverter().from_payloads([payload({"approve": "maybe"})], [PlanDecision])


def test_text_that_is_not_json_is_a_non_retryable_failure_too():
    broken = Payload(metadata={"encoding": b"json/plain"}, data=b'{"prompt": "x", ')
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads([broken], [AgentInput])
    assert failed.value.type == "InvalidWorkflowInput" and "Invalid JSON" in failed.value.message


async def test_every_data_converter_derived_from_ours_shares_one_payload_converter(tmp_path):
    """temporalio derives a DataConverter (`dataclasses.replace`) for each payload sequence it
    may store externally; the derived one must not start over with new converters and an
    empty TypeAdapter cache."""
    converter = await data_converter({"OUTLAST_STORE_DIR": str(tmp_path)})
    derived = dataclasses.replace(converter)
    assert derived.external_storage is not None
    json_plain = OutlastPayloadConverter().converters[b"json/plain"]
    before = json_plain._type_adapter.cache_info()
    for dc in (converter, derived, dataclasses.replace(derived)):
        [decoded] = dc.payload_converter.from_payloads(
            [payload({"approve": False})], [PlanDecision]
        )
        assert decoded == PlanDecision(approve=False)
    after = json_plain._type_adapter.cache_info()
    assert after.misses - before.misses <= 1
    assert after.hits - before.hits >= 2


def test_copies_and_pickles_are_the_shared_converter_left_as_it_was():
    shared = OutlastPayloadConverter()
    json_plain = shared.converters[b"json/plain"]
    for other in (copy.copy(shared), copy.deepcopy(shared), pickle.loads(pickle.dumps(shared))):
        assert other is shared
    assert shared.converters[b"json/plain"] is json_plain


class _ContextAware(EncodingPayloadConverter, WithSerializationContext):
    def __init__(self, context: SerializationContext | None = None):
        self.context = context

    @property
    def encoding(self) -> str:
        return "x/ctx"

    def to_payload(self, value):
        return None

    def from_payload(self, payload, type_hint=None):
        return self.context

    def with_context(self, context):
        return _ContextAware(context)


def test_a_context_aware_part_gets_a_converter_of_its_own():
    """The SDK's composite would re-bind `type(self)()`, the shared instance, in place."""
    context = WorkflowSerializationContext(namespace="n", workflow_id="w")
    assert OutlastPayloadConverter().with_context(context) is OutlastPayloadConverter()
    base = OutlastPayloadConverter._build()
    base._set_converters(*base.converters.values(), _ContextAware())
    bound = base.with_context(context)
    assert bound is not base and bound is not OutlastPayloadConverter()
    assert bound.converters[b"x/ctx"].context == context
    assert base.converters[b"x/ctx"].context is None
    assert b"x/ctx" not in OutlastPayloadConverter().converters


def test_a_misspelt_required_field_inside_a_stage_is_named_too():
    from workflows.pattern_contracts import PipelineInput

    data = {
        "task": "t",
        "workspace": WORKSPACE,
        "stages": [{"nmae": "plan", "agent_type": "Explore", "instructions": "x"}],
    }
    with pytest.raises(ApplicationError) as failed:
        OutlastPayloadConverter().from_payloads([payload(data)], [PipelineInput])
    message = failed.value.message
    assert "stages[0].name: Field required" in message
    assert "unknown field stages[0].nmae (did you mean name?)" in message, message
