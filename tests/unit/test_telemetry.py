"""GenAI span attributes, and OTLP export switched on by the environment only."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import temporalio.activity

from activities.llm import ModelResponse
from activities.local_tools import LocalToolResult
from activities.tools import TOOLS
from activities.tools.base import ToolOutput
from agents.messages import Message, Usage
from outlast.telemetry import (
    FLUSH_LIMIT_S,
    model_span_attributes,
    tool_name,
    tool_span_attributes,
)
from tests.support import otlp_collector, unanswered_listener
from workflows.contracts import TranscriptRef


class _Req:
    model = "claude-x"
    max_tokens = 1024


def test_model_attributes_follow_genai_conventions():
    response = ModelResponse(
        message=Message.user_text("x"),
        stop_reason="tool_use",
        usage=Usage(input_tokens=10, output_tokens=5, cache_read_input_tokens=300),
        transcript=TranscriptRef(),
        model="claude-x-2026",
        request_id="req_1",
    )
    a = model_span_attributes(_Req(), response)
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.system"] == "anthropic"
    assert a["gen_ai.request.model"] == "claude-x" and a["gen_ai.response.model"] == "claude-x-2026"
    assert a["gen_ai.usage.input_tokens"] == 10 and a["gen_ai.usage.output_tokens"] == 5
    assert a["gen_ai.usage.cache_read.input_tokens"] == 300
    assert a["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert a["gen_ai.response.id"] == "req_1" and a["gen_ai.request.max_tokens"] == 1024
    assert "gen_ai.usage.input_tokens" not in model_span_attributes(_Req(), None)
    # An answer by the model asked for leaves it out of history; the span still says it.
    same = model_span_attributes(_Req(), response.model_copy(update={"model": ""}))
    assert same["gen_ai.response.model"] == "claude-x"


def activity_defn_name(fn) -> str:
    return temporalio.activity._Definition.must_from_callable(fn).name


def test_a_tools_span_has_the_name_the_model_calls_it_by():
    assert tool_name("tool.read.local") == "Read"
    assert tool_name("tool.web_fetch") == "WebFetch" and tool_name("tool.web_search") == "WebSearch"
    assert tool_name("tool.notebook_edit") == "NotebookEdit"
    assert tool_name("tool.task_output") == "TaskOutput"
    for name, spec in TOOLS.items():
        assert tool_name(activity_defn_name(spec.activity)) == name


def test_tool_attributes_carry_no_input():
    class Ctx:
        agent_id = "a1"

    class Req:
        ctx = Ctx()
        input = {"command": "cat .env"}

    class Out:
        is_error = True

    a = tool_span_attributes(tool_name("tool.bash"), Req(), Out())
    assert a == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Bash",
        "gen_ai.tool.type": "function",
        "outlast.agent_id": "a1",
        "outlast.tool.is_error": True,
    }


def test_a_tool_that_asks_a_model_reports_its_tokens_and_searches():
    class Out:
        is_error = False
        usage = Usage(input_tokens=7, output_tokens=3, web_search_requests=2)

    a = tool_span_attributes("WebSearch", object(), Out())
    assert a["gen_ai.usage.input_tokens"] == 7 and a["gen_ai.usage.output_tokens"] == 3
    assert a["outlast.usage.web_search_requests"] == 2


def test_a_local_runs_span_reads_the_output_inside_its_result():
    failed = LocalToolResult(output=ToolOutput(content="no such file", is_error=True))
    assert tool_span_attributes("Read", object(), failed)["outlast.tool.is_error"] is True
    elsewhere = tool_span_attributes("Read", object(), LocalToolResult(output=None))
    assert elsewhere["outlast.tool.passed_on"] is True
    assert "outlast.tool.is_error" not in elsewhere


def run(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", EXPORT], env=env, capture_output=True, text=True, timeout=120
    )


# As the CLI and the worker end: flush, then exit without the atexit handlers (whose own
# flush would wait again).
EXPORT = """
from opentelemetry import trace
from outlast.telemetry import configure_tracing, flush_tracing
import os, sys
print(configure_tracing(os.environ))
with trace.get_tracer("t").start_as_current_span("probe-span"):
    pass
print(flush_tracing(), flush=True)
os._exit(0)
"""


def test_otlp_export_only_when_the_endpoint_is_set():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with otlp_collector() as (endpoint, bodies):
        off = run(env)
        assert off.stdout.split() == ["False", "True"] and not bodies
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        env["OTEL_SERVICE_NAME"] = "outlast-test"
        on = run(env)
    assert on.stdout.split() == ["True", "True"], on.stderr
    assert [path for path, _ in bodies] == ["/v1/traces"]
    assert b"probe-span" in bodies[0][1] and b"outlast-test" in bodies[0][1]


def test_a_collector_that_does_not_answer_holds_the_exit_only_for_the_flush_limit():
    """The SDK's flush ignores its timeout and waits out the exporter's deadline (here 60 s)
    per batch: a stopping worker would outlive its grace period and be killed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with unanswered_listener() as port:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
        env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "60"
        began = time.monotonic()
        done = run(env)
    assert done.stdout.split() == ["True", "False"], done.stderr  # configured; not all sent
    assert time.monotonic() - began < FLUSH_LIMIT_S + 15


def test_a_propagator_the_environment_names_but_lacks_does_not_stop_the_worker():
    """OTEL_PROPAGATORS is often set cluster-wide (`b3`, `xray`); the worker sends only the
    W3C trace context and never loads the global propagators, which would fail the import."""
    env = {**os.environ, "OTEL_PROPAGATORS": "no-such-propagator"}
    done = subprocess.run(
        [sys.executable, "-c", "import worker"],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
