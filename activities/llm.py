"""The model call: with activities/model_http.py (its transport and clients), the only module
that imports `anthropic`.

`llm.call_model` takes the conversation by reference (see agents/transcript.py), sends it
through `AsyncAnthropic(max_retries=0)` with streaming, and returns the assistant message
as our own types. Temporal owns retries, so every failure is classified here: transient ones
are retried with the server's `retry-after`, requests the API rejects fail at once with a
typed error.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anthropic
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from temporalio import activity

from activities import compaction, history_form, transcripts
from activities.errors import (
    LocalModelCallTimedOut,
    ModelConnectionFailed,
    ModelRequestRejected,
    OutlastError,
)
from activities.model_body import encode, messages_json, request_body, wire_system, wire_tools
from activities.model_errors import classify_status
from activities.model_http import BROKEN_STREAM, model_client
from activities.model_setup import (
    SETUP_FIELDS,
    AgentTag,
    ModelSetup,
    load_setup,
    store_setup,
)
from activities.model_stream import Accumulator, StreamedMessage, usage_of
from activities.request_images import within_image_limits
from activities.result_refs import resolve_refs
from activities.store import BlobStore, default_store
from activities.tools.base import ImageRef
from agents.compaction import summary_of, too_long
from agents.messages import (
    Message,
    Usage,
)
from agents.transcript import TranscriptRef
from agents.transcript_repair import for_the_api

HEARTBEAT_EVERY_S = 2.0

TRACE_CONTEXT = TraceContextTextMapPropagator()

CONNECT_TIMEOUT_S = 5.0
"""The SDK's own connect limit, kept beside the call's timeout: a plain number there would be
every limit, the connect's too, and an API host that drops connects would hold each attempt
for minutes (the call's whole timeout) before Temporal could try again. Per connection
attempt: on the aiohttp transport each address tried gets its own."""


class ModelRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    # The agent's setup (activities/model_setup.py): in the payload only when `setup_ref`
    # is None; the activity fills them in from its blob (`with_setup`).
    model: str = ""
    max_tokens: int = 0
    system_ref: str = ""
    """Blob: JSON list of system prompt text blocks, rendered once per agent."""
    tools_ref: str | None = None
    """Blob: JSON list of tool definitions, in the order the model sees them."""
    setup_ref: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The blob holding this request's `ModelSetup`, sent in place of its fields."""
    transcript: TranscriptRef = TranscriptRef()
    append: list[Message] = Field(default_factory=list)
    """Messages after `transcript`'s head, sent and recorded by this call."""
    append_refs: dict[str, str] = Field(default_factory=dict)
    """tool_use_id -> the blob holding that tool_result's content, which `append` carries
    empty: the tool's own activity already recorded it in history (issue 9)."""
    # The fields below are left out of the payload at their defaults, as most calls have
    # them: the activity's input is kept in history on every turn (issue 9).
    append_images: dict[str, tuple[ImageRef, ...]] = Field(
        default_factory=dict, exclude_if=lambda v: not v
    )
    """tool_use_id -> the images that tool_result shows the model after the text `append`
    carries for it (a Read of an image file, a notebook's plots)."""
    thinking_budget: int | None = Field(default=None, exclude_if=lambda v: v is None)
    agent: AgentTag = AgentTag()
    shared_prefix_breakpoint: bool = Field(default=False, exclude_if=lambda v: not v)
    """Also mark the block before the last one: a fork's shared prefix ends there, and its
    siblings read it from the cache only if some request wrote it at that exact point."""
    ephemeral: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Text blocks sent after the cache breakpoint of this call only, never recorded: a
    reminder that must be on every turn (R84) without piling up in the conversation."""

    @model_validator(mode="before")
    @classmethod
    def _as_recorded(cls, data: Any) -> Any:
        return history_form.full_request(data)

    @model_validator(mode="after")
    def _names_a_model(self) -> ModelRequest:
        if self.setup_ref is None and not self.model:
            raise ValueError("a model request names its model, or the setup_ref that holds it")
        return self

    @model_serializer(mode="wrap")
    def _as_history_holds_it(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if self.setup_ref is not None:
            for name in SETUP_FIELDS:
                data.pop(name, None)
        return history_form.thin_request(data)

    def setup(self) -> ModelSetup:
        return ModelSetup(**{name: getattr(self, name) for name in SETUP_FIELDS})

    def with_setup(self) -> ModelRequest:
        """The request with its setup's fields, loaded from `setup_ref` if it came without."""
        if self.setup_ref is None or self.model:
            return self
        setup = load_setup(self.setup_ref)
        return self.model_copy(update={name: getattr(setup, name) for name in SETUP_FIELDS})


class ModelResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    message: Message
    stop_reason: str | None
    usage: Usage
    transcript: TranscriptRef
    """The head after `append` and this response."""
    model: str = Field(default="", exclude_if=lambda v: not v)
    """The model that answered, as the API names it; "" when that is the model the request
    named, which history then need not say again on every turn (issue 9)."""
    request_id: str | None = None
    elapsed_ms: int | None = None
    """How long the call took, store reads and writes included; None after a retry, and in
    histories recorded before it was measured. Under `model.local_activity: auto` it decides
    how the agent's next call runs (workflows/model_call.py)."""
    setup_ref: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Where the activity stored the setup a request carried inline: the agent's later calls
    send this name instead (activities/model_setup.py)."""

    @model_validator(mode="before")
    @classmethod
    def _as_recorded(cls, data: Any) -> Any:
        return history_form.full_response(data)

    @model_serializer(mode="wrap")
    def _thin(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return history_form.thin_response(handler(self))


# --- wire format: activities/model_body.py ----------------------------------------------


def _from_sdk_error(e: anthropic.APIStatusError) -> OutlastError:
    body = e.body if isinstance(e.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return classify_status(
        e.status_code,
        error.get("type") if isinstance(error, dict) else None,
        (error.get("message") if isinstance(error, dict) else None) or str(e),
        e.response.headers if e.response is not None else None,
        e.request_id,
    )


# --- the activity ---------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _load_json(ref: str) -> Any:
    """A rendered system prompt or tool list; blobs never change, so caching is safe (and
    every turn of every agent sends the same few)."""
    return json.loads(default_store().get(ref))


async def _heartbeat_forever() -> None:
    # First after one interval, for the reason in activities.heartbeats.heartbeating.
    while True:
        await asyncio.sleep(HEARTBEAT_EVERY_S)
        activity.heartbeat()


@functools.lru_cache(maxsize=256)
def _system_json(ref: str) -> str:
    return encode(wire_system(_load_json(ref)))


@functools.lru_cache(maxsize=256)
def _tools_json(ref: str) -> str:
    return encode(wire_tools(_load_json(ref)))


def _body(req: ModelRequest, messages: list[Message]) -> bytes:
    thinking = req.thinking_budget
    return request_body(
        model=req.model,
        max_tokens=req.max_tokens,
        messages=messages_json(
            within_image_limits(messages), req.shared_prefix_breakpoint, req.ephemeral
        ),
        system=_system_json(req.system_ref),
        tools=_tools_json(req.tools_ref) if req.tools_ref else None,
        thinking={"type": "enabled", "budget_tokens": thinking} if thinking else None,
    )


def _options(req: ModelRequest, timeout: anthropic.Timeout) -> dict[str, Any]:
    headers = {
        "x-outlast-agent-id": req.agent.agent_id,
        "x-outlast-agent-type": req.agent.agent_type,
        "x-outlast-agent-name": req.agent.name,
    }
    # The trace context the call runs in (its `chat` span's, when traces are exported) for a
    # gateway at ANTHROPIC_BASE_URL that traces too. W3C `traceparent`/`tracestate` only: not
    # the global propagators, which would send baggage to the API, and which OTEL_PROPAGATORS
    # can name without installing (importing them would then fail the worker).
    TRACE_CONTEXT.inject(headers)
    return {"headers": headers, "timeout": timeout}


async def _stream(body: bytes, options: dict[str, Any]) -> tuple[StreamedMessage, str | None]:
    """The streamed answer and the API's request id. The body goes as the bytes it is (see
    activities/model_body.py); the response is the SDK's, as `messages.create` would get it.
    The raw events are accumulated here, not by the SDK's MessageStream, which raises on a
    tool input that is not JSON."""
    acc = Accumulator()
    request_id = None
    answering = False  # the response has begun: a break from here on is mid-response
    try:
        stream = await model_client().post(
            "/v1/messages",
            cast_to=anthropic.types.Message,
            content=body,
            options=options,  # type: ignore[arg-type]
            stream=True,
            # Each event as its JSON object: see activities/model_stream.Accumulator.
            stream_cls=anthropic.AsyncStream[object],
        )
        answering = True
        async with stream:
            request_id = stream.response.headers.get("request-id")
            async for event in stream:  # _heartbeat_forever beats meanwhile
                acc.feed(event)
    except anthropic.APIStatusError as e:
        raise _from_sdk_error(e) from None
    except (anthropic.APIConnectionError, *BROKEN_STREAM) as e:
        if not answering:
            raise ModelConnectionFailed(f"Model API connection failed: {e}") from None
        if not acc.complete:  # after message_stop the answer is whole, and a retry is paid for
            cause = (e.__cause__ or e) if isinstance(e, anthropic.APIConnectionError) else e
            # A read timeout's own text can be empty; the SDK's says what timed out.
            detail = str(cause) or str(e)
            raise ModelConnectionFailed(
                f"Model API connection broke mid-response: {type(cause).__name__}: {detail}"
            ) from None
    if not acc.complete:  # a body that ended cleanly but early, as a proxy may end it
        raise ModelConnectionFailed("Model API response ended before its message_stop event")
    return acc.message(), request_id


class OneAnswer(BaseModel):
    """A tool's own model call's answer: its blocks as JSON (no null fields, so they can be
    sent back as they are), tokens and stop reason."""

    blocks: list[dict[str, Any]]
    usage: Usage
    stop_reason: str | None = None


async def ask_once(
    model: str,
    max_tokens: int,
    messages: list[dict[str, Any]],
    headers: dict[str, str],
    tools: list[dict[str, Any]] | None = None,
    timeout_s: float = 120,
) -> OneAnswer:
    """One request outside an agent's conversation: a tool's own question to a model
    (WebFetch's about a page, WebSearch's with the API's search tool). Not streamed, and with
    the errors of a model turn: an outage is retried by the calling activity's policy, a
    refused request is not."""
    headers = dict(headers)
    TRACE_CONTEXT.inject(headers)
    try:
        message = await model_client().messages.create(
            model=model,
            max_tokens=max_tokens,
            messages=messages,  # type: ignore[arg-type]
            extra_headers=headers,
            timeout=anthropic.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S),
            **({"tools": tools} if tools else {}),  # type: ignore[arg-type]
        )
    except anthropic.APIStatusError as e:
        raise _from_sdk_error(e) from None
    except anthropic.APIConnectionError as e:
        raise ModelConnectionFailed(f"Model API connection failed: {e}") from None
    blocks = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
    return OneAnswer(blocks=blocks, usage=usage_of(message.usage), stop_reason=message.stop_reason)


def text_of(blocks: list[dict[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()


LOCAL_TRY_LIMIT = timedelta(seconds=5)
"""Under `model.local_activity: auto`, the longest a local call may run before it is given up
and sent again as a regular activity (workflows/model_call.py): below the ~8 s after which a
held workflow task must heartbeat, so a kill or query waits at most this long, and no call
of minutes hides from the Web UI."""


LOCAL_HTTP_SLACK_S = 1.0
"""How far past a local call's limit its HTTP request's own timeout lies."""


def _local_timeout(limit_s: float, attempt: int) -> LocalModelCallTimedOut:
    """What a local call past its limit raises, logged in one line: at INFO for `auto`'s
    try, which then goes to a regular activity; as a warning for a `local_activity: true`
    call, whose limit is the model's whole call timeout."""
    expected = limit_s <= LOCAL_TRY_LIMIT.total_seconds()
    activity.logger.log(
        logging.INFO if expected else logging.WARNING,
        "Model call as a local activity ran past its %g s limit (attempt %d)%s",
        limit_s,
        attempt,
        "; under model.local_activity auto the workflow sends it again as a regular activity"
        if expected
        else "",
    )
    return LocalModelCallTimedOut(f"Model call ran past its {limit_s:g} s local-activity limit")


def _conversation(req: ModelRequest, store: BlobStore) -> tuple[list[Message], list[Message]]:
    """The request's new messages with their references filled in (tool outputs, images, a
    PDF of up to 64 MB), and the whole conversation as the API takes it."""
    append = [resolve_refs(m, req.append_refs, store, req.append_images) for m in req.append]
    return append, for_the_api([*transcripts.load(store, req.transcript), *append])


@activity.defn(name="llm.call_model")
async def call_model(req: ModelRequest) -> ModelResponse:
    """One model turn: load the conversation, stream the answer, record both in the store."""
    req = req.with_setup()

    def load(store: BlobStore) -> tuple[list[Message], list[Message]]:
        return _conversation(req, store)

    def record(store: BlobStore, append: list[Message], reply: Message, _: str | None):
        return transcripts.append(store, req.transcript, [*append, reply])

    return await _model_turn(req, load, record)


@activity.defn(name="llm.compact")
async def compact(req: ModelRequest) -> ModelResponse:
    """Ask the model to sum up `req.transcript` (`append` stays for the next call) and return
    a new conversation that starts with the summary (agents/compaction.py), or `transcript`
    itself if the answer has no summary. An activity of its own, not a flag of `call_model`:
    a worker from before it fails it as unknown, and a newer worker takes it up, where it
    would have made a plain call."""
    req = req.with_setup()

    def record(store: BlobStore, last: Message | None, reply: Message, stop: str | None):
        if summary := summary_of(reply, stop):
            return compaction.compacted(store, summary, last)
        return req.transcript

    def cut(cuts: int) -> Callable[[BlobStore], tuple[Message | None, list[Message]]]:
        return lambda store: compaction.to_summarize(store, req.transcript, cuts)

    for cuts in range(compaction.CUTS):
        try:
            return await _model_turn(req, cut(cuts), record)
        except ModelRequestRejected as e:
            if not too_long(type(e).__name__, e.fields):
                raise
            # Too long to sum up whole: again without its oldest quarter.
            activity.logger.warning(
                "summary request too long: its oldest quarter left out (%d)", cuts + 1
            )
    return await _model_turn(req, cut(compaction.CUTS), record)


async def _model_turn(
    req: ModelRequest,
    load: Callable[[BlobStore], tuple[Any, list[Message]]],
    record: Callable[[BlobStore, Any, Message, str | None], TranscriptRef],
) -> ModelResponse:
    """A model call: `load` gives what `record` needs besides the answer and the messages to
    send; `record` stores the answer and gives the conversation's head after it."""
    began = time.monotonic()
    store = default_store()
    info = activity.info()
    timeout = info.start_to_close_timeout.total_seconds() if info.start_to_close_timeout else 600
    # A local activity lives inside its workflow task and cannot heartbeat.
    beat = None if info.is_local else asyncio.create_task(_heartbeat_forever())
    # A local call's limit, which Temporal enforces by cancelling it, must be what ends it: the
    # SDK's own timeout at the same moment would end it as a connection failure instead.
    slack = LOCAL_HTTP_SLACK_S if info.is_local else 0.0
    http_timeout = anthropic.Timeout(
        timeout + slack, connect=min(CONNECT_TIMEOUT_S, timeout) + slack
    )
    try:
        # The store's work in threads (a cold conversation is read blob by blob, and the
        # append syncs what it writes): the event loop is the worker's, streaming every
        # other agent's model call and running its workflow tasks. Heartbeating throughout.
        kept, messages = await asyncio.to_thread(load, store)
        setup_ref = None
        if req.setup_ref is None:
            setup_ref = await asyncio.to_thread(store_setup, req.setup(), store)
        final, request_id = await _stream(_body(req, messages), _options(req, http_timeout))
        reply = Message(role="assistant", content=final.content)
        head = await asyncio.to_thread(record, store, kept, reply, final.stop_reason)
    except asyncio.CancelledError:
        details = activity.cancellation_details()
        if info.is_local and details is not None and details.timed_out:
            raise _local_timeout(timeout, info.attempt) from None
        raise
    finally:
        if beat is not None:
            beat.cancel()
    return ModelResponse(
        message=reply,
        stop_reason=final.stop_reason,
        usage=final.usage,
        transcript=head,
        model="" if final.model == req.model else final.model,
        request_id=request_id,
        # A call that needed retries says nothing of how long the next one will take.
        elapsed_ms=round((time.monotonic() - began) * 1000) if info.attempt == 1 else None,
        setup_ref=setup_ref,
    )
