"""Starting the orchestration patterns from the CLI (or any Python code).

Each pattern is a workflow type with a public JSON input; this module builds that input from
command-line style arguments (refusing bad ones with a message that says what to fix) and
starts the workflow by name; `outlast.pattern_follow` follows it.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError

from agents.config import OutlastConfig
from agents.spawn import not_found_message
from agents.team_tasks import TaskCreateInput
from agents.tool_filter import WRITE_TOOLS, is_read_only, resolve_agent_tools
from outlast.runner import (
    StartError,
    build_input,
    env_config,
    local_definitions,
    new_workflow_id,
    repo_root,
)
from outlast.search_setup import missing_search_attributes
from outlast.start_metadata import start_metadata, task_text
from workflows import search_attributes as sa
from workflows.contracts import (
    TASK_QUEUE,
    TEAM_MEMBER_NAME,
    AgentInput,
    AgentResult,
    ForkJoinInput,
    ForkJoinResult,
    Workspace,
    host_task_queue,
)
from workflows.pattern_contracts import (
    CoordinatorInput,
    PipelineInput,
    PipelineResult,
    TeamInput,
    TeammateSpec,
    TeamResult,
    VerifiedTaskInput,
    VerifiedTaskResult,
)

PATTERNS = ("single", "coordinator", "pipeline", "team", "fork-join", "verified")
WORKFLOW_TYPES = {
    "single": "AgentWorkflow",
    "coordinator": "CoordinatorWorkflow",
    "pipeline": "PipelineWorkflow",
    "team": "TeamWorkflow",
    "fork-join": "ForkJoinWorkflow",
    "verified": "VerifiedTaskWorkflow",
}
RESULT_TYPES: dict[str, type] = {
    "single": AgentResult,
    "coordinator": AgentResult,
    "pipeline": PipelineResult,
    "team": TeamResult,
    "fork-join": ForkJoinResult,
    "verified": VerifiedTaskResult,
}


@dataclass
class PatternArgs:
    """What the CLI collected, for any pattern."""

    pattern: str
    task: str
    repo: str | os.PathLike[str]
    host_id: str
    agent_type: str | None = None
    """The agent (single), lead (team), implementer (verified) or forks' type; None is
    general-purpose. A coordinator and a pipeline's stages have their own."""
    model: str | None = None
    max_turns: int | None = None
    approve: bool = False
    teammates: list[str] = field(default_factory=list)
    """`name=prompt` or `name:agent_type=prompt`."""
    team_tasks: list[str] = field(default_factory=list)
    team_name: str | None = None
    """team: its name ("team" when None)."""
    forks: list[str] = field(default_factory=list)
    max_rounds: int | None = None
    """verified: rounds (its input's default, 3, when None)."""
    plan_first: bool = False
    """single: start in plan mode (the plan waits for `outlast approve`)."""
    config: OutlastConfig | None = None


def _workspace(repo: str | os.PathLike[str], host_id: str) -> Workspace:
    return Workspace(root=str(repo_root(repo)), host_queue=host_task_queue(host_id))


def parse_teammate(spec: str) -> TeammateSpec:
    """`name=prompt` or `name:agent_type=prompt`."""
    head, sep, prompt = spec.partition("=")
    if not sep or not prompt.strip():
        raise StartError(f"--teammate '{spec}': write it as name=prompt (or name:type=prompt).")
    name, _, agent_type = head.partition(":")
    try:
        return TeammateSpec(
            name=name.strip(),
            prompt=prompt.strip(),
            agent_type=agent_type.strip() or "general-purpose",
        )
    except ValidationError as e:
        raise StartError(f"--teammate '{spec}': {first_error(e)}") from None


def first_error(e: ValidationError) -> str:
    """The first problem, with the field it is in (`max_turns: Input should be ...`; a
    caller of the API read only "Input should be greater than or equal to 1")."""
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    said = str(err.get("ctx", {}).get("error") or err["msg"])
    return f"{where}: {said}" if where else said


OPTION_PATTERNS: dict[str, tuple[str, ...]] = {
    "agent_type": ("single", "team", "verified", "fork-join"),
    "max_turns": ("single", "coordinator"),
    "approve": ("pipeline",),
    "teammates": ("team",),
    "team_tasks": ("team",),
    "team_name": ("team",),
    "forks": ("fork-join",),
    "max_rounds": ("verified",),
}
"""Options that mean something to some patterns only, and the patterns they are for."""
OPTION_FLAGS = {
    "agent_type": "--agent",
    "max_turns": "--max-turns",
    "approve": "--approve",
    "teammates": "--teammate",
    "team_tasks": "--team-task",
    "team_name": "--team-name",
    "forks": "--fork",
    "max_rounds": "--max-rounds",
}


