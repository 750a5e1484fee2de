"""What an agent's turn writes into history (issue 9): its setup once, then by name; blob
names of 32 hex digits."""

from __future__ import annotations

import json
import re

from temporalio.api.enums.v1 import EventType

from tests.support import agent_input, running_workers, scripted_model, start

SETUP = {"model", "max_tokens", "system_ref", "tools_ref", "agent"}


async def test_an_agent_sends_its_setup_once_then_its_name(client, git_repo):
    (git_repo / "a.txt").write_text("a line\n" * 200)
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/a.txt"}}
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [{"tool_use": read}, {"tool_use": read}, {"text": "read it twice"}],
            }
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            events = [e async for e in handle.fetch_history_events()]
        bodies = [entry["body"] for entry in model.log]
    assert result.status == "completed" and result.final_text == "read it twice"
    inputs = [
        json.loads(e.activity_task_scheduled_event_attributes.input.payloads[0].data)
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == "llm.call_model"
    ]
    first, *later = inputs
    assert len(later) == 2
    assert SETUP <= set(first) and "setup_ref" not in first
    names = {i["setup_ref"] for i in later}
    assert len(names) == 1 and not any(SETUP & set(i) for i in later)
    # Every call sent the API the same setup.
    for key in ("model", "max_tokens", "system", "tools"):
        assert len({json.dumps(b[key]) for b in bodies}) == 1, key
    refs = [later[-1]["transcript"]["head"], *later[-1]["append_refs"], *names]
    assert len(later[-1]["append_refs"]) == 1  # the blob of the one Read's output
    assert all(re.fullmatch("[0-9a-f]{32}", r) for r in refs), refs
    # The Read's output says it is stored; the workflow names the blob, and the model gets
    # the text from it.
    results = [
        e.activity_task_completed_event_attributes.result
        if e.HasField("activity_task_completed_event_attributes")
        else e.marker_recorded_event_attributes.details["result"]  # a local Read's
        for e in events
        if e.HasField("activity_task_completed_event_attributes")
        or e.HasField("marker_recorded_event_attributes")
    ]
    outputs = [json.loads(r.payloads[0].data) for r in results if r.payloads]
    reads = [o.get("output", o) for o in outputs if "a line" in json.dumps(o)[:200]]
    assert len(reads) == 2 and all(r["stored"] and "content_ref" not in r for r in reads)
    result = bodies[-1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "a line" in json.dumps(result["content"])
