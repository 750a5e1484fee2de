"""A run started on this code takes every change up to the baseline through one patch marker
(workflows/versions.py); the committed histories, which recorded the changes one by one,
replay as before (tests/replay)."""

from __future__ import annotations

import asyncio

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle

from tests.support import (
    agent_input,
    patch_ids,
    running_workers,
    scripted_model,
    start,
    tool_results,
)
from tests.workflows.test_agent_endings import helper_script
from tests.workflows.test_plan_mode import PLANS_FIRST, wait_for_pending
from workflows import versions
from workflows.versions import BASELINE

READ_THEN_ANSWER = [
    {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}},
    {"text": "the answer is 42"},
]


async def change_version_upserts(handle: WorkflowHandle) -> int:
    return sum(
        [
            e.event_type == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES
            and "TemporalChangeVersion"
            in e.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
            async for e in handle.fetch_history_events()
        ]
    )


async def test_a_new_parent_and_sub_agent_record_the_baseline_once_each(client, git_repo):
    with scripted_model(helper_script(READ_THEN_ANSWER, background=False)):
        async with running_workers(client) as queues:
            parent = await start(client, agent_input("go", git_repo, queues), queues)
            result = await parent.result()
    child = client.get_workflow_handle(f"{parent.id}/helper")
    (delivered,) = tool_results(result)
    assert delivered.content.startswith("the answer is 42") and not delivered.is_error
    # Before the first baseline the child recorded five (search attributes, host steps, local
    # Read, transcript export, end by result), each with its own upsert; under the first,
    # two (`attributes-at-start` came after it).
    assert await patch_ids(parent) == [BASELINE]
    assert await patch_ids(child) == [BASELINE]
    assert await change_version_upserts(parent) == 1
    assert await change_version_upserts(child) == 1


async def test_a_run_under_the_first_baseline_goes_on_under_it_on_this_code(
    client, git_repo, monkeypatch
):
    # A run that an earlier release started (it recorded the first baseline, the ids since
    # one by one) waits for its plan's approval across the upgrade. This code, replaying it,
    # must not record the new baseline: it asks what that run's code asked.
    with scripted_model(PLANS_FIRST):
        with monkeypatch.context() as earlier:
            # The release before this baseline: workflow modules are passed through to the
            # sandbox, so the module's values are the code's.
            earlier.setattr(versions, "BASELINE", versions.FIRST_BASELINE)
            earlier.setattr(versions, "BUNDLED", versions.FIRST_BUNDLED)
            earlier.setattr(versions, "EARLIER", ())
            earlier.setattr(versions, "AFTER_BASELINE", versions.SINCE_FIRST)
            async with running_workers(client) as queues:
                inp = agent_input("add X", git_repo, queues, permission_mode="plan")
                handle = await start(client, inp, queues)
                view = await wait_for_pending(handle)
            before = await patch_ids(handle)
        # This code, replaying every task from history.
        async with running_workers(client, queues=queues, cached=0):
            await handle.signal("approve_plan", {"request_id": view.pending.request_id})
            # A replay that does not match fails the task again and again: no result.
            result = await asyncio.wait_for(handle.result(), 30)
    assert result.final_text == "done" and (git_repo / "src/x.py").exists()
    after = await patch_ids(handle)
    assert before[0] == versions.FIRST_BASELINE and BASELINE not in after
    # The approval's changes, asked one by one as the earlier code did.
    assert after[: len(before)] == before
    assert set(after[len(before) :]) and set(after[len(before) :]) <= versions.SINCE_FIRST
