"""`TodoWrite`: an agent's own task list (spec T7).

Carried out by the workflow, like `Agent`: the list is workflow state, kept across
continue-as-new, shown by the `status` query and in the agent's current details (the Web
UI), and dropped when the agent ends (R44). Only the contract and pure helpers live here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.markdown import escape_markdown

TODO_WRITE_TOOL = "TodoWrite"
MAX_TODOS = 100
MAX_TODO_CHARS = 1_000
"""Bounds on what the model may keep: the list lives in workflow state and in every
continue-as-new input and `status` answer."""

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    content: str = Field(
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description='What to do, in the imperative form ("Run tests").',
    )
    status: TodoStatus
    active_form: str = Field(
        alias="activeForm",
        min_length=1,
        max_length=MAX_TODO_CHARS,
        description="The same in the present continuous form, shown while it is in progress "
        '("Running tests").',
    )


class TodoWriteInput(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    todos: list[TodoItem] = Field(
        max_length=MAX_TODOS, description="The updated todo list: every item, not only changes."
    )


class TodoUpdate(BaseModel):
    """What one call did: the list before and after it (T7's `{oldTodos, newTodos}`)."""

    model_config = ConfigDict(frozen=True)

    old_todos: list[TodoItem]
    new_todos: list[TodoItem]
    kept: list[TodoItem]
    """What the agent keeps: the new list, or nothing once every item is completed (as
    Claude Code does: a finished list is not carried into the next task)."""


def apply_todo_write(current: list[TodoItem], call: TodoWriteInput) -> TodoUpdate:
    """The list is replaced wholesale; a list with every item completed is done with."""
    new = list(call.todos)
    done = bool(new) and all(t.status == "completed" for t in new)
    return TodoUpdate(old_todos=list(current), new_todos=new, kept=[] if done else new)


TODO_WRITE_RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)

MAX_SHOWN = 30
"""Items listed in the current details; the rest are counted."""


def render_todos(todos: list[TodoItem], width: int = 100) -> str:
    """The list as markdown for the agent's current details: a checklist, the item in
    progress by its active form."""
    if not todos:
        return ""
    lines = [f"**Todos** ({done_of(todos)})", ""]
    for item in todos[:MAX_SHOWN]:
        if item.status == "in_progress":
            lines.append(f"- [ ] **{_flat(item.active_form, width)}** (in progress)")
        else:
            mark = "x" if item.status == "completed" else " "
            lines.append(f"- [{mark}] {_flat(item.content, width)}")
    if len(todos) > MAX_SHOWN:
        lines.append(f"- … {len(todos) - MAX_SHOWN} more")
    return "\n".join(lines)


def done_of(todos: list[TodoItem]) -> str:
    """How far the list is: `2 of 5 done`."""
    return f"{sum(t.status == 'completed' for t in todos)} of {len(todos)} done"


def in_progress(todos: list[TodoItem]) -> str | None:
    """The active form of the first item in progress: what the agent says it is doing."""
    return next((t.active_form for t in todos if t.status == "in_progress"), None)


def _flat(text: str, width: int) -> str:
    """One line of model-written text as plain markdown text: cut to `width`, and its
    markdown characters escaped, so an item cannot bold, link or break the list."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= width else flat[: width - 1] + "…"
    return escape_markdown(flat)


TODO_WRITE_DESCRIPTION = """\
Use this tool to create and manage a structured task list for your current task. It helps \
you track progress and organise complex work, and it shows the user (and whoever watches \
this agent) how the work stands.

## When to use it
Use it proactively:
1. For a task that needs 3 or more distinct steps or actions.
2. For non-trivial tasks that need careful planning or several operations.
3. When the user asks for a todo list, or gives a list of things to do.
4. When new instructions arrive: capture the requirements as todos at once.
5. When you start on a task: mark it in_progress BEFORE beginning work. Have only one todo \
in_progress at a time.
6. When you finish a task: mark it completed, and add any follow-up tasks you found.

## When not to use it
Skip it when there is a single straightforward task, when the task is trivial and tracking \
it helps nobody, when it takes fewer than 3 trivial steps, or when the request is purely \
conversational or informational. Then just do the task.

## States and how to keep them
- States: `pending` (not started), `in_progress` (being worked on now; exactly one at a \
time), `completed` (finished).
- Every item has two forms: `content`, the imperative ("Run tests", "Build the project"), \
and `activeForm`, the present continuous shown while it runs ("Running tests", "Building \
the project").
- Update the list as you work. Mark an item completed IMMEDIATELY after finishing it; do not \
batch completions. Finish the current item before starting a new one. Remove items that no \
longer matter.
- Mark an item completed only when it is FULLY done. If tests fail, the implementation is \
partial, errors are unresolved, or a needed file or dependency was not found, keep it \
in_progress, and add an item for what blocks it.
- Break work into specific, actionable items.

Each call replaces the whole list: send every item, with its current status. When in doubt, \
use this tool: it shows that you are being thorough and that nothing is forgotten."""