OPTION_ARGUMENTS = {flag: name for name, flag in OPTION_FLAGS.items()} | {
    "--repo": "repo",
    "--pattern": "pattern",
    "--model": "model",
    "--plan": "plan_first",
}
"""`outlast run`'s options, by the `start_task` argument each is."""


def in_argument_names(said: str) -> str:
    """A refusal the CLI and `start_task` share, in `start_task`'s words: it named options
    (`--repo /x: no such directory`) a caller from code never gave (a user test, 2026-12-06)."""
    said = re.sub(r"--fork (\d+)", r"forks: fork \1", said)
    said = said.replace("one --fork DIRECTIVE", "one directive in forks")
    return re.sub(r"--[a-z][a-z-]*", lambda m: OPTION_ARGUMENTS.get(m.group(0), m.group(0)), said)


def foreign_option(args: PatternArgs) -> str | None:
    """Why an option given is refused: it is for another pattern (it would be ignored)."""
    for name, patterns in OPTION_PATTERNS.items():
        if args.pattern not in patterns and getattr(args, name) not in (None, False, []):
            return (
                f"{OPTION_FLAGS[name]} is for --pattern {' or '.join(patterns)}, not "
                f"{args.pattern}: it would be ignored."
            )
    return None


def build_pattern_input(args: PatternArgs) -> Any:
    """The workflow input for `args.pattern`, or StartError naming the problem."""
    if args.pattern not in PATTERNS:
        raise StartError(f"--pattern {args.pattern}: choose one of {', '.join(PATTERNS)}.")
    if not args.task.strip():
        raise StartError("The task is empty: say what the agents should do.")
    if (problem := foreign_option(args)) is not None:
        raise StartError(problem)
    if args.agent_type is None:
        args = replace(args, agent_type="general-purpose")
    try:
        return _pattern_input(args)
    except ValidationError as e:  # a value out of range, from code that skipped the CLI
        raise StartError(f"{args.pattern}: {first_error(e)}") from None


def _known_agent_type(
    agent_type: str, config: OutlastConfig, root: str, flag: str, writes: bool = False
) -> None:
    """Refuse an agent type the checkout does not define, or, with `writes`, one that can
    change no file (a verified task's implementer)."""
    known = local_definitions(Path(root), config)
    definition = known.get(agent_type)
    if definition is None:
        found = not_found_message(agent_type, known.names(), known.errors, guess=True)
        raise StartError(f"{flag}: {found[0].lower()}{found[1:]}")
    tools = resolve_agent_tools(definition, sorted(WRITE_TOOLS)).tools
    if writes and is_read_only(tools, definition.permission_mode):
        raise StartError(
            f"{flag}: {agent_type} is read-only (no Write, Edit or NotebookEdit), and the "
            "implementer must change the code; name an agent that can write, such as "
            "general-purpose."
        )


