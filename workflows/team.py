"""`TeamWorkflow` (R69-R74, R88): a lead and named teammates sharing a task list.

Every member is a child `AgentWorkflow` with a team-scoped id (`<team id>/<name>`) and the
in-process backend (R71): isolation comes from each member being its own workflow. Members
talk only through SendMessage, which signals the peer's workflow directly (R72: a durable,
ordered mailbox drained at turn boundaries). The task list lives here; members reach it
through updates, so a claim on a task someone else holds is refused with a reason (R69).

A member whose turn ends waits for mail instead of finishing. The team ends when it has gone
quiet: every member idle and every message sent inside the team received (per-recipient
counts in the members' reports agree). Then each member is asked to stop (graceful, R68:
signals only) and the team returns what they said and the final task list. The `shutdown`
signal ends it the same way at once; cancelling the team kills its members.

A team started on this code continues as new once its history is long, its members going on
(workflows/team_carry.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.exceptions import (
    ApplicationError,
    ChildWorkflowError,
    WorkflowAlreadyStartedError,
)
from temporalio.workflow import ContinueAsNewError, ParentClosePolicy

from agents.notifications import PERSON_SENDERS, person_name_text
from agents.team_tasks import TeamTask, create_task, sorted_tasks
from workflows import search_attributes as sa
from workflows import versions
from workflows.agent_types import refuse_unknown_types
from workflows.child_agents import child_failure
from workflows.client_input import (
    check_update_fields,
    given_input,
    refusal,
    refuse_unknown_fields,
    require_update_input,
    wait_for_a_newer_worker,
)
from workflows.contracts import (
    AgentInput,
    AgentResult,
    AgentUsage,
    Lineage,
    StopRequest,
    TeamLink,
    Workspace,
)
from workflows.details import chain_note
from workflows.held_handlers import answer_held
from workflows.pattern_contracts import (
    AddMemberRequest,
    MemberEnd,
    MemberOutcome,
    MemberReport,
    ShutdownAnswer,
    TeamInput,
    TeammateSpec,
    TeamMembers,
    TeamResult,
)
from workflows.signal_input import Refusals
from workflows.signals import signal_workflow
from workflows.team_carry import (
    TEAM_CONTINUES,
    ContinuingTeam,
    answered_before,
    read_team_carry,
    remember,
)
from workflows.team_details import render_team_details
from workflows.team_handlers import TeamHandlers
from workflows.team_losses import TeamLosses
from workflows.team_spawn import (
    PERSON_NAMES,
    add_member_problem,
    name_taken_text,
    spawned_text,
)

if TYPE_CHECKING:
    from activities.resume import AgentRunState

HAND_ON_WAITS_ANSWERS = "team-hand-on-waits-answers"
"""Patch id: a team about to hand on lets a shutdown request that waits for its member's
answer have it for `agents.hand_on_answer_wait_s` first; it gave up at once (`answered:
false`), and the member's answer, which came a moment later, was shown nowhere (a user
test, 2026-12-06)."""

CARRY_NOT_REFUSED = "team-carry-not-refused"
"""Patch id: the team's own continue-as-new with a field this worker does not know (a newer
worker's, in a deploy) goes on without it, or waits for a newer worker where a strict model
has it; it was refused as a client's start, and the team failed."""

KILL_ANSWERS = "team-kill-answers-held"
"""Patch: a team that is killed (or fails) with handlers unfinished lets them finish, and a
shutdown request waiting for its member's answer is answered with that end; before, the run
ended under it and its sender got Temporal's "the Workflow completed before the Update
completed" (workflows/held_handlers.py)."""


def quiet(reports: dict[str, MemberReport], live: list[str], forwarded: dict[str, int]) -> bool:
    """Every live member idle, and every team message to one of them received."""
    if not live or any(name not in reports or not reports[name].idle for name in live):
        return False
    for name in live:
        sent = forwarded.get(name, 0) + sum(r.sent_to.get(name, 0) for r in reports.values())
        if reports[name].received < sent:
            return False
    return True


NO_INPUT = TeamInput(
    team_name="none",
    workspace=Workspace(root="/", host_queue="(none)"),
    lead=TeammateSpec(name="lead", prompt="(none)"),
)
"""What a run started without an input holds until `run` refuses it."""


