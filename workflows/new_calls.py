"""Tool calls only this release takes, refused as the release before refused them when a run
that release recorded is replayed.

Which calls are valid decides how a turn's calls are batched (an invalid one is a batch of
its own, workflows/turns.py; so is AskUserQuestion, which waits for a person), and so which
activities each workflow task schedules: a model that called `TodoWrite`, AskUserQuestion,
NotebookEdit, Skill, WebFetch, WebSearch, EnterWorktree, ExitWorktree or Read with `pages`
before they existed got an error back, and its run must replay that way. Each id is asked
only when such a call comes, so a run that never makes one records no marker.
"""

from __future__ import annotations

from agents.messages import ToolResultBlock
from workflows import versions
from workflows.turns import ValidCall, check_call, error_result

TODO_WRITE = "todo-write"
"""Patch id: `TodoWrite` is a tool (T7); before, "No such tool available"."""
READ_PAGES = "read-pages"
"""Patch id: Read takes `pages` for a PDF (T1); before, an unexpected parameter."""
NOTEBOOK_EDIT = "notebook-edit"
"""Patch id: `NotebookEdit` is a tool (T14); before, "No such tool available"."""
ASK_USER_QUESTION = "ask-user-question"
"""Patch id: `AskUserQuestion` is a tool (T16); before, "No such tool available"."""
WEB_SEARCH = "web-search"
"""Patch id: `WebSearch` is a tool (T15); before, "No such tool available"."""
WEB_FETCH = "web-fetch"
"""Patch id: `WebFetch` is a tool (T15); before, "No such tool available"."""
SKILL_TOOL = "skill-tool"
"""Patch id: `Skill` is a tool (T17); before, "No such tool available"."""
WORKTREE_TOOLS = "worktree-tools"
"""Patch id: `EnterWorktree` and `ExitWorktree` are tools (T18); before, "No such tool
available"."""


def _as_before(call: ValidCall) -> ToolResultBlock | None:
    """What the release before answered a call it did not take, when the run is not past
    the patch that takes it; None otherwise."""
    name = call.block.name
    if name == "TodoWrite":
        if not versions.patched(TODO_WRITE):
            return check_call(call.block, {})  # no such tool, as check_call says it
    elif name == "NotebookEdit":
        if not versions.patched(NOTEBOOK_EDIT):
            return check_call(call.block, {})
    elif name == "AskUserQuestion":
        if not versions.patched(ASK_USER_QUESTION):
            return check_call(call.block, {})
    elif name == "WebSearch":
        if not versions.patched(WEB_SEARCH):
            return check_call(call.block, {})
    elif name == "WebFetch":
        if not versions.patched(WEB_FETCH):
            return check_call(call.block, {})
    elif name == "Skill":
        if not versions.patched(SKILL_TOOL):
            return check_call(call.block, {})
    elif name in ("EnterWorktree", "ExitWorktree"):
        if not versions.patched(WORKTREE_TOOLS):
            return check_call(call.block, {})
    elif name == "Read" and "pages" in call.block.input:
        if not versions.patched(READ_PAGES):
            return error_result(
                call.block,
                "InputValidationError: Read failed due to the following issue:\n"
                "An unexpected parameter `pages` was provided",
            )
    return None


def gate_new_calls(planned: list) -> list:
    """`planned` (plan_calls' list) with each call this release newly takes refused, unless
    the run is past its patch."""
    return [
        before if isinstance(item, ValidCall) and (before := _as_before(item)) is not None else item
        for item in planned
    ]
