"""`AgentWorkflow`: one agent, from its task to its final answer, as a durable workflow.

The same workflow runs a top-level agent and every sub-agent; a sub-agent only differs by
its input (lineage, parent link, resolved tools and model) and by reporting its end to its
parent. Finishing, failing and being killed all go through `_end`, so the parent hears of
every ending exactly once and the worktree is always released.
"""

from __future__ import annotations

import asyncio
import functools

from temporalio import workflow
from temporalio.exceptions import FailureError, is_cancelled_exception

from agents.builtin.fork import fork_message
from agents.control_tools import TASK_STOP_TOOL
from agents.messages import Message, ToolResultBlock
from agents.notifications import (
    system_reminder,
)
from agents.plan_mode import EXIT_PLAN_MODE_TOOL
from agents.worktree_slug import agent_worktree_slug
from workflows import subagent_hooks, versions

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput
    from activities.read_state import load_read_state
    from activities.resume import repair

from workflows import search_attributes as sa
from workflows.agent_control import send_message, stop_background_children
from workflows.agent_end import (
    SYNC_END_BY_RESULT,
    export_output_file,
    handoff_warning,
    keep_last_results,
    kill_reason,
    name_kept_worktree,
    name_undelivered,
    name_unstarted,
    outcome_of,
    parent_reads_result,
    release_worktree,
    stopped_before_mail,
    tell_parent,
)
from workflows.agent_handlers import AgentHandlers
from workflows.agent_inbox import LATE_MAIL_CONTINUES, AgentInbox
from workflows.agent_loop import run_agent_loop, turns_spent
from workflows.agent_setup import (
    SETUP_OPTIONS,
    Prepared,
    agent_fields_hidden,
    lineage_of,
    prepare,
    prepare_fork,
)
from workflows.agent_tools import AgentParts, workflow_tools
from workflows.carry import AgentCarry, from_client, read_carry, should_continue_as_new
from workflows.child_endings import settle_children
from workflows.child_input import ParentContext
from workflows.client_input import (
    client_start,
    given_input,
    refuse_bad_values,
    refuse_unknown_fields,
    wait_for_a_newer_worker,
)
from workflows.contracts import (
    AgentInput,
    AgentResult,
    AgentUsage,
    MailMessage,
    StopRequest,
    Workspace,
)
from workflows.details import chain_note, render_details, starting_details
from workflows.loop_types import LoopHooks, LoopSetup, LoopState, seen_read_state
from workflows.pattern_contracts import MemberEnd
from workflows.phases import create_session_scratchpad
from workflows.plan_control import PlanControl, plan_approver
from workflows.question_control import QuestionControl
from workflows.registry import ChildRegistry
from workflows.shell_task import launch as launch_shell
from workflows.signal_input import Refusals
from workflows.subagents import SubAgents
from workflows.team_member import (
    TeamCounters,
)
from workflows.team_member import report as report_to_team
from workflows.worktree_session import left_note, session_workspace, worktree_session
from workflows.worktrees import create_worktree

NO_INPUT = AgentInput(prompt="(none)", workspace=Workspace(root="/", host_queue="(none)"))
"""What a run started without an input holds until `run` refuses it."""

TEAM_MEMBER_ENDINGS = "team-member-endings"
"""Patch: a teammate reports its final counts to the team and never continues for mail
that arrives after it stopped (first release: neither)."""


STOPPED_KEEPS_STOPPED = "stopped-keeps-stopped"
"""Patch id: an agent stopped with mail waiting used to go on as its next generation to
answer it (calling the model after a stop); it now ends, reporting the unread count."""
ATTRIBUTES_AT_START = "attributes-at-start"
"""Patch id: a child whose parent started it with its search attributes
(`AgentInput.attributes_at_start`) does not upsert them; asked only by such a child."""

SCRATCHPAD_BY_FEATURE = "scratchpad-by-feature"
"""Patch id: a coordinator gets a scratchpad only with `features.scratchpad` (R63, default
off, as Claude Code's `tengu_scratch`); the first releases made one whatever the setting."""


