"""OpenTelemetry for Outlast: where spans go, and GenAI spans for model calls and tool runs.

Temporal's `TracingInterceptor` (on every client, so every worker) gives the trace its
shape: one trace per task, from the client's start through every workflow, child, signal and
activity. Its workflow spans are not emitted again when a workflow task replays. Inside that,
`GenAISpans` adds a span per model call (OpenTelemetry GenAI semantic conventions: system,
model, input/output/cache tokens, finish reason) and per tool run. Activities never replay,
so these are emitted once per attempt.

Export is off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set; then spans go over OTLP/HTTP
(the collector's port 4318) with the service name from `OTEL_SERVICE_NAME` (default
`outlast`). Prompts, tool inputs and file contents never go into attributes: ids, names,
counts and the finish reason only.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

MODEL_ACTIVITY = "llm.call_model"
MODEL_ACTIVITIES = frozenset({MODEL_ACTIVITY, "llm.compact"})
TOOL_PREFIX = "tool."
SYSTEM = "anthropic"


def model_span_attributes(request: Any, response: Any | None) -> dict[str, Any]:
    """GenAI attributes of one `llm.call_model` run (response None: it failed)."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": SYSTEM,
        "gen_ai.provider.name": SYSTEM,
        "gen_ai.request.model": getattr(request, "model", "") or "",
    }
    if getattr(request, "max_tokens", None):
        attrs["gen_ai.request.max_tokens"] = request.max_tokens
    if response is None:
        return attrs
    attrs |= usage_attributes(response.usage) | {
        "gen_ai.response.model": response.model or getattr(request, "model", "") or "",
        "gen_ai.response.finish_reasons": [response.stop_reason or "unknown"],
    }
    if response.request_id:
        attrs["gen_ai.response.id"] = response.request_id
    return attrs


def usage_attributes(usage: Any) -> dict[str, Any]:
    attrs = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
    }
    if getattr(usage, "web_search_requests", 0):
        attrs["outlast.usage.web_search_requests"] = usage.web_search_requests
    return attrs


def tool_span_attributes(tool: str, request: Any, output: Any | None) -> dict[str, Any]:
    """Attributes of one tool activity run: the tool and its agent, not its input."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "function",
    }
    ctx = getattr(request, "ctx", None)
    if ctx is not None and getattr(ctx, "agent_id", None):
        attrs["outlast.agent_id"] = ctx.agent_id
    if output is not None and hasattr(output, "output"):
        # A local run's result (activities/local_tools.py): None when this worker is not the
        # workspace's host, and the tool runs again as a regular activity, with a span of its own.
        output = output.output
        if output is None:
            attrs["outlast.tool.passed_on"] = True
    if output is not None:
        attrs["outlast.tool.is_error"] = bool(getattr(output, "is_error", False))
        # A tool that asks a model itself (WebFetch, WebSearch): its tokens, so that summing
        # a trace's GenAI usage counts every model call of the task.
        if getattr(output, "usage", None) is not None:
            attrs |= usage_attributes(output.usage)
    return attrs


def tool_name(activity_type: str) -> str:
    """`tool.bash` (or `tool.read.local`) -> `Bash` (`Read`), `tool.web_fetch` -> `WebFetch`:
    the name the model uses; a helper of a tool (`tool.bash_kill`) gets one in that style."""
    words = activity_type.removeprefix(TOOL_PREFIX).removesuffix(".local").split("_")
    return "".join(w.capitalize() for w in words)


class GenAISpans(Interceptor):
    """Worker interceptor: a GenAI span around every model call and tool run.

    Args:
        tracer: where spans go; None = the global tracer provider's (a no-op unless
            `configure_tracing` or the application set one).
    """

    def __init__(self, tracer: Tracer | None = None) -> None:
        self._tracer = tracer

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _GenAIActivity(next, self._tracer)


class _GenAIActivity(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, tracer: Tracer | None) -> None:
        super().__init__(next)
        self._tracer = tracer

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        kind = activity.info().activity_type
        if kind in MODEL_ACTIVITIES:
            return await self._span(input, _ModelSpan(input.args[0] if input.args else None))
        if kind.startswith(TOOL_PREFIX):
            request = input.args[0] if input.args else None
            return await self._span(input, _ToolSpan(tool_name(kind), request))
        return await super().execute_activity(input)

    async def _span(self, input: ExecuteActivityInput, shape: _ModelSpan | _ToolSpan) -> Any:
        tracer = self._tracer or trace.get_tracer("outlast")
        info = activity.info()
        with tracer.start_as_current_span(
            shape.name(), kind=shape.kind, record_exception=True
        ) as span:
            span.set_attributes(shape.attributes(None))
            span.set_attribute("outlast.workflow_id", info.workflow_id or "")
            span.set_attribute("outlast.activity.attempt", info.attempt)
            try:
                result = await super().execute_activity(input)
            except BaseException as e:
                span.set_attribute("error.type", type(e).__name__)
                span.set_status(Status(StatusCode.ERROR, str(e)[:200]))
                raise
            span.set_attributes(shape.attributes(result))
            return result


class _ModelSpan:
    kind = SpanKind.CLIENT

    def __init__(self, request: Any) -> None:
        self.request = _with_setup(request)

    def name(self) -> str:
        return f"chat {getattr(self.request, 'model', '') or 'model'}"

    def attributes(self, response: Any | None) -> dict[str, Any]:
        return model_span_attributes(self.request, response)


def _with_setup(request: Any) -> Any:
    """The request with the model its setup names (an agent's calls after its first send
    only the name, activities/model_setup.py); as it came if that cannot be read, which the
    activity itself then fails on."""
    try:
        return request.with_setup()
    except Exception:  # noqa: BLE001  (a span's name must not fail the call)
        return request


class _ToolSpan:
    kind = SpanKind.INTERNAL

    def __init__(self, tool: str, request: Any) -> None:
        self.tool, self.request = tool, request

    def name(self) -> str:
        return f"execute_tool {self.tool}"

    def attributes(self, output: Any | None) -> dict[str, Any]:
        return tool_span_attributes(self.tool, self.request, output)


def configure_tracing(env: Mapping[str, str]) -> bool:
    """Export spans over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; True if so.

    The exporter reads the standard OTEL_EXPORTER_OTLP_* variables itself (endpoint,
    headers, timeout), and the resource reads OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES.
    """
    if not env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "outlast"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


FLUSH_LIMIT_S = 5.0


def flush_tracing(limit_s: float = FLUSH_LIMIT_S) -> bool:
    """Send what is buffered (the CLI and the worker exit without running atexit handlers),
    waiting at most `limit_s`; whether the flush finished in time (an export that failed
    still finishes it). The SDK's `force_flush` does not keep
    to its own timeout: with a collector that does not answer it waits out each batch's export
    deadline (10 s, retries included) in turn, and a stopping worker would outlive its grace
    period. The flush goes on in a daemon thread, which the process's exit ends."""
    force_flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if force_flush is None:
        return True
    flushing = threading.Thread(
        target=force_flush, args=(int(limit_s * 1000),), name="flush-tracing", daemon=True
    )
    flushing.start()
    flushing.join(limit_s)
    return not flushing.is_alive()
