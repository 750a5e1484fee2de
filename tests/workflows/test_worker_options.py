"""`build_workers(main_options=..., tool_options=...)` (issue 9): more `temporalio.worker.Worker`
arguments over Outlast's own values, for a user tuning pollers, slots or the cache (and for
bench/worker_settings.py); an option build_workers wires itself, or one Worker does not take,
is refused by name before any worker exists."""

from __future__ import annotations

import pytest
from temporalio.worker import (
    PollerBehaviorAutoscaling,
    PollerBehaviorSimpleMaximum,
    WorkerTuner,
)

from tests.support import agent_input, running_workers, scripted_model, start, tool_results
from worker import HEARTBEAT_THROTTLE, MODEL_HEARTBEAT_THROTTLE, build_workers

SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/README.md"}}},
                {"text": "done"},
            ],
        }
    ]
}


async def test_options_reach_their_worker_over_outlasts_values(client):
    main, tools = build_workers(
        client,
        task_queue="tq-options",
        host_queue="host-options",
        main_options={
            "max_cached_workflows": 7,
            "workflow_task_poller_behavior": PollerBehaviorSimpleMaximum(2),
        },
        tool_options={"max_concurrent_activities": 3},
    )
    m, t = main.config(), tools.config()
    assert m["max_cached_workflows"] == 7
    assert m["workflow_task_poller_behavior"] == PollerBehaviorSimpleMaximum(2)
    assert t["max_concurrent_activities"] == 3
    # Where no option replaces them, Outlast's own values stay.
    assert m["max_heartbeat_throttle_interval"] == MODEL_HEARTBEAT_THROTTLE
    assert t["max_heartbeat_throttle_interval"] == HEARTBEAT_THROTTLE


async def test_a_tuner_replaces_the_tool_workers_slot_count(client):
    # temporalio refuses a tuner beside max_concurrent_activities, which the tool worker sets.
    tuner = WorkerTuner.create_fixed(workflow_slots=4, activity_slots=8, local_activity_slots=4)
    # Its own host queue: a worker that is built registers its queue on the session's client
    # until it is collected, and the host's default queue is what the Web UI tests run on.
    _, tools = build_workers(
        client, task_queue="tq-tuner", host_queue="host-tuner", tool_options={"tuner": tuner}
    )
    assert tools.config()["tuner"] is tuner


@pytest.mark.parametrize(
    "which, options, message",
    [
        (
            "main_options",
            {"task_queue": "elsewhere"},
            "main_options: task_queue is set by build_workers, not by options",
        ),
        (
            "tool_options",
            {"activities": [], "interceptors": []},
            "tool_options: activities, interceptors are set by build_workers, not by options",
        ),
        (
            "main_options",
            {"max_cached_workflow": 5, "pollers": 2},
            "main_options: temporalio.worker.Worker takes no arguments max_cached_workflow, "
            "pollers",
        ),
    ],
)
async def test_a_wired_or_unknown_option_is_refused_by_name(client, which, options, message):
    with pytest.raises(ValueError) as refused:
        build_workers(
            client, task_queue="tq-refused", host_queue="host-refused", **{which: options}
        )
    assert str(refused.value) == message


async def test_workers_with_other_pollers_and_no_cache_serve_an_agent(client, git_repo):
    """That options reach Worker is the first test; this one: the workers they make serve."""
    autoscaling = PollerBehaviorAutoscaling()
    with scripted_model(SCRIPT):
        async with running_workers(
            client,
            main_options={
                "workflow_task_poller_behavior": autoscaling,
                "activity_task_poller_behavior": autoscaling,
                "max_cached_workflows": 0,
                "disable_eager_activity_execution": True,
            },
            tool_options={"activity_task_poller_behavior": PollerBehaviorSimpleMaximum(1)},
        ) as queues:
            handle = await start(client, agent_input("read the readme", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "done"
    assert "# sample" in tool_results(result)[0].content