def _wants_scratchpad(inp: AgentInput) -> bool:
    # Asked only with the feature off, where the answer decides whether one is made.
    return inp.config.features.scratchpad or not versions.patched(SCRATCHPAD_BY_FEATURE)


@workflow.defn(name="AgentWorkflow")
class AgentWorkflow(AgentInbox, AgentHandlers):
    @workflow.init
    def __init__(self, inp: AgentInput | None = None) -> None:
        # Signal handlers may run before `run` starts: state carried from the previous run
        # must already be in place then, or a notification arriving first would be lost.
        # Without an input, `run` refuses the start; until then, a stand-in's state.
        inp = NO_INPUT if inp is None else inp
        self._state = LoopState()
        self._messages: list[Message] = []
        self._base = self._state.transcript
        self._phase = "starting"
        self._outcome: str | None = None
        """How the run ended (`outcome_of`), once it has: the `status` query's `outcome`."""
        self._ended_usage: AgentUsage | None = None
        """The end's usage (its duration the run's), once it has ended."""
        self._unread_ends: list[str] | None = None
        """Notifications queued when the loop ended, never read (`AgentResult.undelivered`);
        None until then."""
        self._calling_at = -1
        """The turns counted when the latest model call (or compaction) began."""
        self._current_tools: list[str] = []
        self._stop: StopRequest | None = None
        self._agent_type = ""
        self._model = ""
        self._agent_id = ""
        self._background = False
        self._mailbox: list[MailMessage] = []
        self._seen_mail: list[str] = []
        """Ids of recent mail, oldest first: a retried send is dropped (bounded)."""
        self._refusals = Refusals()
        """Signals refused this run (not carried by continue-as-new: they are diagnostics)."""
        self._registry = ChildRegistry()
        self._subagents = SubAgents(self._registry, on_change=self._refresh_details)
        self._started = workflow.now()
        self._plan_note: str | None = None
        self._upserts = False
        self._own_mode = "default"
        self._marks = sa.WaitMarks(False, self._own_mode)
        self._handoff: str | None = None
        """The handoff check's warning on the final answer (R42), once checked."""
        self._handoff_checked = False
        self._untold: AgentResult | None = None
        """This run's end, when the parent reads it from the result instead of a signal."""
        self._told_continuing = False
        """The parent was told this run's end with `continues`: mail was waiting then."""
        self._shutdown_approved = False
        """This teammate approved a shutdown request: its stop is its own answer."""
        self._stopped: list[str] = []
        """Background children this run stopped at its end (R92), for its result."""
        self._sync_stops: list[asyncio.Future] = []
        """Stops sent on to the sync sub-agents this agent waited on (kept: asyncio holds
        only weak references to tasks)."""
        self._team = inp.team
        self._team_counts = TeamCounters()
        info = workflow.info()
        client = from_client(inp.carry, info.continued_run_id, bool(info.cron_schedule))
        self._carry, self._carry_refusal = read_carry(inp.carry, client_start=client)
        self._prepared: Prepared | None = None
        self._plans = PlanControl(lambda: self._state)
        self._questions = QuestionControl(lambda: self._state)
        self._home = inp.workspace
        self._has_parent = inp.parent is not None
        if self._carry is not None:
            self._restore(self._carry)

    @workflow.run
    async def run(self, inp: AgentInput | None = None) -> AgentResult:
        inp = given_input("AgentWorkflow", inp, AgentInput)
        if self._carry_refusal is not None:  # only a start whose init could not read it
            raise InvalidAgentInput(f"AgentWorkflow input refused: {self._carry_refusal}")
        if self._carry is None and client_start(inp):
            refuse_unknown_fields("AgentWorkflow", inp)
            refuse_bad_values("AgentWorkflow", inp)
        else:
            wait_for_a_newer_worker(inp)
        self._started = self._carry.started_at if self._carry else workflow.now()
        lineage = lineage_of(inp)
        inp = inp.model_copy(update={"lineage": lineage})
        self._agent_id, self._agent_type = lineage.agent_id, inp.agent_type
        if self._carry is None:
            # Not an activity or a command: nothing a replay compares.
            host = inp.workspace.host_queue
            workflow.set_current_details(starting_details(inp.agent_type, self._agent_id, host))
        self._background = self._background or inp.background
        if inp.mode == "coordinator" and inp.scratchpad is None and _wants_scratchpad(inp):
            inp = inp.model_copy(update={"scratchpad": await create_session_scratchpad(inp)})
        # Agents of the first release recorded no search attributes; they replay without.
        self._upserts = inp.config.search_attributes and versions.patched("search-attributes")
        if self._upserts:
            # A continued run shows the mode its chain is in, not its start's: a resume reads
            # the attribute of a run killed before it marked a change (a review, 2026-12-07).
            # The upsert's values only, which a replay does not compare.
            mode = (self._carry.state.mode if self._carry else "") or inp.permission_mode
            current = inp.model_copy(
                update={"background": self._background, "permission_mode": mode}
            )
            # Not when the parent started this run with them (`sa.child_start`); a continued
            # or resumed run always does (the same input, started without them). Patched:
            # an older worker ignores the input's flag and upserts, and one that replays a
            # run that did not fails on the marker instead, until a newer worker takes it.
            first = self._carry is None and inp.resume_from is None
            given = first and inp.attributes_at_start and versions.patched(ATTRIBUTES_AT_START)
            if not given:
                workflow.upsert_search_attributes(sa.for_agent(current))
        self._own_mode = inp.permission_mode or "default"
        self._marks = sa.WaitMarks(self._upserts, self._own_mode)
        try:
            end = await self._work(inp)
            # Before the end stops its background children: their `killed` ends, which the
            # result names, are no news it missed.
            self._unread_ends = list(self._registry.queue)
            if end == "continue_as_new":
                await self._continue_as_new(inp)
            if end in ("stopped", "max_turns"):
                await keep_last_results(self._state, inp.workspace.host_queue)
                # The other ends wait for every background child's notification first. Inside
                # the try: a kill while it waits for a start must still end the agent.
                self._stopped = await stop_background_children(self._subagents)
        except BaseException as e:
            if self._unread_ends is None:
                # As after a stop: ends that came after its last turn, before this end stops
                # its children (their `killed` ends are no news it missed).
                self._unread_ends = list(self._registry.queue)
            if is_cancelled_exception(e):
                await keep_last_results(
                    self._state,
                    inp.workspace.host_queue,
                    killed=True,
                    reason=kill_reason(workflow.cancellation_reason() or ""),
                )
                self._stopped = await stop_background_children(self._subagents)
                await self._end(inp, "killed", error="stopped")
            elif isinstance(e, FailureError):
                await keep_last_results(self._state, inp.workspace.host_queue, failed=True)
                self._stopped = await stop_background_children(self._subagents)
                await self._end(inp, "failed", error=e.message)
            raise
        result = await self._end(inp, "completed", loop_end=end)
        if self._mailbox and inp.team is not None and versions.patched(TEAM_MEMBER_ENDINGS):
            # A teammate ends only when its team does: what arrived since stays unread, and
            # the result says how much (its senders were told it was queued).
            workflow.logger.info("%d message(s) left unread at the end", len(self._mailbox))
            # Words only: a shutdown request still waiting when the team ended is not mail.
            unread = self._unread_words()
            result = result.model_copy(update={"unread_messages": unread})
        elif self._mailbox and self._stop is not None and versions.patched(STOPPED_KEEPS_STOPPED):
            # A stop means the model is not called again: the mail stays unread, and the
            # result says how much of it there was (the caller's messages are not lost).
            result = result.model_copy(update={"unread_messages": len(self._mailbox)})
            if self._told_continuing:
                # The parent was told a next generation follows, and the stop came since: that
                # generation ends here, stopped before it ran, or the parent waits for it.
                ended = stopped_before_mail(result, self._stop.reason)
                await tell_parent(inp, ended, generation=inp.run_generation + 1)
        elif self._turns_spent_with_mail(end):
            # As after a stop: the result says how much mail is left unread.
            result = result.model_copy(update={"unread_messages": len(self._mailbox)})
        elif self._mailbox:
            # Mail that came in after the parent was told is answered, not dropped: the agent
            # goes on as its next generation, and its parent hears of that one too.
            if self._told_continuing:
                pass  # the mail was waiting already when the parent was told
            elif versions.patched(LATE_MAIL_CONTINUES):
                # This run's end again (a sync parent has not had it: the result it waits on
                # now comes only after that generation), saying that another end follows, so
                # the parent does not finish before it.
                await tell_parent(inp, result, continues=True)
            elif self._untold is not None:
                await tell_parent(inp, self._untold)
            await self._continue_as_new(
                inp.model_copy(
                    update={"run_generation": inp.run_generation + 1, "background": True}
                )
            )
        return result

    async def _work(self, inp: AgentInput) -> str:
        if inp.worktree is not None and (self._carry is not None or inp.resume_from is not None):
            # R53: a resumed agent gets its worktree back (re-created if it was removed), and
            # before anything reads the checkout.
            home = Workspace(root=inp.worktree.repo_root, host_queue=inp.workspace.host_queue)
            reclaimed = await create_worktree(home, agent_worktree_slug(self._agent_id))
            if isinstance(reclaimed, str):
                raise InvalidAgentInput(reclaimed)
        if self._carry is not None:
            prepared = self._carry.prepared
        elif inp.fork is not None:
            prepared = prepare_fork(inp, inp.lineage)
        else:
            prepared = await prepare(inp, inp.lineage)
        self._prepared = prepared
        self._agent_type, self._model = prepared.definition.agent_type, prepared.model
        setup = self._loop_setup(inp, prepared)
        # A queued worker does not start once no turn is left to read of it, the last one
        # under way included: the end would kill it at once.
        self._subagents.phases.ending = lambda: (
            self._stop is not None
            or workflow.cancellation_reason() is not None
            or turns_spent(setup, self._state, 1 if self._calling() else 0)
        )
        if self._carry is None:
            await self._start_state(inp)
            await self._plans.start(prepared.permission_mode, inp.workspace, inp.plan_file)
            if subagent_hooks.applies(inp):
                await self._subagent_start(inp, prepared)
        self._subagents.stopping = lambda: self._stop is not None
        self._subagents.refused = self._refusals.keep
        self._plans.approver = plan_approver(inp)
        self._plans.sender = inp.name or self._agent_id
        self._plans.can_exit = EXIT_PLAN_MODE_TOOL in prepared.tools
        self._plans.run_generation = inp.run_generation
        self._plans.show = self._show_details
        self._plans.reword = self._reword_refusal
        self._questions.show = self._show_details
        reminder = prepared.definition.critical_system_reminder
        budget = inp.config.agents
        run_start_turns = self._state.turns
        hooks = LoopHooks(
            stop_requested=lambda: self._stop is not None,
            drain_inbox=self._drain_inbox,
            on_phase=self._on_phase,
            record=self._messages.extend,
            started_at=self._elapsed_ms,
            has_input=self._has_input,
            outstanding=self._outstanding,
            wait_for_input=self._wait_for_input,
            settle=lambda: settle_children(
                self._subagents.open_children,
                self._input_or_stop,
                self._outstanding,
                self._wait_for_input,
                lambda: self._on_phase("waiting", []),
            ),
            attachments=lambda: self._plans.attachments(subagent=inp.parent is not None),
            # R84: the definition's critical reminder rides on every turn, never piling up.
            ephemeral=lambda: [system_reminder(reminder)] if reminder else [],
            tool_policy=self._plans.policy,
            # A worker spawn waiting for its files lives in this run's memory: no hand-over
            # while one waits.
            continue_as_new=lambda: (
                not self._subagents.phases.waiting()
                and should_continue_as_new(
                    budget.continue_as_new_events,
                    budget.turns_per_run,
                    self._state.turns - run_start_turns,
                )
            ),
        )
        while True:
            end = await run_agent_loop(setup, self._state, hooks)
            if end != "end_turn":
                return end
            if inp.team is not None:
                # A teammate does not finish when its turn ends: it waits for mail.
                if await self._idle(inp.team, inp.name or self._agent_id):
                    self._state.wake_turns = self._state.turns
                    continue
                return end
            if subagent_hooks.applies(inp) and await self._stop_blocked(inp, prepared):
                continue
            self._on_phase("finishing", [])
            self._handoff = await handoff_warning(inp, self._state.last_text)
            self._handoff_checked = True
            if not self._mailbox:
                return end
            # Mail came in during the final check: the parent has not been told anything
            # yet, so this run simply answers it.
            self._handoff, self._handoff_checked = None, False

    async def _subagent_start(self, inp: AgentInput, prepared: Prepared) -> None:
        """What SubagentStart hooks add goes with the first turn (R100)."""
        mode = self._state.mode or prepared.permission_mode
        context = await subagent_hooks.start_context(
            inp, prepared.definition, self._agent_id, self._state.cwd, mode, self._stopping
        )
        if context is not None:
            self._state.pending.append(Message.user_text(system_reminder(context)))

    async def _stop_blocked(self, inp: AgentInput, prepared: Prepared) -> bool:
        """True if a SubagentStop hook sent the sub-agent back to work (R100)."""
        state = self._state
        if self._stop is not None:
            return False  # a stop that came with the end: no hook holds it up
        feedback = await subagent_hooks.stop_feedback(
            inp,
            prepared.definition,
            self._agent_id,
            state.cwd,
            state.mode or prepared.permission_mode,
            state.last_text,
            state.stop_hook_active,
            self._stopping,
        )
        state.stop_hook_active = feedback is not None
        if feedback is None or self._stop is not None:
            return False
        if state.turns >= prepared.max_turns:
            workflow.logger.info("a SubagentStop hook blocked, but no turn is left")
            return False
        state.pending.append(Message.user_text(feedback))
        return True

    def _restore(self, carry: AgentCarry) -> None:
        self._state = carry.state
        self._registry = carry.registry
        self._subagents = SubAgents(self._registry, on_change=self._refresh_details)
        self._mailbox = list(carry.mailbox)
        self._seen_mail = list(carry.seen_mail)
        self._background = carry.background
        self._base = carry.state.transcript
        self._team_counts = carry.team_counts

    async def _continue_as_new(self, inp: AgentInput) -> None:
        """Hand the agent to a fresh run at this turn boundary; children keep running (they
        were started with ABANDON; background ones signal this workflow id, whichever run is
        current, and the liveness check finds any that closed without telling)."""
        await workflow.wait_condition(workflow.all_handlers_finished)
        carry = AgentCarry(
            state=self._state,
            prepared=self._prepared,
            registry=self._registry.carried(),
            mailbox=self._mailbox,
            seen_mail=self._seen_mail,
            started_at=self._started,
            background=self._background,
            runs=(self._carry.runs + 1) if self._carry else 1,
            base=self._base,
            team_counts=self._team_counts,
            from_run=workflow.info().run_id,
        )
        # The team as it is now (`team_members`), for the next run's SendMessage.
        update = {"carry": carry.model_dump(mode="json"), "team": self._team}
        workflow.continue_as_new(
            self._next_run_input(inp.model_copy(update=update)),
            memo=workflow.memo(),
            search_attributes=sa.mark_continued() if self._upserts else None,
        )

    def _next_run_input(self, inp: AgentInput) -> object:
        """The next run's input; a workflow type with its own input wraps the agent's."""
        return inp

    async def _start_state(self, inp: AgentInput) -> None:
        self._state = LoopState(cwd=inp.workspace.root, read_state=dict(inp.read_file_state))
        if inp.resume_from is not None:
            # A resumed fork continues its own conversation too, not its directive again.
            self._state.transcript = await workflow.execute_activity(
                repair,
                inp.resume_from,
                task_queue=inp.workspace.host_queue,
                summary="the conversation it goes on from",
                **SETUP_OPTIONS,
            )
            self._base = self._state.transcript
            if inp.read_state_ref is not None:
                # The same agent goes on: what it had read, it may edit without a new Read.
                self._state.read_state.update(
                    await workflow.execute_activity(
                        load_read_state,
                        inp.read_state_ref,
                        task_queue=inp.workspace.host_queue,
                        summary="the files it had read",
                        **SETUP_OPTIONS,
                    )
                )
        elif inp.fork is not None:
            fork = inp.fork
            worktree = (fork.parent_cwd, inp.workspace.root) if fork.parent_cwd else None
            self._state.transcript = self._base = fork.base
            self._state.pending = [
                *fork.prefix,
                fork_message(fork.tool_use_ids, fork.directive, worktree),
            ]
        elif inp.prompt:
            self._state.pending = [Message.user_text(inp.prompt)]

    def _loop_setup(self, inp: AgentInput, prepared: Prepared) -> LoopSetup:
        self._subagents.ctx = ParentContext(
            workflow_id=workflow.info().workflow_id,
            agent_id=self._agent_id,
            agent_type=prepared.definition.agent_type,
            lineage=inp.lineage,
            config=inp.config,
            definitions=prepared.definitions,
            # Its worktree once it has entered one (T18): sub-agents work where it does.
            workspace=session_workspace(inp.workspace, self._state.worktree),
            model=prepared.model,
            permission_mode=prepared.permission_mode,
            allowed_agent_types=prepared.allowed_agent_types,
            # What the model has seen: a fork's placeholders stand in for this round's results.
            read_state=lambda: seen_read_state(self._state),
            parent=inp.parent,
            request=prepared.request,
            tools=prepared.tools,
            transcript=lambda: self._state.transcript,
            round_tool_use_ids=lambda: list(self._state.round_tool_use_ids),
            messages=lambda: self._messages,
            query_source=inp.query_source,
            coordinator=inp.mode == "coordinator",
            scratchpad=inp.scratchpad,
            team=inp.team,
            name=inp.name,
            resumed=inp.run_generation > 1,
            write_scope=inp.write_scope,
            planning=lambda: self._state.mode == "plan",
        )
        sender = inp.name or self._agent_id
        send = functools.partial(send_message, self._subagents, sender=sender)
        if inp.team is not None:
            send = functools.partial(self._team_send, sender, send)
        label = inp.name or prepared.definition.agent_type
        parts = AgentParts(
            agent_id=self._agent_id,
            label=label,
            subagents=self._subagents,
            registry=self._registry,
            plans=self._plans,
            questions=self._questions,
            worktrees=worktree_session(
                inp, prepared.sandbox, lambda: self._state, self._worktree_moved, self._registry
            ),
            state=lambda: self._state,
            stopping=lambda: self._stop is not None,
            refresh_details=self._refresh_details,
            send=send,
        )
        tools = workflow_tools(inp, prepared, parts)
        return LoopSetup(
            request=prepared.request,
            tools=prepared.tools,
            workspace=inp.workspace,
            agent_id=self._agent_id,
            sandbox=prepared.sandbox,  # type: ignore[arg-type]
            max_turns=prepared.max_turns,
            turns_per_wake=inp.team is not None,
            config=inp.config,
            workflow_tools=tools,
            extra_roots=(inp.scratchpad,) if inp.scratchpad else (),
            write_scope=tuple(inp.write_scope) if inp.write_scope is not None else None,
            label=label,
            # Offered where a background agent is (R16, R73): a teammate's or a run's with
            # background tasks disabled is refused by the Bash tool itself.
            background_bash=None
            if agent_fields_hidden(inp)
            else functools.partial(self._background_bash, inp),
        )

    async def _background_bash(self, inp: AgentInput, call, ctx) -> ToolResultBlock:
        def found_task_dir(path: str) -> None:
            self._state.task_dir = path

        result = await launch_shell(
            self._registry,
            call,
            ctx,
            inp.workspace.host_queue,
            inp.config,
            TASK_STOP_TOOL in (self._prepared.tools if self._prepared else []),
            found_task_dir,
        )
        self._refresh_details()
        return result

    def _end_reason(self, status: str, stopped: bool) -> str:
        """A stop's reason, or a kill's: the reason its cancel was requested with (`outlast
        kill --reason`); a result's payload only, no command."""
        if stopped:
            return self._stop.reason if self._stop is not None else ""
        if status == "killed":
            return kill_reason(workflow.cancellation_reason() or "")
        return ""

    async def _end(
        self, inp: AgentInput, status: str, *, error: str | None = None, loop_end: str = ""
    ) -> AgentResult:
        self._phase = "finished"
        self._state.todos = []  # an ended agent's list is done with (R44)
        self._refresh_details()
        text = self._state.last_text
        unstarted = [c.label or c.agent_id for c in self._subagents.phases.drop_waiting()]
        if unstarted:
            workflow.logger.warning("ending with queued workers never started: %s", unstarted)
        name_unstarted(status, unstarted)
        name_undelivered(status, self._unread_ends or [])
        warning = None
        if status == "completed":
            checked = self._handoff_checked
            warning = self._handoff if checked else await handoff_warning(inp, text)
        worktree = await release_worktree(inp.worktree, inp.workspace.host_queue)
        if (entered := self._state.worktree) is not None:
            # Still in the worktree it entered (T18): removed if unchanged, kept otherwise,
            # and the session back where it was, for a generation that may follow.
            worktree = await release_worktree(entered.info, inp.workspace.host_queue)
            self._state.cwd, self._state.worktree = entered.return_cwd, None
            # Read only by a next generation (mail that came after the answer).
            note = left_note(entered, kept=bool(worktree))
            self._state.pending.append(Message.user_text(system_reminder(note)))
        name_kept_worktree(status, worktree.get("worktree_path"), worktree.get("worktree_branch"))
        # A teammate's own approved shutdown is its answer, not a stop (its team agrees).
        # A teammate's turn that ended idle ends its run only when a stop came: stopped,
        # as its team and `show` say (it read `completed`). Only the result's payload.
        stopped = (
            loop_end == "stopped" or self._stopped_idle(inp, loop_end)
        ) and not self._shutdown_approved
        result = AgentResult(
            status=status,  # type: ignore[arg-type]
            agent_id=self._agent_id,
            agent_type=self._agent_type,
            final_text=text,
            usage=self._state.usage.model_copy(update={"duration_ms": self._elapsed_ms()}),
            turns=self._state.turns,
            max_turns_reached=loop_end == "max_turns",
            stopped=stopped,
            stop_reason=self._end_reason(status, stopped),
            transcript=self._state.transcript,
            error=error,
            run_generation=inp.run_generation,
            handoff_warning=warning,
            unstarted_workers=unstarted,
            stopped_children=self._stopped,
            # A sub-agent's end that came after the last turn: a stop or the turn limit ended
            # the loop before it was read, and it was lost (a user test, 2026-12-07).
            undelivered=self._unread_ends or [],
            shutdown_approved=self._shutdown_approved,
            permission_mode=self._state.mode or None,
            plan_file=self._state.plan_file,
            run_id=workflow.info().run_id,
            **worktree,
        )
        if status == "killed" and self._mailbox:
            # For its parent: mail a kill kept it from reading (a resume hands it over).
            unread = self._unread_words()
            result = result.model_copy(update={"unread_messages": unread})
        self._outcome = outcome_of(result)
        # What the `status` query shows from now on: the end's figures, no tool running (a
        # stop or the turn limit ends the loop with its last turn's tools still named).
        self._current_tools, self._ended_usage = [], result.usage
        self._refresh_details()  # the Web UI's too: it kept the last turn's tools
        if inp.team is not None and versions.patched(TEAM_MEMBER_ENDINGS):
            # The last report: what it sent in its final turn counts for the team's quiet test.
            me = inp.name or self._agent_id
            stopped = self._stop is not None and not self._shutdown_approved
            why = result.stop_reason if stopped or status == "killed" else ""
            # How it ends, for a team that continued as new since it started this member.
            end = MemberEnd(
                status=result.status,
                final_text=result.final_text,
                error=result.error,
                # As `run` counts it after this end: words only, a shutdown request is not mail.
                unread_messages=self._unread_words(),
                max_turns_reached=result.max_turns_reached,
                shutdown_approved=result.shutdown_approved,
            )
            await report_to_team(
                inp.team, me, self._team_counts, True, result.usage, stopped, why, end
            )
        result = await export_output_file(
            inp, result, seen_read_state(self._state), self._state.compacted
        )
        if status == "completed" and self._mail_continues(inp, loop_end):
            # Mail is waiting: this run goes on as its next generation to answer it, and one
            # signal says so with this end (the parent must not finish in between).
            self._told_continuing = True
            await tell_parent(inp, result, continues=True)
        elif parent_reads_result(inp, status, self._background) and versions.patched(
            SYNC_END_BY_RESULT
        ):
            self._untold = result
        else:
            await tell_parent(inp, result)
        if self._upserts:
            # A stopped agent, or one out of turns, completed its run but not its task: `ls`
            # and the Web UI listed it as completed (a user test, 2026-12-05). The upsert's
            # value only, which a replay does not compare.
            workflow.upsert_search_attributes(
                sa.at_end(self._outcome, self._agent_type, text, result.usage.tool_uses)
            )
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result

    def _stopped_idle(self, inp: AgentInput, loop_end: str) -> bool:
        """A teammate stopped while it waited for mail (`outlast stop TEAM/name`): not by its
        team's own end, which ends every member (no news)."""
        stop = self._stop
        return (
            inp.team is not None
            and loop_end == "end_turn"
            and stop is not None
            and not stop.team_end
        )

    def _worktree_moved(self) -> None:
        if self._subagents.ctx is not None:
            self._subagents.ctx.workspace = session_workspace(self._home, self._state.worktree)
        self._refresh_details()

    def _show_details(self, plan_note: str) -> None:
        self._phase = "waiting"
        self._plan_note = plan_note
        self._refresh_details()
        self._mark()

    def _mark(self) -> None:
        """The search attributes of what it waits on and the mode it is in (`sa.WaitMarks`)."""
        if self._plans.pending is not None:
            status = sa.WAITING_FOR_APPROVAL
        elif self._questions.pending is not None:
            status = sa.WAITING_FOR_ANSWER
        else:
            status = "running"
        self._marks.show(status, self._state.mode or self._own_mode)

    def _refresh_details(self) -> None:
        chain = None
        if self._carry is not None and workflow.info().continued_run_id:
            chain = chain_note(self._carry.runs, workflow.info().first_execution_run_id)
        workflow.set_current_details(render_details(self.status(), self._plan_note, chain))

    def _elapsed_ms(self) -> int:
        return int((workflow.now() - self._started).total_seconds() * 1000)

    def _calling(self) -> bool:
        """Whether a model call is under way, its turn not yet counted (the phase stays
        `calling_model` after it, until the next one)."""
        return self._phase == "calling_model" and self._calling_at == self._state.turns

    def _on_phase(self, phase: str, tools: list[str]) -> None:
        if phase == "calling_model":
            self._calling_at = self._state.turns
        self._phase = phase
        self._current_tools = tools
        self._plan_note = None
        self._refresh_details()
        self._mark()
