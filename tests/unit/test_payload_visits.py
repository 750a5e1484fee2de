"""The one-walk payload encoding of outlast/payload_visits.py gives what the SDK's three walks
give, with Outlast's own converters (claim-check on, codec on or off), on real protos."""

from __future__ import annotations

import inspect

import pytest
import temporalio.bridge.worker as bridge_worker
from temporalio.api.common.v1 import Payload
from temporalio.bridge.proto.activity_result import ActivityResolution, Success
from temporalio.bridge.proto.workflow_activation import (
    ResolveActivity,
    WorkflowActivation,
    WorkflowActivationJob,
)
from temporalio.bridge.proto.workflow_commands import ScheduleActivity, WorkflowCommand
from temporalio.bridge.proto.workflow_completion import (
    Success as CompletionSuccess,
)
from temporalio.bridge.proto.workflow_completion import (
    WorkflowActivationCompletion,
)

from outlast import payload_visits
from outlast.client import data_converter
from outlast.codec import new_key


def payloads(converter) -> list[Payload]:
    return converter.payload_converter.to_payloads(["small", "x" * 5000])


def completion(args: list[Payload]) -> WorkflowActivationCompletion:
    command = WorkflowCommand(
        schedule_activity=ScheduleActivity(
            seq=1, activity_id="1", activity_type="t", arguments=args
        )
    )
    return WorkflowActivationCompletion(
        run_id="r", successful=CompletionSuccess(commands=[command])
    )


def activation(result: Payload) -> WorkflowActivation:
    resolved = ActivityResolution(completed=Success(result=result))
    job = WorkflowActivationJob(resolve_activity=ResolveActivity(seq=1, result=resolved))
    return WorkflowActivation(run_id="r", jobs=[job])


@pytest.fixture(autouse=True)
def as_it_was():
    """Each test leaves the SDK's functions as it found them (later tests run either way)."""
    installed = bool(payload_visits._ORIGINAL)
    yield
    if installed:
        payload_visits.install()
    else:
        payload_visits.uninstall()


async def decode(act: WorkflowActivation, converter):
    # As the SDK's worker calls them: the first two by position, the rest by keyword.
    return await bridge_worker.decode_activation(
        act, converter, decode_headers=True, storage_concurrency_limit=4
    )


async def round_trip(converter) -> tuple[WorkflowActivationCompletion, list[Payload], int]:
    """A completion encoded, then each of its arguments decoded as an activity result; and
    how many payloads went to the store."""
    done = completion(payloads(converter))
    stored = await bridge_worker.encode_completion(
        done, converter, encode_headers=True, storage_concurrency_limit=4
    )
    back = []
    for arg in done.successful.commands[0].schedule_activity.arguments:
        act = activation(arg)
        await decode(act, converter)
        back.append(act.jobs[0].resolve_activity.result.completed.result)
    return done, back, stored.payload_count


async def test_one_walk_gives_what_three_give_with_and_without_a_codec(tmp_path):
    env = {"OUTLAST_STORE_DIR": str(tmp_path), "OUTLAST_PAYLOAD_THRESHOLD": "1000"}
    for extra in ({}, {"OUTLAST_PAYLOAD_KEY": new_key()}):
        converter = await data_converter(env | extra)
        payload_visits.uninstall()
        sdk_done, sdk_back, sdk_stored = await round_trip(converter)
        assert payload_visits.install()
        ours_done, ours_back, ours_stored = await round_trip(converter)
        assert ours_stored == sdk_stored == 1
        sent = ours_done.successful.commands[0].schedule_activity.arguments
        if not extra:  # (encryption takes a fresh nonce each time)
            assert list(sent) == list(sdk_done.successful.commands[0].schedule_activity.arguments)
        assert ours_back == sdk_back
        assert converter.payload_converter.from_payloads(ours_back) == ["small", "x" * 5000]
        # The large one went to the claim-check store, not into the command.
        assert sum(p.ByteSize() for p in sent) < 2000
        if extra:
            assert sent[0].metadata["encoding"] == b"binary/encrypted", sent


async def test_small_completions_and_activations_without_references_are_left_alone(tmp_path):
    converter = await data_converter(
        {"OUTLAST_STORE_DIR": str(tmp_path), "OUTLAST_PAYLOAD_THRESHOLD": "1000"}
    )
    small = converter.payload_converter.to_payloads(["a" * 400, "b" * 400])  # 800 < 1000
    done = completion(small)
    before = done.SerializeToString()
    stored = await bridge_worker.encode_completion(
        done, converter, encode_headers=True, storage_concurrency_limit=4
    )
    assert stored.payload_count == 0 and done.SerializeToString() == before
    # One payload over the threshold in a completion: stored, as the SDK's walk stores it.
    big = completion(converter.payload_converter.to_payloads(["c" * 1200]))
    stored = await bridge_worker.encode_completion(
        big, converter, encode_headers=True, storage_concurrency_limit=4
    )
    assert stored.payload_count == 1


async def test_without_a_store_a_reference_is_still_refused(tmp_path):
    stored = await data_converter(
        {"OUTLAST_STORE_DIR": str(tmp_path), "OUTLAST_PAYLOAD_THRESHOLD": "1000"}
    )
    done, _, _ = await round_trip(stored)
    reference = done.successful.commands[0].schedule_activity.arguments[1]
    storeless = await data_converter({"OUTLAST_PAYLOAD_STORE": "off"})
    for walks in (payload_visits.uninstall, payload_visits.install):
        walks()
        with pytest.raises(RuntimeError, match="TMPRL1105"):
            await decode(activation(reference), storeless)
    # Plain payloads pass a store-less converter untouched, with nothing walked on the way out.
    plain = completion(payloads(storeless))
    before = plain.SerializeToString()
    await bridge_worker.encode_completion(
        plain, storeless, encode_headers=True, storage_concurrency_limit=4
    )
    assert plain.SerializeToString() == before


async def test_the_sdk_functions_are_the_ones_it_was_written_for():
    # Fails when a temporalio upgrade changes them: then install() leaves the SDK alone.
    payload_visits.uninstall()
    assert payload_visits.install()
    assert bridge_worker.decode_activation.__module__ == payload_visits.__name__
    payload_visits.uninstall()
    assert bridge_worker.decode_activation.__module__ == "temporalio.bridge.worker"
    for name, params in payload_visits.EXPECTED.items():
        sdk = payload_visits.parameters(getattr(bridge_worker, name))
        assert sdk == [(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in params]
    assert payload_visits.install()
    for name in payload_visits.EXPECTED:
        ours = payload_visits.parameters(getattr(bridge_worker, name))
        assert ours == payload_visits.parameters(payload_visits._ORIGINAL[name])