@workflow.defn(name="TeamWorkflow")
class TeamWorkflow(ContinuingTeam, TeamLosses, TeamHandlers):
    @workflow.init
    def __init__(self, inp: TeamInput | None = None) -> None:
        inp = NO_INPUT if inp is None else inp  # `run` refuses a start without one
        self._inp = inp
        self._members: list[TeammateSpec] = inp.members()
        """The lead, the teammates it started with, and those the lead added (R69)."""
        self._watchers: list[asyncio.Task[None]] = []
        self._adding = 0
        """`add_member` updates between their check and their member's watcher."""
        self._starting: set[str] = set()
        """Members the lead added whose workflow has not started yet."""
        self._tasks: dict[str, TeamTask] = {}
        for spec in inp.tasks:
            task = create_task(self._tasks, spec, inp.lead.name)
            self._tasks[task.id] = task
        self._reports: dict[str, MemberReport] = {}
        self._ended: dict[str, MemberOutcome] = {}
        self._forwarded: dict[str, int] = {}
        """Mail from outside the team per member, sent or in flight."""
        self._mail_ids: dict[str, int] = {}
        """Ids of that mail, per member (one that never arrived keeps its number)."""
        self._shutdown: StopRequest | None = None
        self._ending = False
        """The team has decided to end: members are being stopped."""
        self._ended_as: str | None = None
        """How the team ended with handlers unfinished (`killed`, `failed`): their answer."""
        self._asked: dict[str, str] = {}
        """Shutdown request id -> member asked."""
        self._answers: dict[str, ShutdownAnswer] = {}
        self._kills: set[str] = set()
        """Members a `kill_member` named (one not started yet is cancelled once it has)."""
        self._started: set[str] = set()
        """Members whose workflow has started (set as each start returns)."""
        self._not_started: set[str] = set()
        """Members the lead added whose start failed: their ids may be another's workflow."""
        self._marks = sa.PatternMarks()
        self._refusals = Refusals()
        self._stopped_by_others: set[str] = set()
        """Members whose last report said a stop ended them, before the team was ending."""
        self._lead_lost = False
        """The lead ended while the team worked (patched `team-ends-with-lead`)."""
        self._leaving: set[str] = set()
        """Members whose last report came while the team works (patched `team-loss-told`)."""
        self._carry, self._carry_problem = read_team_carry(inp.carry)
        self._abandon = self._carry is not None
        """Members start with ABANDON and the team continues as new (patched
        `team-continues`; set in `run` for a first run)."""
        self._closed: dict[str, AgentRunState] = {}
        """Members of an earlier run that the liveness check found closed."""
        self._telling = 0
        """Watchers telling the lead of a member's end (a continue-as-new waits for them)."""
        self._answered: dict[str, Any] = {}
        """The latest answered task and add-member updates (`team_carry.remember`)."""
        self._handing_on = False
        """The team waits for a quiet moment to continue as new: a shutdown request that
        waits for its answer gives up waiting (the answer is still recorded)."""
        self._closing = False
        """The team is killed or failed: a member whose start returns now is cancelled."""
        if self._carry is not None:
            self._restore(self._carry)

    @workflow.run
    async def run(self, inp: TeamInput | None = None) -> TeamResult:
        inp = given_input("TeamWorkflow", inp, TeamInput)
        own = inp.carry is not None and workflow.info().continued_run_id is not None
        # Asked only for a continued run with such a field, so no other run records it.
        if own and refusal("", inp) is not None and versions.patched(CARRY_NOT_REFUSED):
            wait_for_a_newer_worker(inp)  # a newer release's continue-as-new: not refused
        else:
            refuse_unknown_fields("TeamWorkflow", inp)
        if self._carry_problem is not None:
            raise ApplicationError(self._carry_problem, type="InvalidInput", non_retryable=True)
        self._marks.start(inp.config.search_attributes, "team", inp.team_name)
        try:
            return await self._run_team(inp)
        except BaseException as e:
            if isinstance(e, ContinueAsNewError):
                raise
            self._marks.ended_by(e)
            if self._abandon:
                # Started with ABANDON: the server no longer cancels them with the team.
                self._closing = True
                await self._cancel_live_members()
            await answer_held(KILL_ANSWERS, e, self._mark_end)
            raise

    async def _refuse_unknown_types(self, inp: TeamInput) -> None:
        """Before any member starts: a type no definition has fails the team with R13's
        sentence. The members get the team's config as it is (`as_configured`)."""
        members = [(f"member {m.name}", m.agent_type) for m in inp.members()]
        await refuse_unknown_types(
            "TeamWorkflow",
            inp.workspace,
            inp.config,
            members,
            [],
            as_configured=frozenset(where for where, _ in members),
            definer=None,
            team=True,
        )

    def _mark_end(self, ending: str) -> None:
        self._ended_as = ending

    async def _run_team(self, inp: TeamInput) -> TeamResult:
        if self._carry is None:
            named = [m.name for m in inp.members() if m.name in PERSON_SENDERS]
            # Asked only for such a team, so no other records a marker.
            if named and versions.patched(PERSON_NAMES):
                raise ApplicationError(person_name_text(named[0]), type="InvalidInput")
            await self._refuse_unknown_types(inp)
            self._abandon = versions.patched(TEAM_CONTINUES)
            for spec in inp.members():
                self._watchers.append(await self._start_member(spec))
                self._started.add(spec.name)
                await self._kill_if_asked(spec.name)
        else:
            carried = [m for m in self._members if m.name in self._live_started()]
            for spec in carried:
                self._watchers.append(asyncio.create_task(self._watch_carried(spec)))
            if carried:
                self._watchers.append(asyncio.create_task(self._check_carried(carried)))
        self._details()
        while True:
            await workflow.wait_condition(lambda: self._end_due() or self._continue_due())
            if self._end_due():
                break
            # At a quiet moment: no handler running, no member starting, no lead being told.
            # A shutdown request waiting for its member's answer gets a while to have it
            # first (asked at a hand-on only, so no other run records the marker).
            grace = timedelta(seconds=inp.config.agents.hand_on_answer_wait_s)
            if grace > timedelta(0) and versions.patched(HAND_ON_WAITS_ANSWERS):
                with contextlib.suppress(TimeoutError):
                    await workflow.wait_condition(self._quiet_moment, timeout=grace)
            self._handing_on = True
            await workflow.wait_condition(self._quiet_moment)
            if self._end_due():
                break
            self._continue_as_new(inp)
        # From here no member reads mail again: refuse it rather than report it sent.
        self._ending = True
        stopped: list[str] = []
        while True:
            # A member the lead added as the team began to end is stopped once it has started.
            late = [n for n in self._live() if n not in stopped and n not in self._starting]
            # Taken with `late`: a member whose start completes during the stops below has
            # not been stopped, and waiting for it now would wait for ever.
            stoppable = list(self._watchers)
            for name in late:
                await self._stop_member(name)
            stopped += late
            await asyncio.gather(*stoppable)
            if self._adding == 0 and all(w.done() for w in self._watchers):
                break
            await workflow.wait_condition(lambda: self._adding == 0)
        await workflow.wait_condition(workflow.all_handlers_finished)
        lead = self._ended.get(inp.lead.name)
        status = "stopped" if self._shutdown is not None else "completed"
        result = TeamResult(
            team_name=inp.team_name,
            status=status,
            lead_text=lead.final_text if lead else "",
            members=[self._ended[m.name] for m in self._members],
            tasks=sorted_tasks(self._tasks),
            messages=sum(sum(r.sent_to.values()) for r in self._reports.values()),
        )
        # How the lead ended where it did not complete: `outlast ls` and the Web UI listed a
        # team whose lead failed at its start (no workspace) as completed (a user test,
        # 2026-12-05). The upsert's value only; the result's status stays as it was.
        # Tasks left undone, as `run` says (2026-12-06): `ls` read plain `completed`. Not of
        # a team a person stopped: that is why they are undone, and `run` says `stopped`
        # first (a user test: `ls` read `completed (tasks not done)`).
        undone = "tasks not done" if result.unfinished() and status == "completed" else None
        self._marks.end(result.lead_lost() or undone or status)
        return result

    def _quiet_moment(self) -> bool:
        """The team may end, or hand on: no handler running, no member starting, no lead
        being told of a loss."""
        return self._end_due() or (
            self._adding == 0 and self._telling == 0 and workflow.all_handlers_finished()
        )

    def _end_due(self) -> bool:
        return (
            self._shutdown is not None
            or self._lead_lost
            or not self._live()
            or (
                self._inp.end_when_quiet
                and self._leaving <= set(self._ended)
                and quiet(self._reports, self._live(), self._forwarded)
            )
        )

    def _link(self) -> TeamLink:
        info = workflow.info()
        return TeamLink(
            workflow_id=info.workflow_id,
            team_name=self._inp.team_name,
            members=[m.name for m in self._members],
            lead=self._inp.lead.name,
        )

    def _member_id(self, name: str) -> str:
        return f"{workflow.info().workflow_id}/{name}"

    async def _start_member(self, spec: TeammateSpec) -> asyncio.Task[None]:
        """Start one member's `AgentWorkflow`; the task that records how it ends."""
        inp, info = self._inp, workflow.info()
        child = AgentInput(
            prompt=spec.prompt,
            workspace=inp.workspace,
            agent_type=spec.agent_type,
            model=spec.model or inp.model,
            config=inp.config,
            name=spec.name,
            description=f"{inp.team_name}: {spec.name}",
            team=self._link(),
            permission_mode="plan" if spec.plan_mode_required else None,
            lineage=Lineage(
                session_id=info.workflow_id,
                parent_workflow_id=info.workflow_id,
                pattern="team",
            ),
        )
        child, attributes = sa.child_start(child)
        handle = await workflow.start_child_workflow(
            "AgentWorkflow",
            child,
            id=self._member_id(spec.name),
            result_type=AgentResult,
            # Cancelling the team kills its members, who still clean up (never terminate).
            # A team that continues as new cancels them itself: they outlive its runs.
            parent_close_policy=ParentClosePolicy.ABANDON
            if self._abandon
            else ParentClosePolicy.REQUEST_CANCEL,
            static_summary=f"{spec.agent_type}: {spec.name} of team {inp.team_name}",
            search_attributes=attributes,
        )
        return asyncio.create_task(self._watch(spec.name, spec.agent_type, handle))

    async def _stop_member(self, name: str) -> None:
        reason = "the team is done" if self._shutdown is None else self._shutdown.reason
        if self._lead_lost:
            reason = "the team's lead has ended"
        try:
            stop = StopRequest(reason=reason, team_end=True)
            await signal_workflow(self._member_id(name), "stop", stop)
        except ApplicationError:
            pass  # it ended meanwhile; its watcher records how

    async def _watch(self, name: str, agent_type: str, handle) -> None:
        base = {"name": name, "agent_type": agent_type, "workflow_id": handle.id}
        try:
            result: AgentResult = await handle
            outcome = MemberOutcome(
                **base,
                status=result.status,
                stopped=self._stopped_on_its_own(name, result),
                final_text=result.final_text,
                error=result.error,
                usage=result.usage,
                unread_messages=result.unread_messages,
                max_turns_reached=result.max_turns_reached,
                shutdown_approved=result.shutdown_approved,
            )
            out_of_turns = result.max_turns_reached
        except ChildWorkflowError as e:
            # A member that failed or was killed does not take the team down (R71).
            status, error = child_failure(e)
            last = self._reports.get(name)
            usage = (last.usage if last else None) or AgentUsage()
            outcome = MemberOutcome(**base, status=status, error=error, usage=usage)
            out_of_turns = False
        await self._record_end(outcome, out_of_turns)

    async def _record_end(self, outcome: MemberOutcome, out_of_turns: bool) -> None:
        self._ended[outcome.name] = outcome
        # With no await before it: the lead's note is counted before the team can go quiet.
        self._telling += 1
        try:
            await self._after_end(outcome, out_of_turns)
        finally:
            self._telling -= 1
        self._details()

    def _stopped_on_its_own(self, name: str, result: AgentResult | MemberEnd) -> bool:
        """A member whose last report said a stop ended it before the team was ending (that
        end may make the team quiet before this result comes); or, from a member that did
        not say, one that completed before the team began to end: a teammate does not finish
        on its own (it waits for mail), unless it spent its turns or approved a shutdown
        request. The team's end stops every member: a stop then is no news."""
        if result.status != "completed":
            return False
        if name in self._stopped_by_others:
            return True
        return not self._ending and not result.max_turns_reached and not result.shutdown_approved

    def _live(self) -> list[str]:
        return [m.name for m in self._members if m.name not in self._ended]

    def _details(self) -> None:
        chain = None
        if self._carry is not None and workflow.info().continued_run_id:
            chain = chain_note(self._carry.runs, workflow.info().first_execution_run_id)
        workflow.set_current_details(render_team_details(self.team(), chain))

    # --- the lead's update (the other handlers: workflows/team_handlers.py) ---------------

    @workflow.update(name="add_member")
    async def add_member(self, request: AddMemberRequest | None = None) -> str:
        """A teammate the lead spawns with `Agent({name, ...})` (R69): every live member
        learns its name first (so a message to it, or to `*`, reaches it), then it starts as
        the first members did."""
        assert request is not None  # the validator refuses an update without one
        if (known := answered_before(self._answered)) is not None:
            return known
        spec = request.spec
        if spec.name in [m.name for m in self._members]:
            # Two adds of one name in one workflow task both pass the validator.
            raise ApplicationError(name_taken_text(spec.name), type="NameTaken", non_retryable=True)
        self._adding += 1
        # Listed before any await: the team is not quiet while its newest member starts.
        self._members.append(spec)
        self._starting.add(spec.name)
        self._details()
        started = False
        try:
            # Every other member, ended or not: which of them have ended is set by their
            # watchers, which a handler may run before on a replay without cache; a signal
            # to an ended one fails, in history, the same way each time.
            await self._tell_members(spec.name)
            try:
                self._watchers.append(await self._start_member(spec))
            except WorkflowAlreadyStartedError:
                raise ApplicationError(
                    f"{spec.name} could not start: workflow {self._member_id(spec.name)} "
                    "exists already. The name stays taken: choose another.",
                    type="MemberNotStarted",
                    non_retryable=True,
                ) from None
            started = True
            self._started.add(spec.name)
            await self._kill_if_asked(spec.name)
            if self._closing:
                # Started with ABANDON after the killed team cancelled the others.
                await self._cancel_member(spec.name)
            if self._members[-1].name != spec.name:
                # Another member was added while this one started: its link lacks that one.
                await self._tell(spec.name)
        finally:
            self._starting.discard(spec.name)
            self._adding -= 1
            if not started:
                self._not_started.add(spec.name)
                # Listed as a member, so it must have an outcome: the team's result has one
                # for each.
                self._ended[spec.name] = MemberOutcome(
                    name=spec.name,
                    agent_type=spec.agent_type,
                    workflow_id=self._member_id(spec.name),
                    status="failed",
                    error="could not start",
                )
                self._details()
        text = spawned_text(spec, self._inp.team_name, self._member_id(spec.name))
        remember(self._answered, text)
        return text

    async def _tell_members(self, newcomer: str) -> None:
        for m in self._members:
            if m.name != newcomer:
                await self._tell(m.name)

    async def _tell(self, name: str) -> None:
        """Send `name` every member's name (it merges them into the ones it knows)."""
        names = TeamMembers(members=[m.name for m in self._members])
        with contextlib.suppress(ApplicationError):  # ended, or not started yet
            await signal_workflow(self._member_id(name), "team_members", names)

    @add_member.validator
    def _check_add(self, request: AddMemberRequest | None = None) -> None:
        require_update_input("add_member", request, AddMemberRequest)
        check_update_fields("add_member", request)
        if answered_before(self._answered) is not None:
            return  # a retried attempt, answered as it was
        # Adds in one workflow task each pass this check before any of their handlers runs,
        # so such a batch may go past the limit by its size - 1: a handler cannot count the
        # members running again (which have ended is not for a handler to read).
        self._refuse_when_ended()
        problem = add_member_problem(
            request,
            lead=self._inp.lead.name,
            names=[m.name for m in self._members],
            live=len(self._live()),
            limit=self._inp.config.agents.max_concurrent,
            ending=self._shutdown is not None or self._ending,
        )
        if problem:
            raise ValueError(problem)
