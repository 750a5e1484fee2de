"""Two hosts, one task queue for workflows and model calls: every tool run of a task lands
on the worker of the host that holds its checkout (design.md, task queues)."""

from __future__ import annotations

from tests.support import agent_input, crashable_worker, scripted_model, start

SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "tool_use": [
                        {"name": "Read", "input": {"file_path": "{{cwd}}/src/app.py"}},
                        {"name": "Glob", "input": {"pattern": "**/*.py"}},
                        {"name": "Grep", "input": {"pattern": "greet", "path": "{{cwd}}"}},
                    ]
                },
                {"tool_use": {"name": "Bash", "input": {"command": "ls {{cwd}}/src"}}},
                {"text": "done"},
            ],
        }
    ]
}


async def test_tools_run_on_the_workspace_host(client, dev_server, git_repo):
    with (
        scripted_model(SCRIPT) as model,
        crashable_worker(dev_server.address, model.url) as a,
        crashable_worker(dev_server.address, model.url, a.queues.task_queue) as b,
    ):
        assert a.queues.task_queue == b.queues.task_queue != ""
        assert a.queues.host_queue != b.queues.host_queue
        handle = await start(client, agent_input("look", git_repo, a.queues), a.queues)
        result = await handle.result()
        events = (await handle.fetch_history()).events
    assert result.final_text == "done"
    scheduled = {}
    for e in events:
        if e.HasField("activity_task_scheduled_event_attributes"):
            attrs = e.activity_task_scheduled_event_attributes
            scheduled[e.event_id] = (attrs.activity_type.name, attrs.task_queue.name)
    ran_on = {}
    for e in events:
        if e.HasField("activity_task_started_event_attributes"):
            attrs = e.activity_task_started_event_attributes
            name, queue = scheduled[attrs.scheduled_event_id]
            ran_on.setdefault(name, set()).add((queue, attrs.identity.split("@")[0]))
    tools = {n: v for n, v in ran_on.items() if n.startswith("tool.")}
    assert set(tools) == {"tool.read", "tool.glob", "tool.grep", "tool.bash"}
    for runs in tools.values():
        assert runs == {(a.queues.host_queue, str(a.pid))}, ran_on
    assert all(q == a.queues.task_queue for q, _ in ran_on["llm.call_model"])