def _pattern_input(args: PatternArgs) -> Any:
    config = args.config or env_config()
    if args.pattern == "single":
        return build_input(
            args.task,
            args.repo,
            agent_type=args.agent_type,
            model=args.model,
            host_id=args.host_id,
            config=config,
            max_turns=args.max_turns,
            plan_first=args.plan_first,
        )
    if args.plan_first:
        raise StartError(
            f"--plan starts a single agent in plan mode, not a {args.pattern}: drop --plan."
        )
    workspace = _workspace(args.repo, args.host_id)
    description = args.task.strip().splitlines()[0][:80]
    if args.pattern == "coordinator":
        return CoordinatorInput(
            task=args.task,
            workspace=workspace,
            model=args.model,
            config=config,
            max_turns=args.max_turns,
            description=description,
        )
    if args.pattern == "pipeline":
        return PipelineInput(
            task=args.task,
            workspace=workspace,
            model=args.model,
            config=config,
            approve_between=args.approve,
            description=description,
        )
    if args.pattern in ("team", "verified", "fork-join"):
        flag = f"--agent {args.agent_type}"
        writes = args.pattern == "verified"
        _known_agent_type(args.agent_type, config, workspace.root, flag, writes=writes)
    if args.pattern == "team":
        # With no --teammate the lead starts alone and spawns its teammates itself (R69).
        members = [parse_teammate(t) for t in args.teammates]
        for m in [*members]:
            _known_agent_type(m.agent_type, config, workspace.root, f"--teammate {m.name}")
            if m.name == "lead":
                raise StartError("--teammate lead: the lead (who gets the task) is named 'lead'")
        if args.team_name is not None and not TEAM_MEMBER_NAME.match(args.team_name):
            raise StartError(
                f"--team-name '{args.team_name}': a team's name is letters, digits, '_' or '-'."
            )
        if any(not t.strip() for t in args.team_tasks):
            raise StartError("--team-task: a task needs a subject.")
        try:
            return TeamInput(
                team_name="team" if args.team_name is None else args.team_name,
                workspace=workspace,
                lead=TeammateSpec(name="lead", prompt=args.task, agent_type=args.agent_type),
                teammates=members,
                tasks=[TaskCreateInput(subject=t, description=t) for t in args.team_tasks],
                config=config,
                model=args.model,
            )
        except ValidationError as e:
            raise StartError(f"--teammate: {first_error(e)}") from None
    if args.pattern == "verified":
        return VerifiedTaskInput(
            task=args.task,
            workspace=workspace,
            implementer_type=args.agent_type,
            model=args.model,
            config=config,
            **({} if args.max_rounds is None else {"max_rounds": args.max_rounds}),
            description=description,
        )
    if not args.forks:
        raise StartError("--pattern fork-join needs at least one --fork DIRECTIVE.")
    if empty := [n + 1 for n, d in enumerate(args.forks) if not d.strip()]:
        raise StartError(f"--fork {empty[0]} is empty: say what that fork should do.")
    return ForkJoinInput(
        workspace=workspace,
        directives=args.forks,
        context=args.task,
        agent_type=args.agent_type,
        model=args.model,
        config=config,
        synthesize=True,
        description=description,
    )


def new_pattern_id(pattern: str, inp: Any = None) -> str:
    """`outlast-<pattern>-<random>`; a single agent's is named by its type, as `outlast run`
    names it (`outlast-general-purpose-...`), whichever way it is started."""
    if pattern == "single" and isinstance(inp, AgentInput):
        return new_workflow_id(inp.agent_type)
    return f"outlast-{pattern}-{uuid.uuid4().hex[:12]}"


async def start_pattern(
    client: Client,
    pattern: str,
    inp: Any,
    *,
    workflow_id: str | None = None,
    task_queue: str = TASK_QUEUE,
) -> WorkflowHandle:
    # The memo and search attributes hold no task text; the UI's summary and details do.
    memo = {"pattern": pattern, "workspace": inp.workspace.root}
    summary, details = start_metadata(pattern, task_text(inp), inp.workspace.root)
    # Its pattern from the start: a coordinator (an AgentWorkflow) listed as `single`, and
    # `outlast ls --pattern coordinator` missed it, until a worker took it up. The workflow
    # upserts the rest (its ids are drawn there), and this again.
    marks = TypedSearchAttributes([SearchAttributePair(sa.PATTERN, pattern)])
    return await client.start_workflow(
        WORKFLOW_TYPES[pattern],
        inp,
        id=workflow_id or new_pattern_id(pattern, inp),
        task_queue=task_queue,
        result_type=RESULT_TYPES[pattern],
        memo=memo,
        static_summary=summary,
        static_details=details,
        search_attributes=marks if inp.config.search_attributes else None,
    )


async def fit_to_namespace(client: Client, inp: Any) -> tuple[Any, list[str]]:
    """`inp` as the namespace can run it, and the search attributes it lacks: without them,
    every upsert would fail the workflow task and the agents would never run, so the task
    starts without its attributes (`outlast setup` registers them once).

    Raises:
        StartError: the server refused to list them (no such namespace, no permission).
    """
    try:
        missing = await missing_search_attributes(client)
    except RPCError as e:
        raise StartError(f"the server refused: {e.message}") from None
    if missing:
        config = inp.config.model_copy(update={"search_attributes": False})
        inp = inp.model_copy(update={"config": config})
    return inp, missing


def succeeded(result: Any) -> bool:
    """The task did what it was asked: completed (or passed), not stopped, out of turns
    (Claude Code's `error_max_turns`) or failed part way; for a fork-join, every fork
    completed; for a team, its lead not lost and every task on its list completed."""
    if result is None or getattr(result, "stopped", False):
        return False
    if getattr(result, "max_turns_reached", False):
        return False
    if isinstance(result, ForkJoinResult):
        return all(f.finished() for f in result.forks)
    if isinstance(result, TeamResult) and (result.lead_lost() or result.unfinished()):
        return False
    return getattr(result, "status", "completed") in ("completed", "passed")
