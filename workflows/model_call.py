"""How a workflow calls the model: a regular activity (the default), a local activity, or
either by the agent's previous call (`model.local_activity`: false, true, auto)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from activities.llm import LOCAL_TRY_LIMIT, ModelRequest, ModelResponse, call_model
    from activities.no_model import NO_MODEL

from agents.config import ModelSettings, OutlastConfig
from workflows import versions

NO_MODEL_FALLS_BACK = "no-model-falls-back"
"""Patch id: a model call made as a local activity (`model.local_activity: true`) that came
to a worker without model credentials (`outlast worker --no-model`, which fails it at once)
is made again as a regular activity, which such a worker never takes: it waits for one that
has them. A local call's retries stay on the worker that runs the workflow (its sticky
queue), so it was tried there until the call's retry window ended, and the agent failed."""


class ModelCalls(BaseModel):
    """What `auto` knows of an agent's model calls so far; carried by continue-as-new."""

    last_ms: int | None = None
    """How long the previous call took; None before the first, or after one that needed
    more than one attempt."""
    local_gave_up: bool = False
    """A local call ran over `LOCAL_TRY_LIMIT` or failed: the rest of the run calls regular."""


def model_retry_policy(config: OutlastConfig) -> RetryPolicy:
    """No list of non-retryable types: the model call's errors that must not be retried
    (`ModelRequestRejected`, `StoreMissing`) say so themselves (`non_retryable`), and the list
    went into the history of every model call (~100 bytes a turn, issue 9)."""
    return RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=60),
        maximum_attempts=config.model.max_attempts,
    )


def model_activity_options(config: OutlastConfig) -> dict:
    return {
        "start_to_close_timeout": timedelta(seconds=config.model.call_timeout_s),
        "schedule_to_close_timeout": timedelta(seconds=config.model.retry_window_s),
        "heartbeat_timeout": timedelta(seconds=config.model.heartbeat_timeout_s),
        "retry_policy": model_retry_policy(config),
    }


def wants_local(settings: ModelSettings, calls: ModelCalls) -> bool:
    """Whether the next call runs as a local activity. Under `auto`, only after a call of
    this agent that took less than `auto_local_under_s`, and never again once a local call
    had to be given up: next to a quick call, the server round trips a regular activity adds
    are a large share of the turn, and a quick call holds the workflow task too briefly for a
    kill or query to notice. A first call, or one after a slow call, is a regular activity,
    which the Web UI shows as pending and a kill reaches at once."""
    if settings.local_activity != "auto":
        return settings.local_activity
    quick = calls.last_ms is not None and calls.last_ms < settings.auto_local_under_s * 1000
    return quick and not calls.local_gave_up


def after_call(calls: ModelCalls, response: ModelResponse, gave_up: bool) -> ModelCalls:
    """What `auto` knows once `response` came, `gave_up` if a local try of it was dropped."""
    return ModelCalls(last_ms=response.elapsed_ms, local_gave_up=calls.local_gave_up or gave_up)


async def call_the_model(
    config: OutlastConfig,
    request: ModelRequest,
    summary: str | None = None,
    calls: ModelCalls | None = None,
) -> tuple[ModelResponse, ModelCalls]:
    """The model's answer, and what `auto` knows after it. Raises ActivityError as
    `workflow.execute_activity` does, in every mode. The choice needs no patch: it comes
    from the run's input and its recorded results, which replay sees too."""
    calls = calls or ModelCalls()
    if not wants_local(config.model, calls):
        response = await _regular(config, request, summary)
    elif config.model.local_activity is True:
        try:
            response = await workflow.execute_local_activity(
                call_model,
                request,
                summary=summary,
                start_to_close_timeout=timedelta(seconds=config.model.call_timeout_s),
                schedule_to_close_timeout=timedelta(seconds=config.model.retry_window_s),
                retry_policy=model_retry_policy(config),
            )
        # A local activity's failure can arrive bare, not wrapped in an ActivityError.
        except (ActivityError, ApplicationError) as e:
            # Asked only where a worker without credentials took the call.
            if not came_to_no_model(e) or not versions.patched(NO_MODEL_FALLS_BACK):
                raise
            response = await _regular(config, request, summary)
    elif (tried := await _try_local(config, request, summary)) is not None:
        response = tried
    else:
        response = await _regular(config, request, summary)
        return response, after_call(calls, response, gave_up=True)
    return response, after_call(calls, response, gave_up=False)


def came_to_no_model(error: ActivityError | ApplicationError) -> bool:
    """Whether a local model call failed because its worker has no model credentials."""
    cause = error.cause if isinstance(error, ActivityError) else error
    return isinstance(cause, ApplicationError) and cause.type == NO_MODEL


async def _regular(
    config: OutlastConfig, request: ModelRequest, summary: str | None
) -> ModelResponse:
    return await workflow.execute_activity(
        call_model, request, summary=summary, **model_activity_options(config)
    )


async def _try_local(
    config: OutlastConfig, request: ModelRequest, summary: str | None
) -> ModelResponse | None:
    """`auto`'s local call: one attempt of at most `LOCAL_TRY_LIMIT`; None when it ran over
    or failed in any way but a cancellation, for the caller to send it again as a regular
    activity, whose retries and waits are visible (a rejected request is then refused
    again, at no cost). The dropped attempt recorded nothing the regular one could trip
    over: the store is content-addressed."""
    try:
        return await workflow.execute_local_activity(
            call_model,
            request,
            summary=summary,
            start_to_close_timeout=min(
                LOCAL_TRY_LIMIT, timedelta(seconds=config.model.call_timeout_s)
            ),
            retry_policy=RetryPolicy(maximum_attempts=1),
        )
    # A local activity's failure can arrive bare, not wrapped in an ActivityError.
    except (ActivityError, ApplicationError) as e:
        if is_cancelled_exception(e):
            raise
        return None
