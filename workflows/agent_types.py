"""A pattern's agent types, checked when it starts.

A pipeline's stage or a verified task's verifier names its agent type, which only the child
that runs it looked up (`agent_setup.prepare`): a misspelt last stage failed the pipeline
after every stage before it had run, and a misspelt verifier after the implementer's whole
round. The pattern now asks, once at its start, which agent types its children will find
(built-ins, the user's, the project's: `agents.definition_names`, names only), and refuses a
type none of them defines before anything runs. A type a stage (or the implementer) writes a
definition of while the pattern runs is named in the input's `late_agent_types`, and not
looked up. A team's members all start at once, so nothing defines a type of theirs while it
runs: a team checks them all (patched `team-agent-types-checked`; a lead of a type no
definition has failed, and the team ended "the lead failed" after its teammates had
started and run).

The check only says early what a child would say later: when it cannot run (no worker on
the host has the step yet in a rolling deploy, `tools.local_tools` off with a host on an
older release), it is logged and skipped, and each child looks its type up as before.

A new run records the check (patched `pattern-agent-types-checked`): a host step, so a
local activity's marker where the pattern's worker is the workspace's host, else a regular
activity on the host queue. A run that started on the code before replays without it.
"""

from __future__ import annotations

import difflib

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.builtin.verification import DEFINITION as VERIFIER
from agents.config import OutlastConfig
from workflows import versions
from workflows.agent_setup import SETUP_OPTIONS
from workflows.contracts import Workspace
from workflows.host_steps import run_host_step

with workflow.unsafe.imports_passed_through():
    from activities.definitions import DefinitionNames, LoadDefinitionsInput
    from activities.errors import AgentTypeNotFound, InvalidAgentInput

VERIFIER_TYPE = VERIFIER.agent_type
FLAG_OF = {VERIFIER_TYPE: "features.verification_agent"}
"""The config flag behind each built-in that a child gets only with it."""

WRITER_CHECKED = "pattern-writer-checked"
"""Patch id: a read-only type named where the agent must write (a verified task's
implementer) is refused at the start; a run that went on with one replays as it ran."""
TYPES_CHECKED = "pattern-agent-types-checked"
"""Patch: a pipeline or a verified task refuses, at its start, an agent type no definition
has (it failed when the child of that type started)."""
TEAM_TYPES_CHECKED = "team-agent-types-checked"
"""Patch: a team does the same for its members' types. An id of its own: `TYPES_CHECKED` is
in the baseline, which a team that started on the code before recorded, so its replay would
have taken a check it never ran."""


def unknown_types(
    named: list[tuple[str, str]], names: list[str], off: dict[str, list[str]] | None = None
) -> list[tuple[str, str]]:
    """The (where, type) pairs of `named` whose type is not in `names`, in order. `off`:
    by where, the names the child there does not get (a built-in behind a feature flag
    that is off in its config; the check asks with the flag on)."""
    off = off or {}
    return [
        (where, agent_type)
        for where, agent_type in named
        if agent_type not in names or agent_type in off.get(where, [])
    ]


def off_where(
    config: OutlastConfig, builtin: list[str], as_configured: frozenset[str]
) -> dict[str, list[str]]:
    """By where, the built-ins a child that gets `config` as it is does not have: those
    behind a flag that is off, unless a user's or project's file of that name overrides
    them (then not in `builtin`). A host on an older release lists no built-ins: nothing
    is taken off then, as before."""
    flagged = [] if config.features.verification_agent else [VERIFIER_TYPE]
    gone = [name for name in flagged if name in builtin]
    return {where: gone for where in as_configured} if gone else {}


def refusal(
    what: str,
    unknown: list[tuple[str, str]],
    known: list[str],
    skipped: list[str],
    off: dict[str, list[str]] | None = None,
    definer: str | None = "a stage",
) -> str:
    """`PipelineWorkflow refused: agent type 'Reveiw' (stage review; did you mean 'review'?)
    not found; nor ... Available agents: ...`: R13's sentence, with where each type is named
    and the type it probably meant (not one that is `off` there: the flag is named then, and
    the list leaves it out). A definition file that failed is named by the first line of its
    error (a YAML error's own lines and carets do not fit in one sentence). `definer`: who
    may define a type while the pattern runs (`late_agent_types`); None for a pattern where
    none can (a team)."""
    off = off or {}
    named = [
        f"'{agent_type}' ({where}{_guess(agent_type, known, off.get(where, []))})"
        for where, agent_type in unknown
    ]
    shown = [k for k in known if not all(k in off.get(where, []) for where, _ in unknown)]
    nor = "".join(f"; nor {n}" for n in named[1:])
    text = f"{what} refused: agent type {named[0]} not found{nor}. "
    text += f"Available agents: {', '.join(shown)}"
    if skipped:
        firsts = [error.strip().splitlines()[0] for error in skipped if error.strip()]
        text += f". Agent definitions that could not be loaded: {'; '.join(firsts)}"
    if definer is None:
        return text
    return f"{text}. A type {definer} defines while it runs goes in the input's `late_agent_types`"


