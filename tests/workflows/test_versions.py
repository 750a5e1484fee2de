"""A run started on this code takes every change up to the baseline through one patch marker
(workflows/versions.py); the committed histories, which recorded the changes one by one,
replay as before (tests/replay)."""

from __future__ import annotations

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
    # Before the baseline the child recorded five (search attributes, host steps, local Read,
    # transcript export, end by result), each with its own upsert.
    # A sub-agent started with its search attributes asks one change after the baseline,
    # `attributes-at-start` (AFTER_BASELINE), with its own marker and upsert until a later
    # baseline takes it in.
    assert await patch_ids(parent) == [BASELINE]
    assert await patch_ids(child) == [BASELINE, "attributes-at-start"]
    assert await change_version_upserts(parent) == 1
    assert await change_version_upserts(child) == 2
