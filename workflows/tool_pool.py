"""The full base pool of tools, in the fixed order the model sees them (cache-stable), and
the tools the workflow carries out itself."""

from __future__ import annotations

from agents.agent_tool import AGENT_TOOL, AGENT_TOOL_ALIASES, AgentToolInput
from agents.control_tools import (
    SEND_MESSAGE_TOOL,
    TASK_OUTPUT_ALIASES,
    TASK_OUTPUT_TOOL,
    TASK_STOP_ALIASES,
    TASK_STOP_TOOL,
    SendMessageInput,
    TaskOutputInput,
    TaskStopInput,
)
from agents.plan_mode import (
    ENTER_PLAN_MODE_TOOL,
    EXIT_PLAN_MODE_TOOL,
    EnterPlanModeInput,
    ExitPlanModeInput,
)
from agents.questions import ASK_USER_QUESTION_TOOL, AskUserQuestionInput
from agents.todos import TODO_WRITE_TOOL, TodoWriteInput
from agents.web_fetch import WEB_FETCH_TOOL, WebFetchInput
from agents.web_search import WEB_SEARCH_TOOL, WebSearchInput
from agents.worktree_tools import (
    ENTER_WORKTREE_TOOL,
    EXIT_WORKTREE_TOOL,
    EnterWorktreeInput,
    ExitWorktreeInput,
)

BASE_TOOLS: list[str] = [
    AGENT_TOOL,
    "Bash",
    "Glob",
    "Grep",
    "Read",
    "Edit",
    "Write",
    SEND_MESSAGE_TOOL,
    TASK_STOP_TOOL,
    TASK_OUTPUT_TOOL,
    ENTER_PLAN_MODE_TOOL,
    EXIT_PLAN_MODE_TOOL,
    TODO_WRITE_TOOL,
    ASK_USER_QUESTION_TOOL,
    "NotebookEdit",
    ENTER_WORKTREE_TOOL,
    EXIT_WORKTREE_TOOL,
    "Skill",
    WEB_FETCH_TOOL,
    WEB_SEARCH_TOOL,
]
WORKFLOW_TOOL_INPUTS = {
    AGENT_TOOL: AgentToolInput,
    SEND_MESSAGE_TOOL: SendMessageInput,
    TASK_STOP_TOOL: TaskStopInput,
    TASK_OUTPUT_TOOL: TaskOutputInput,
    ENTER_PLAN_MODE_TOOL: EnterPlanModeInput,
    EXIT_PLAN_MODE_TOOL: ExitPlanModeInput,
    TODO_WRITE_TOOL: TodoWriteInput,
    ASK_USER_QUESTION_TOOL: AskUserQuestionInput,
    ENTER_WORKTREE_TOOL: EnterWorktreeInput,
    EXIT_WORKTREE_TOOL: ExitWorktreeInput,
    WEB_FETCH_TOOL: WebFetchInput,
    WEB_SEARCH_TOOL: WebSearchInput,
}
ALIASES = {
    **{alias: AGENT_TOOL for alias in AGENT_TOOL_ALIASES},
    **{alias: TASK_STOP_TOOL for alias in TASK_STOP_ALIASES},
    **{alias: TASK_OUTPUT_TOOL for alias in TASK_OUTPUT_ALIASES},
}
