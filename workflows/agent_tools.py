"""The tools an agent's workflow carries out itself, by name, for one run: what each name
calls (Agent, SendMessage, plan mode, worktrees, the web tools, a teammate's task tools).

Which of them an agent has is its resolved tool list; the aliases (`Task` for `Agent`) call
the same tool. Building the table changes no workflow state and issues no command.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agents.agent_tool import AGENT_TOOL, AgentToolInput, CoordinatorAgentInput
from agents.control_tools import (
    SEND_MESSAGE_TOOL,
    TASK_OUTPUT_TOOL,
    TASK_STOP_TOOL,
    SendMessageInput,
    TaskOutputInput,
    TaskStopInput,
)
from agents.messages import ToolResultBlock
from agents.plan_mode import (
    ENTER_PLAN_MODE_TOOL,
    EXIT_PLAN_MODE_TOOL,
    EnterPlanModeInput,
    ExitPlanModeInput,
)
from agents.questions import ASK_USER_QUESTION_TOOL, AskUserQuestionInput
from agents.team_tasks import TEAM_TOOL_INPUTS
from agents.todos import TODO_WRITE_TOOL, TodoWriteInput
from agents.web_fetch import WEB_FETCH_TOOL, WebFetchInput
from agents.web_search import WEB_SEARCH_TOOL, WebSearchInput
from agents.worktree_tools import (
    ENTER_WORKTREE_TOOL,
    EXIT_WORKTREE_TOOL,
    EnterWorktreeInput,
    ExitWorktreeInput,
)
from workflows.agent_control import task_stop
from workflows.agent_setup import Prepared, user_facing
from workflows.contracts import AgentInput
from workflows.loop_types import LoopState, WorkflowTool
from workflows.plan_control import PlanControl
from workflows.question_control import QuestionControl, refuse_question
from workflows.registry import ChildRegistry
from workflows.subagents import SubAgents
from workflows.task_output import task_output
from workflows.team_member import TEAM_TOOL_OPS, task_tool
from workflows.todo_tool import todo_write
from workflows.tool_pool import ALIASES
from workflows.turns import ValidCall
from workflows.web_tools import web_fetch, web_search
from workflows.worktree_session import WorktreeSession

ToolRun = Callable[[ValidCall], Awaitable[ToolResultBlock]]


@dataclass(frozen=True)
class AgentParts:
    """What the agent's workflow tools act on: the run's own controllers and state."""

    agent_id: str
    label: str
    """The agent's name, else its type: how its web requests are labelled."""
    subagents: SubAgents
    registry: ChildRegistry
    plans: PlanControl
    questions: QuestionControl
    worktrees: WorktreeSession
    state: Callable[[], LoopState]
    stopping: Callable[[], bool]
    refresh_details: Callable[[], None]
    send: ToolRun
    """SendMessage: to its children, or to its team when it is a teammate."""


def workflow_tools(
    inp: AgentInput, prepared: Prepared, parts: AgentParts
) -> dict[str, WorkflowTool]:
    """The agent's workflow tools, by the names (and aliases) in its tool list."""
    agent_input = CoordinatorAgentInput if inp.mode == "coordinator" else AgentToolInput
    plans, stopping, state = parts.plans, parts.stopping, parts.state
    available = {
        AGENT_TOOL: WorkflowTool(agent_input, parts.subagents.agent_tool),
        SEND_MESSAGE_TOOL: WorkflowTool(SendMessageInput, parts.send),
        TASK_STOP_TOOL: WorkflowTool(TaskStopInput, functools.partial(task_stop, parts.subagents)),
        TASK_OUTPUT_TOOL: WorkflowTool(
            TaskOutputInput,
            functools.partial(task_output, parts.registry, inp.workspace.host_queue, stopping),
        ),
        ENTER_PLAN_MODE_TOOL: WorkflowTool(
            EnterPlanModeInput,
            functools.partial(plans.enter, inp.workspace, fork=inp.fork is not None),
        ),
        EXIT_PLAN_MODE_TOOL: WorkflowTool(
            ExitPlanModeInput, lambda call: plans.exit(inp.workspace, call, stopping)
        ),
        ASK_USER_QUESTION_TOOL: WorkflowTool(
            AskUserQuestionInput,
            (lambda call: parts.questions.ask(call, stopping))
            if user_facing(inp)
            else refuse_question,
        ),
        TODO_WRITE_TOOL: WorkflowTool(
            TodoWriteInput, functools.partial(todo_write, state, parts.refresh_details)
        ),
        ENTER_WORKTREE_TOOL: WorkflowTool(EnterWorktreeInput, parts.worktrees.enter),
        WEB_FETCH_TOOL: WorkflowTool(
            WebFetchInput,
            functools.partial(web_fetch, inp.config, parts.agent_id, parts.label, state),
        ),
        EXIT_WORKTREE_TOOL: WorkflowTool(ExitWorktreeInput, parts.worktrees.exit),
        WEB_SEARCH_TOOL: WorkflowTool(
            WebSearchInput,
            functools.partial(
                web_search, inp.config, prepared.model, parts.agent_id, parts.label, state
            ),
        ),
    }
    if inp.team is not None:
        sender = inp.name or parts.agent_id
        for op, name in TEAM_TOOL_OPS.items():
            available[name] = WorkflowTool(
                TEAM_TOOL_INPUTS[name], functools.partial(task_tool, inp.team, sender, op)
            )
    tools = {name: tool for name, tool in available.items() if name in prepared.tools}
    tools.update({alias: tools[name] for alias, name in ALIASES.items() if name in tools})
    return tools
