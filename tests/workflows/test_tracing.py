"""OpenTelemetry: one trace per task, a GenAI span per model call and tool run, and no span
emitted twice however often the workflows replay."""

from __future__ import annotations

import os
from collections import Counter

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.contrib.opentelemetry import TracingInterceptor
from temporalio.worker import Replayer

from outlast.client import data_converter
from tests.support import (
    agent_input,
    crashable_worker,
    local_activity,
    otlp_collector,
    running_workers,
    scripted_model,
    spawn,
    start,
)
from worker import WORKFLOWS, sandbox_runner

SCRIPT = {
    "agents": [
        {
            "name": "helper",
            "match": {"agent_name": "helper"},
            "turns": [
                {
                    "text": "reading",
                    "tool_use": {"name": "Read", "input": {"file_path": "README.md"}},
                },
                {"text": "the readme says sample"},
            ],
        },
        {
            "name": "main",
            "turns": [
                {"text": "asking", "tool_use": spawn("helper", "read the readme", False)},
                {"text": "listing", "tool_use": {"name": "Bash", "input": {"command": "ls"}}},
                {"text": "done"},
            ],
        },
    ]
}


async def activity_types(client: Client, workflow_id: str) -> Counter:
    kinds: Counter = Counter()
    async for e in client.get_workflow_handle(workflow_id).fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kinds[e.activity_task_scheduled_event_attributes.activity_type.name] += 1
        elif (local := local_activity(e)) is not None:
            kinds[local[0]] += 1  # a Read run as a local activity
    return kinds


async def test_one_trace_genai_spans_and_no_duplicates_on_replay(dev_server, git_repo):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("outlast-test")
    client = await Client.connect(
        dev_server.address,
        data_converter=await data_converter(),
        interceptors=[TracingInterceptor(tracer)],
    )
    with scripted_model(SCRIPT):
        # cached=0: every workflow task replays the whole history first (a forced full replay
        # on each step), so a span emitted on replay would show up many times.
        async with running_workers(client, cached=0, tracer=tracer) as queues:
            inp = agent_input("read and list", git_repo, queues)
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.status == "completed"
    child_id = f"{handle.id}/helper"
    kinds = await activity_types(client, handle.id) + await activity_types(client, child_id)

    spans = exporter.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1, "one trace per task"
    names = Counter(s.name for s in spans)
    assert names["RunWorkflow:AgentWorkflow"] == 2, names
    assert names["StartChildWorkflow:AgentWorkflow"] == 1, names

    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == kinds["llm.call_model"] == 5, (names, kinds)
    # The scripted server caches like the API does: later calls read the prefix back.
    assert sum(s.attributes["gen_ai.usage.cache_read.input_tokens"] for s in chats) > 0
    for span in chats:
        a = span.attributes
        assert a["gen_ai.system"] == "anthropic" and a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.request.model"] and a["gen_ai.response.model"]
        prompt = (
            a["gen_ai.usage.input_tokens"]
            + a["gen_ai.usage.cache_read.input_tokens"]
            + a["gen_ai.usage.cache_creation.input_tokens"]
        )
        assert prompt > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert tuple(a["gen_ai.response.finish_reasons"]) in (("tool_use",), ("end_turn",))
    tools = Counter(
        s.attributes["gen_ai.tool.name"] for s in spans if s.name.startswith("execute_tool ")
    )
    assert (
        tools
        == Counter({"Read": kinds["tool.read"], "Bash": kinds["tool.bash"]})
        == Counter({"Read": 1, "Bash": 1})
    )
    parents = {s.context.span_id: s for s in spans}
    for span in chats:
        # Each model span sits inside Temporal's activity span, so the UI of a tracing
        # backend shows it under the workflow that called the model.
        assert parents[span.parent.span_id].name == "RunActivity:llm.call_model"

    before = len(exporter.get_finished_spans())
    replayer = Replayer(
        workflows=WORKFLOWS,
        data_converter=client.data_converter,
        interceptors=[TracingInterceptor(tracer)],
        workflow_runner=sandbox_runner(client.data_converter),
    )
    for wid in (handle.id, child_id):
        history = await client.get_workflow_handle(wid).fetch_history()
        await replayer.replay_workflow(history)
    assert len(exporter.get_finished_spans()) == before


READ_THEN_ANSWER = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "reading",
                    "tool_use": {"name": "Read", "input": {"file_path": "README.md"}},
                },
                {"text": "the readme says sample"},
            ],
        }
    ]
}


def exported_spans(bodies: list[tuple[str, bytes]]) -> list:
    spans = []
    for path, body in bodies:
        assert path == "/v1/traces", path
        request = ExportTraceServiceRequest.FromString(body)
        spans += [
            span
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
    return spans


async def test_a_worker_exporting_spans_sends_one_chat_span_per_model_call(
    client, dev_server, git_repo, monkeypatch
):
    """The worker as deployed (`python -m worker` with an OTLP endpoint): a model call is one
    GenAI `chat` span. The `anthropic` SDK emits a span of its own per call (with the same
    operation and token counts) to the global tracer provider the worker sets; a backend would
    count every call, and every token, twice."""
    for var in [v for v in os.environ if v.startswith("OTEL_")]:
        monkeypatch.delenv(var)
    with otlp_collector() as (endpoint, bodies), scripted_model(READ_THEN_ANSWER) as model:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_SERVICE_NAME": "outlast-worker",
            # Nothing is sent on the way: what arrives, the worker's exit sent.
            "OTEL_BSP_SCHEDULE_DELAY": "600000",
        }
        with crashable_worker(dev_server.address, model.url, env=env) as w:
            handle = await start(client, agent_input("read it", git_repo, w.queues), w.queues)
            result = await handle.result()
        # Leaving the block stopped the worker (SIGTERM): its exit flushed the spans.
    assert result.status == "completed"
    spans = exported_spans(bodies)
    assert any(s.name == "RunActivity:llm.call_model" for s in spans), [s.name for s in spans]
    chats = [
        s
        for s in spans
        if any(
            a.key == "gen_ai.operation.name" and a.value.string_value == "chat"
            for a in s.attributes
        )
    ]
    assert [s.name for s in chats] == ["chat claude-sonnet-5-5"] * 2, [s.name for s in spans]
    # Each request carries its call's trace context, for a gateway that traces too.
    sent = sorted(
        r["headers"]["traceparent"].split("-")[1:3]  # version-trace-span-flags
        for r in model.log
        if r["outcome"] == "completed"
    )
    assert sent == sorted([s.trace_id.hex(), s.span_id.hex()] for s in chats), sent
