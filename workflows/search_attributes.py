"""Search attributes Outlast workflows upsert (spec R95): typed keys, one place.

The embedded dev server registers them at start; on a cluster the deployment registers
them (`temporal operator search-attribute create`). Values are stored unencrypted: ids,
types and statuses only, never prompts or file contents.

SQL visibility (the dev server's SQLite included) has fixed columns per type: at most 10
Keyword, 3 Int, 3 Bool and 3 Text attributes per namespace. Outlast needs 12 Keyword
attributes, so the two that are only ever read, never grouped by, are Text: ParentAgentId and
VerificationVerdict; that leaves the ten Keyword columns all used (Pattern is the tenth).
`ParentWorkflowId` is a system attribute the server itself sets on child workflows (and
refuses from clients), so Outlast does not define its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

from agents.builtin.verification import DEFINITION as VERIFIER
from agents.builtin.verification import (
    effective_verdict,
    parse_verdict,
    parse_verification_report,
)
from workflows import versions
from workflows.held_handlers import ending_of

if TYPE_CHECKING:
    from workflows.contracts import AgentInput

SESSION_ID = SearchAttributeKey.for_keyword("SessionId")
AGENT_ID = SearchAttributeKey.for_keyword("AgentId")
AGENT_TYPE = SearchAttributeKey.for_keyword("AgentType")
AGENT_NAME = SearchAttributeKey.for_keyword("AgentName")
PARENT_AGENT_ID = SearchAttributeKey.for_text("ParentAgentId")
CHAIN_ID = SearchAttributeKey.for_keyword("ChainId")
AGENT_DEPTH = SearchAttributeKey.for_int("AgentDepth")
AGENT_STATUS = SearchAttributeKey.for_keyword("AgentStatus")
IS_BACKGROUND = SearchAttributeKey.for_bool("IsBackground")
PERMISSION_MODE = SearchAttributeKey.for_keyword("PermissionMode")
ISOLATION_MODE = SearchAttributeKey.for_keyword("IsolationMode")
TEAM_NAME = SearchAttributeKey.for_keyword("TeamName")
RUN_GENERATION = SearchAttributeKey.for_int("RunGeneration")
VERIFICATION_VERDICT = SearchAttributeKey.for_text("VerificationVerdict")
PATTERN = SearchAttributeKey.for_keyword("Pattern")
"""single | coordinator | pipeline | team | fork-join | verified: the pattern the workflow
belongs to (its children carry their session's pattern)."""

ALL = [
    SESSION_ID,
    AGENT_ID,
    AGENT_TYPE,
    AGENT_NAME,
    PARENT_AGENT_ID,
    CHAIN_ID,
    AGENT_DEPTH,
    AGENT_STATUS,
    IS_BACKGROUND,
    PERMISSION_MODE,
    ISOLATION_MODE,
    TEAM_NAME,
    RUN_GENERATION,
    VERIFICATION_VERDICT,
    PATTERN,
]

_CLI_TYPE = {"KEYWORD": "Keyword", "INT": "Int", "BOOL": "Bool", "TEXT": "Text"}


def cli_registrations() -> list[str]:
    """`NAME=Type` pairs for `temporal server start-dev --search-attribute`."""
    return [f"{k.name}={_CLI_TYPE[k.indexed_value_type.name]}" for k in ALL]


def for_agent(inp: AgentInput, status: str = "running") -> TypedSearchAttributes:
    """The attributes an agent starts with: lineage, type, mode (no prompt text, ever)."""
    lineage = inp.lineage
    pairs: list[SearchAttributePair] = [
        SearchAttributePair(SESSION_ID, lineage.session_id),
        SearchAttributePair(AGENT_ID, lineage.agent_id),
        SearchAttributePair(AGENT_TYPE, inp.agent_type),
        SearchAttributePair(CHAIN_ID, lineage.chain_id),
        SearchAttributePair(AGENT_DEPTH, lineage.depth),
        SearchAttributePair(AGENT_STATUS, status),
        SearchAttributePair(IS_BACKGROUND, inp.background),
        SearchAttributePair(PERMISSION_MODE, inp.permission_mode or "default"),
        SearchAttributePair(ISOLATION_MODE, "worktree" if inp.worktree else "none"),
        SearchAttributePair(RUN_GENERATION, inp.run_generation),
        SearchAttributePair(PATTERN, pattern_of(inp)),
    ]
    if inp.name:
        pairs.append(SearchAttributePair(AGENT_NAME, inp.name))
    if inp.team is not None:
        # Registered since the first release and never set: `TeamName = "x"` listed nothing.
        pairs.append(SearchAttributePair(TEAM_NAME, inp.team.team_name))
    if lineage.parent_agent_id:
        pairs.append(SearchAttributePair(PARENT_AGENT_ID, lineage.parent_agent_id))
    return TypedSearchAttributes(pairs)


def child_start(child: AgentInput) -> tuple[AgentInput, TypedSearchAttributes | None]:
    """The input and search attributes a parent starts a child agent with: its attributes,
    so that its first run need not upsert them (one event and one billed action fewer per
    child, and the Web UI lists the child by type and lineage before it has run). Not when
    they are not recorded, or when the child completes its lineage itself (a pattern's stage
    or teammate draws its own ids): it upserts then, as before."""
    lineage = child.lineage
    drawn = lineage.agent_id and lineage.chain_id and lineage.session_id
    if not (child.config.search_attributes and drawn):
        return child, None
    return child.model_copy(update={"attributes_at_start": True}), for_agent(child)


def pattern_of(inp: AgentInput) -> str:
    """The session's pattern: set by the pattern workflow that started the agent (and passed
    down its tree), else what the agent is by itself."""
    if inp.lineage.pattern:
        return inp.lineage.pattern
    return "coordinator" if inp.mode == "coordinator" else "single"


def for_pattern(
    pattern: str,
    session_id: str,
    status: str = "running",
    team_name: str | None = None,
    agent_id: str | None = None,
) -> TypedSearchAttributes:
    """The attributes a pattern workflow (pipeline, team, fork-join, verified) starts with;
    `agent_id`, where its children name it their parent agent (a fork-join's forks)."""
    pairs = [
        SearchAttributePair(PATTERN, pattern),
        SearchAttributePair(SESSION_ID, session_id),
        SearchAttributePair(AGENT_STATUS, status),
    ]
    if team_name:
        pairs.append(SearchAttributePair(TEAM_NAME, team_name))
    if agent_id:
        pairs.append(SearchAttributePair(AGENT_ID, agent_id))
    return TypedSearchAttributes(pairs)


PATTERN_ATTRIBUTES = "pattern-attributes"
"""Patch id: pattern workflows of the first release recorded no search attributes."""

PATTERN_END_STATUS = "pattern-end-status"
"""Patch id: a pattern that is killed or fails sets its status (`PatternMarks.ended_by`)."""


class PatternMarks:
    """A pattern workflow's attributes: set when it starts, its status when it ends."""

    def __init__(self) -> None:
        self.on = False

    def start(
        self,
        enabled: bool,
        pattern: str,
        team_name: str | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.on = enabled and versions.patched(PATTERN_ATTRIBUTES)
        if self.on:
            # The upsert's values only, which a replay does not compare.
            session = workflow.info().workflow_id
            attributes = for_pattern(pattern, session, team_name=team_name, agent_id=agent_id)
            workflow.upsert_search_attributes(attributes)

    def end(self, status: str, verdict: str | None = None) -> None:
        if not self.on:
            return
        updates = [AGENT_STATUS.value_set(status)]
        if verdict:
            updates.append(VERIFICATION_VERDICT.value_set(verdict))
        workflow.upsert_search_attributes(updates)

    def ended_by(self, e: BaseException) -> None:
        """The status of a pattern that ends by `e`: `killed` when it was cancelled, `failed`
        when it fails; `running` stayed in its search attributes before (patched). Nothing
        for an exception that fails only the task, or for the cache's eviction of a run that
        was not cancelled. (Evicted after its cancel, the run asks for the patch and the SDK
        raises its eviction error from it: no command is sent during an eviction anyway.)"""
        status = ending_of(e)
        if status is None:
            return
        if self.on and versions.patched(PATTERN_END_STATUS):
            self.end(status)


CONTINUED = "continued"
"""`AgentStatus` of a run that handed its agent or team on to the next by continue-as-new."""
CONTINUED_MARKED = "continued-marked"
"""Patch id: a run that continues as new sets its `AgentStatus` to `continued` first."""


def mark_continued() -> TypedSearchAttributes | None:
    """Before a continue-as-new, where attributes are recorded: this run's status set to
    `continued`, and the attributes the next run starts with returned (this run's, with
    `AgentStatus=running`: it takes them up from there). A closed run kept `running`, so
    every run an agent had handed on was listed by `AgentStatus="running"` for good (a user
    test, 2026-12-07). None where the run asks for no such change (the next run inherits,
    as before)."""
    if not versions.patched(CONTINUED_MARKED):
        return None
    # A copy, `running`: the SDK changes the run's own attributes in place at the upsert
    # (and a run that ends by late mail reads its end's status by now).
    kept = [p for p in workflow.info().typed_search_attributes if p.key.name != AGENT_STATUS.name]
    handed_on = TypedSearchAttributes([*kept, SearchAttributePair(AGENT_STATUS, "running")])
    workflow.upsert_search_attributes([AGENT_STATUS.value_set(CONTINUED)])
    return handed_on


WAITS_MARKED = "waits-marked"
"""Patch id: a running agent's `AgentStatus` says when it waits on a decision, and its
`PermissionMode` follows plan mode (`WaitMarks`); both kept their start values before."""
WAITING_FOR_APPROVAL = "waiting_for_approval"
WAITING_FOR_ANSWER = "waiting_for_answer"


class WaitMarks:
    """A running agent's `AgentStatus` and `PermissionMode` as they change: waiting for its
    plan's approval or for answers to its questions (`AgentStatus = "waiting_for_approval"`
    lists, in the Web UI or `temporal workflow list`, every agent a person holds up), and
    the mode it is in (`plan` while it plans, then the mode the approval goes on in).

    One upsert per change, none while nothing changes; the patch is asked at the first
    change, so a run that never waits or changes mode records nothing new."""

    def __init__(self, enabled: bool, mode: str) -> None:
        self.enabled = enabled
        self.status, self.mode = "running", mode
        self._patched: bool | None = None

    def show(self, status: str, mode: str) -> None:
        if not self.enabled or (status, mode) == (self.status, self.mode):
            return
        if self._patched is None:
            self._patched = versions.patched(WAITS_MARKED)
        if not self._patched:
            return
        updates = []
        if status != self.status:
            updates.append(AGENT_STATUS.value_set(status))
        if mode != self.mode:
            updates.append(PERMISSION_MODE.value_set(mode))
        workflow.upsert_search_attributes(updates)
        self.status, self.mode = status, mode


def at_end(status: str, agent_type: str, final_text: str, tool_uses: int | None = None) -> list:
    """An agent's last upsert: its status, and a verifier's verdict (R83) when it gave one,
    as its task or pipeline takes it (`effective_verdict`, given its `tool_uses`): a PASS
    with no executed check, or from a verifier that ran nothing, is a FAIL there, and was
    listed under `VerificationVerdict="PASS"` (a user test, 2026-12-07). A task's own
    spot-check of a PASS (R82) is the task's: its attributes have that verdict."""
    updates = [AGENT_STATUS.value_set(status)]
    if agent_type != VERIFIER.agent_type or parse_verdict(final_text) is None:
        return updates
    verdict, _ = effective_verdict(parse_verification_report(final_text), tool_uses)
    updates.append(VERIFICATION_VERDICT.value_set(verdict))
    return updates