def _guess(agent_type: str, known: list[str], off: list[str]) -> str:
    there = [k for k in known if k not in off]
    same = [k for k in known if k.lower() == agent_type.lower()]
    close = same or difflib.get_close_matches(agent_type, there, n=1)
    if close and close[0] in off:
        return f"; '{close[0]}' is there only with {FLAG_OF[close[0]]}"
    return f"; did you mean '{close[0]}'?" if close else ""


async def refuse_unknown_types(
    what: str,
    workspace: Workspace,
    config: OutlastConfig,
    named: list[tuple[str, str]],
    late: list[str],
    as_configured: frozenset[str] = frozenset(),
    definer: str | None = "a stage",
    writers: frozenset[str] = frozenset(),
    team: bool = False,
) -> None:
    """Fail the run if a type in `named` ((where, agent type) pairs) is defined nowhere and
    not in `late`. The built-in verification agent counts as defined for stages and
    verifiers, which get it (R10) whatever the config's flag says; not for the children
    named in `as_configured` (where they are named), which get the config as it is: the
    check passed an implementer of that type with the flag off, and the implementer then
    failed at its start (a user test, 2026-12-05). `team`: a team's members, a change of
    its own (`TEAM_TYPES_CHECKED`).

    Raises:
        AgentTypeNotFound: not retryable, so the pattern fails with the sentence.
        InvalidAgentInput: the workspace is not there (as a child's start would say).
    """
    named = [(where, agent_type) for where, agent_type in named if agent_type not in late]
    if not named:
        return
    # Each id literal where it is asked: tests/unit/test_versions.py reads them from here.
    if not (versions.patched(TEAM_TYPES_CHECKED) if team else versions.patched(TYPES_CHECKED)):
        return
    features = config.features.model_copy(update={"verification_agent": True})
    try:
        found = await run_host_step(
            config,
            "agents.definition_names",
            # With the flag on, as every release asked: a worker of the release before
            # replays the names recorded here as it ran. Which of them are built-ins says
            # what the flag adds.
            LoadDefinitionsInput(
                workspace_root=workspace.root,
                config=config.model_copy(update={"features": features}),
            ),
            host_queue=workspace.host_queue,
            result_type=DefinitionNames,
            summary="the agent types there are",
            **SETUP_OPTIONS,
        )
    except ActivityError as e:
        cause = e.cause
        if is_cancelled_exception(e):
            raise
        if isinstance(cause, ApplicationError) and cause.type == InvalidAgentInput.__name__:
            raise InvalidAgentInput(cause.message) from None  # the workspace is not there
        workflow.logger.warning("agent types not checked at the start: %s", cause or e)
        return
    off = off_where(config, found.builtin, as_configured)
    if unknown := unknown_types(named, found.names, off):
        raise AgentTypeNotFound(refusal(what, unknown, found.names, found.errors, off, definer))
    why = cannot_write(what, named, writers, found.read_only)
    if why is not None and versions.patched(WRITER_CHECKED):
        raise InvalidAgentInput(why)


def cannot_write(
    what: str, named: list[tuple[str, str]], writers: frozenset[str], read_only: list[str]
) -> str | None:
    """The refusal of a read-only type named where the agent must change the code (a
    verified task's implementer): the CLI and the API refused it, a start from any other
    client ran every round with an implementer that could write nothing (a user test,
    2026-12-05). A host on an older release lists none: not checked then."""
    for where, agent_type in named:
        if where in writers and agent_type in read_only:
            return (
                f"{what} refused: {where} {agent_type} is read-only (no Write, Edit or "
                "NotebookEdit), and that agent must change the code; name an agent that can "
                "write, such as general-purpose"
            )
    return None
