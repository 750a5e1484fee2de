"""Pure decisions of the agent loop: which tool calls are valid, how they are batched, how
usage adds up. No I/O and no Temporal calls, so every rule has a plain unit test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError
from temporalio import workflow

from agents.canonical import names
from agents.messages import (
    INVALID_TOOL_INPUT,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from workflows.contracts import AgentUsage

CUT_OFF_MESSAGE = (
    "This tool call was cut off because the response reached max_tokens, so its input is "
    "incomplete and it was not run. Try again with a smaller input (for example, write a large "
    "file in several steps)."
)
CONTEXT_FULL = "model_context_window_exceeded"
"""The stop reason of a response the context window ended: like max_tokens, mid-output."""
CONTEXT_FULL_NOTE = (
    "\n\n[This answer was cut off: the conversation reached the model's context window.]"
)
"""Added to an answer the context window ended (no tool call in it), so whoever reads it
(a parent, a person) does not take it for the whole."""
CONTEXT_FULL_MESSAGE = (
    "This tool call was cut off because the conversation reached the model's context window, "
    "so its input is incomplete and it was not run."
)


INVALID_JSON_MESSAGE = (
    "The input of this tool call was not a valid JSON object, so it was not run. Send the call "
    "again with its parameters as one JSON object"
)


def tool_use_error(message: str) -> str:
    return f"<tool_use_error>{message}</tool_use_error>"


def error_result(block: ToolUseBlock, message: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=block.id, content=tool_use_error(message), is_error=True)


@dataclass(frozen=True)
class ValidCall:
    block: ToolUseBlock
    input: BaseModel


def describe_validation_error(tool: str, error: ValidationError) -> str:
    issues = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "input"
        if item["type"] == "missing":
            issues.append(f"The required parameter `{where}` is missing")
        elif item["type"] == "extra_forbidden":
            issues.append(f"An unexpected parameter `{where}` was provided")
        else:
            issues.append(f"The parameter `{where}` is invalid: {item['msg']}")
    plural = "s" if len(issues) > 1 else ""
    return f"InputValidationError: {tool} failed due to the following issue{plural}:\n" + "\n".join(
        issues
    )


def check_call(
    block: ToolUseBlock,
    input_models: dict[str, type[BaseModel]],
    cut_by: str | None = None,
) -> ValidCall | ToolResultBlock:
    """A call the agent may run, or the `is_error` result that tells the model what to fix.

    `input_models` holds exactly the tools this agent has; anything else is unknown to it.
    """
    if cut_by is not None:  # the stop reason that ended the response inside this call
        return error_result(
            block, CONTEXT_FULL_MESSAGE if cut_by == CONTEXT_FULL else CUT_OFF_MESSAGE
        )
    if INVALID_TOOL_INPUT in block.input:
        why = block.input[INVALID_TOOL_INPUT]
        return error_result(block, f"{INVALID_JSON_MESSAGE} ({why})")
    model = input_models.get(block.name)
    if model is None:
        return error_result(block, f"Error: No such tool available: {block.name}")
    try:
        return ValidCall(block=block, input=model.model_validate(block.input))
    except ValidationError as e:
        return error_result(block, describe_validation_error(block.name, e))


def plan_calls(
    response: Message, stop_reason: str | None, input_models: dict[str, type[BaseModel]]
) -> list[ValidCall | ToolResultBlock]:
    """One entry per tool_use, in the model's order. When the response hit max_tokens (or the
    context window: `stop_reason` CONTEXT_FULL), its last tool_use is the one cut off."""
    uses = response.tool_uses()
    last = uses[-1].id if uses and stop_reason in ("max_tokens", CONTEXT_FULL) else None
    return [check_call(b, input_models, stop_reason if b.id == last else None) for b in uses]


NAMES_AGENTS = frozenset({"SendMessage", "TaskStop"})
"""Calls that name an agent, which an Agent call before them in the same response may be
starting: such a call waits for the Agent calls that name its recipient. Run beside them, a
SendMessage to the agent just spawned found no agent of that name (a user test, 2026-12-06).
Only those: a sync Agent call holds its batch until its child ends."""
SPAWNS = frozenset({"Agent"})


def batch_calls(
    planned: Sequence[ValidCall | ToolResultBlock],
    concurrency_safe: Callable[[str], bool],
    after_spawns: bool = True,
) -> list[list[ValidCall | ToolResultBlock]]:
    """Consecutive concurrency-safe calls share a batch (run together); every other call,
    and every ready-made error result, is a batch of its own, so writes stay in order. With
    `after_spawns`, a SendMessage or TaskStop that names an agent an Agent call of the batch
    spawns (`to` / `task_id` is its `name`) starts a new batch after it."""
    batches: list[list[ValidCall | ToolResultBlock]] = []
    for item in planned:
        safe = isinstance(item, ValidCall) and concurrency_safe(item.block.name)
        if (
            safe
            and batches
            and batches[-1]
            and _all_safe(batches[-1], concurrency_safe)
            and not (after_spawns and _waits_for_spawn(item, batches[-1]))
        ):
            batches[-1].append(item)
        else:
            batches.append([item])
    return batches


def _waits_for_spawn(item: ValidCall, batch: list[ValidCall | ToolResultBlock]) -> bool:
    if item.block.name not in NAMES_AGENTS:
        return False
    named = getattr(item.input, "to", None) or getattr(item.input, "task_id", None)
    return bool(named) and any(
        isinstance(i, ValidCall)
        and i.block.name in SPAWNS
        and getattr(i.input, "name", None) == named
        for i in batch
    )


def _all_safe(batch: list[ValidCall | ToolResultBlock], safe: Callable[[str], bool]) -> bool:
    return all(isinstance(i, ValidCall) and safe(i.block.name) for i in batch)


def add_usage(total: AgentUsage, call: Usage, tool_uses: int, duration_ms: int) -> AgentUsage:
    """Totals after one more model call that emitted `tool_uses` tool_use blocks (R19)."""
    tokens = total.tokens + call
    return AgentUsage(
        total_tokens=call.prompt_tokens + tokens.output_tokens,
        tool_uses=total.tool_uses + tool_uses,
        duration_ms=duration_ms,
        tokens=tokens,
    )


def run_elapsed_ms() -> int:
    """The workflow run's time so far, from its history's clock: a pattern's duration."""
    return int((workflow.now() - workflow.info().start_time).total_seconds() * 1000)


