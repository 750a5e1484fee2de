"""`WebFetch` and `WebSearch` as the workflow carries them out (T15): each one activity on the
workflow's own queue, where the model calls run, so a page or a search is read by a model
there and only its answer reaches history. The model's tokens join the agent's usage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.activity_summaries import tool_summary
from agents.config import OutlastConfig
from agents.messages import ToolResultBlock
from agents.web_fetch import WebFetchInput
from agents.web_search import WebSearchInput
from workflows.turns import ValidCall, error_result

with workflow.unsafe.imports_passed_through():
    from activities.errors import NON_RETRYABLE
    from activities.web_fetch import WebFetchRequest
    from activities.web_fetch import web_fetch as web_fetch_activity
    from activities.web_search import WebSearchRequest
    from activities.web_search import web_search as web_search_activity

WEB_TOOL_OPTIONS = {
    "start_to_close_timeout": timedelta(minutes=4),
    # A rate limit's retry-after may be hours: past this the agent goes on without the page.
    "schedule_to_close_timeout": timedelta(minutes=10),
    "heartbeat_timeout": timedelta(seconds=30),
    # A GET and a model call: safe to run again. An outage gets a few tries, not hours: the
    # agent can go on without the page.
    "retry_policy": RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=4,
        non_retryable_error_types=NON_RETRYABLE,
    ),
}


async def _run(
    activity_fn: Any, request: BaseModel, label: str, state: Callable[[], Any], call: ValidCall
) -> ToolResultBlock:
    try:
        out = await workflow.execute_activity(
            activity_fn,
            request,
            task_queue=workflow.info().task_queue,
            summary=tool_summary(label, state().turns, call.block.name, call.input),
            **WEB_TOOL_OPTIONS,
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        cause = e.cause.message if isinstance(e.cause, ApplicationError) else str(e.cause)
        return error_result(call.block, f"{call.block.name} failed: {cause}")
    if out.usage is not None:
        current = state()
        current.usage = current.usage.model_copy(
            update={"tokens": current.usage.tokens + out.usage}
        )
    return ToolResultBlock(tool_use_id=call.block.id, content=out.content, is_error=out.is_error)


async def web_fetch(
    config: OutlastConfig,
    agent_id: str,
    label: str,
    state: Callable[[], Any],
    call: ValidCall,
) -> ToolResultBlock:
    """`state`: the agent's loop state (its turn for the summary; its usage, which the small
    model's tokens join)."""
    inp: WebFetchInput = call.input  # type: ignore[assignment]
    request = WebFetchRequest(
        input=inp,
        model=config.resolve_model(config.tools.web_fetch_model),
        allow_private=config.tools.web_fetch_private_hosts,
        agent_id=agent_id,
        agent_name=label,
    )
    return await _run(web_fetch_activity, request, label, state, call)


async def web_search(
    config: OutlastConfig,
    model: str,
    agent_id: str,
    label: str,
    state: Callable[[], Any],
    call: ValidCall,
) -> ToolResultBlock:
    """`model`: the agent's own, unless `tools.web_search_model` names another."""
    inp: WebSearchInput = call.input  # type: ignore[assignment]
    chosen = config.tools.web_search_model
    request = WebSearchRequest(
        input=inp,
        model=config.resolve_model(chosen) if chosen else model,
        agent_id=agent_id,
        agent_name=label,
    )
    return await _run(web_search_activity, request, label, state, call)
