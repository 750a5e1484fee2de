"""`TodoWrite` as the workflow carries it out (T7): the list is the agent's state, so it
lasts through worker restarts and continue-as-new, and every change shows at once in the
`status` query and the agent's current details."""

from __future__ import annotations

from collections.abc import Callable

from agents.messages import ToolResultBlock
from agents.todos import TODO_WRITE_RESULT, TodoWriteInput, apply_todo_write
from workflows.loop_types import LoopState
from workflows.turns import ValidCall


async def todo_write(
    state: Callable[[], LoopState], on_change: Callable[[], None], call: ValidCall
) -> ToolResultBlock:
    inp: TodoWriteInput = call.input  # type: ignore[assignment]
    current = state()
    current.todos = apply_todo_write(current.todos, inp).kept
    on_change()
    return ToolResultBlock(tool_use_id=call.block.id, content=TODO_WRITE_RESULT)
