"""How a workflow calls the model: a regular activity (the default), or a local activity
where the configuration asks for it (`model.local_activity`)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelRequest, ModelResponse, call_model

from agents.config import OutlastConfig


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


async def call_the_model(
    config: OutlastConfig, request: ModelRequest, summary: str | None = None
) -> ModelResponse:
    """The model's answer. Raises ActivityError as `workflow.execute_activity` does, either
    way. The choice needs no patch: it comes from the run's input, which replay sees too."""
    if config.model.local_activity:
        return await workflow.execute_local_activity(
            call_model,
            request,
            summary=summary,
            start_to_close_timeout=timedelta(seconds=config.model.call_timeout_s),
            schedule_to_close_timeout=timedelta(seconds=config.model.retry_window_s),
            retry_policy=model_retry_policy(config),
        )
    return await workflow.execute_activity(
        call_model, request, summary=summary, **model_activity_options(config)
    )