def sum_usages(usages: list[AgentUsage], duration_ms: int) -> AgentUsage:
    """Several agents' totals as one (a fork-join's forks, a pipeline's stages)."""
    tokens = Usage()
    for u in usages:
        tokens = tokens + u.tokens
    return AgentUsage(
        total_tokens=sum(u.total_tokens for u in usages),
        tool_uses=sum(u.tool_uses for u in usages),
        duration_ms=duration_ms,
        tokens=tokens,
    )


def by_reference(
    messages: list[Message], refs: dict[str, str]
) -> tuple[list[Message], dict[str, str]]:
    """`messages` with each tool_result whose content is in the store (`refs`) left empty,
    and the refs so used. Only a result whose content still hashes to its blob is replaced,
    so one the loop changed after the tool ran is sent as it is."""
    used: dict[str, str] = {}

    def thin(block):
        ref = refs.get(getattr(block, "tool_use_id", ""))
        if not isinstance(block, ToolResultBlock) or ref is None:
            return block
        if not names(ref, block.content.encode("utf-8")):  # the store names blobs so
            return block
        used[block.tool_use_id] = ref
        return block.model_copy(update={"content": ""})

    out = [
        m
        if isinstance(m.content, str)
        else m.model_copy(update={"content": [thin(b) for b in m.content]})
        for m in messages
    ]
    return out, used
