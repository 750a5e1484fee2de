"""The lead grows its team (R69): `Agent({name, ...})` from a team's lead starts a new member
of the team, where the same call from any other agent starts a sub-agent.

Claude Code's lead spawns its teammates this way. Here the team's workflow decides, through
its `add_member` update: only the lead adds, a name is taken once (the member's workflow id is
`<team id>/<name>`), nobody joins a team that is ending, and at most `agents.max_concurrent`
members work at once. The newcomer starts on the prompt the lead gave it, as the first
members start on theirs. A teammate cannot add one: `name` is not offered to it, and its
named call is refused as before (R73).
"""

from __future__ import annotations

from pydantic import ValidationError
from temporalio import workflow

from agents.agent_tool import AgentToolInput
from agents.messages import ToolResultBlock
from agents.notifications import PERSON_SENDERS, person_name_text
from workflows.contracts import TeamLink
from workflows.pattern_contracts import AddMemberRequest, TeammateSpec
from workflows.signal_input import why
from workflows.team_member import team_reply
from workflows.turns import ValidCall, error_result

with workflow.unsafe.imports_passed_through():
    from activities.team_control import AddMemberCall, TeamControl

TEAM_SPAWN = "team-spawn"
"""Patch id: the lead's named `Agent` call starts a teammate. It was refused ("Teammates can
only run synchronous sub-agents"), so a team had only the members it started with."""
PERSON_NAMES = "person-names-refused"
"""Patch id: a sub-agent or teammate may not be named `user` or `parent`; its mail read as
the person's own words to its parent or its peers (agents/notifications.mail_text)."""


TEAM_NAME_NEEDS_TEAM = "team-name-needs-team"
"""Patch id: an `Agent` call naming a team from an agent in none is refused. It started a
sub-agent, `team_name` ignored: the model believed it had a teammate."""


def no_team_text(team_name: str) -> str:
    return (
        f"There is no team '{team_name}' here: you are not in a team (a team is started as "
        "one, `outlast run --pattern team`). Leave out team_name to start a sub-agent."
    )


def leads(team: TeamLink | None, me: str | None) -> bool:
    """Whether the agent named `me` leads `team`."""
    return team is not None and bool(me) and team.lead == me


def spawn_problem(inp: AgentToolInput, team: TeamLink) -> str | None:
    """Why the lead's named `Agent` call cannot start a teammate, before the team is asked."""
    if inp.team_name is not None and inp.team_name != team.team_name:
        return (
            f"You lead team '{team.team_name}', and a session has one team: leave out "
            f"team_name (or give '{team.team_name}')."
        )
    if inp.isolation is not None:
        return "Teammates share the team's checkout: leave out isolation."
    return None


def teammate_spec(inp: AgentToolInput, agent_type: str) -> TeammateSpec | str:
    """The new member, or why its fields do not make one."""
    try:
        return TeammateSpec(
            name=inp.name or "",
            prompt=inp.prompt,
            agent_type=agent_type,
            model=inp.model,
            plan_mode_required=inp.mode == "plan",
        )
    except ValidationError as e:
        return f"This teammate cannot be spawned: {why(e)}"


def add_member_problem(
    request: AddMemberRequest, *, lead: str, names: list[str], live: int, limit: int, ending: bool
) -> str | None:
    """Why the team refuses to add `request.spec` (None: it may)."""
    if request.caller != lead:
        return f"Only the lead ({lead}) adds teammates; ask it with SendMessage."
    if ending:
        return "The team is ending: nobody new joins it."
    if request.spec.name in names:
        return name_taken_text(request.spec.name)
    if request.spec.name in PERSON_SENDERS:
        return person_name_text(request.spec.name)
    if live >= limit:
        return (
            f"The team has {live} members running, the most it runs at once "
            f"(agents.max_concurrent = {limit}): wait for one to end, or give the work to a "
            "teammate you have."
        )
    return None


def name_taken_text(name: str) -> str:
    return (
        f"The team already has a member named '{name}': message it with "
        f'SendMessage({{to: "{name}"}}), or choose another name.'
    )


def merged_names(known: list[str], told: list[str]) -> list[str]:
    """The members an agent knows after being told `told`: none dropped, order kept."""
    return [*known, *(n for n in told if n not in known)]


def spawned_text(spec: TeammateSpec, team_name: str, workflow_id: str) -> str:
    """The lead's `Agent` result for a teammate that started."""
    text = (
        f"Spawned teammate '{spec.name}' ({spec.agent_type}) in team '{team_name}', workflow "
        f"{workflow_id}. It starts on the prompt you gave it and works on its own, with the "
        "team's task list. Its text output is not visible to you: talk to it with "
        f'SendMessage({{to: "{spec.name}"}}); its messages reach you at your next tool round.'
    )
    if spec.plan_mode_required:
        text += " It plans first and sends you its plan for approval."
    return text


async def spawn_teammate(
    team: TeamLink, me: str, call: ValidCall, agent_type: str
) -> ToolResultBlock:
    """Ask the team to start the teammate the lead's `Agent` call describes; its answer (or
    its refusal) is the tool result."""
    inp: AgentToolInput = call.input  # type: ignore[assignment]
    problem = spawn_problem(inp, team)
    spec = teammate_spec(inp, agent_type) if problem is None else problem
    if isinstance(spec, str):
        return error_result(call.block, spec)
    add = AddMemberCall(
        team_workflow_id=team.workflow_id,
        spec=spec.model_dump(mode="json"),
        caller=me,
        # A retried activity gets the first call's outcome: one member, not two.
        update_id=f"{workflow.info().workflow_id}:{call.block.id}",
    )
    return await team_reply(call, "The team", TeamControl.add_member, add)
