"""An agent's inbox: the mail and notifications it waits for between turns, a teammate's
idle wait and its team messages, and whether mail waiting at its end sends it on as its next
generation. A mixin: the state it reads and writes is set up in `AgentWorkflow.__init__`
(workflows/agent.py), as `AgentHandlers`' is.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from agents.messages import Message, ToolResultBlock
from agents.notifications import PERSON_SENDERS, mail_text, wrap_notification_for_mixed_turn
from agents.plan_mode import as_the_approver_reads_it
from agents.team_protocol import TEAM_ADDRESS
from workflows import versions
from workflows.child_endings import LIVENESS_BACKOFF, liveness_interval
from workflows.contracts import AgentInput, MailMessage, StopRequest, TeamLink
from workflows.registry import ChildRegistry
from workflows.shell_task import TurnEndDeadline
from workflows.subagents import SubAgents
from workflows.team_member import (
    TeamCounters,
    answer_shutdown,
    answers_a_request,
    is_peer_address,
    send_to_peers,
)
from workflows.team_member import report as report_to_team

LATE_MAIL_CONTINUES = "late-mail-continues"
"""Patch id: an agent going on as its next generation for late mail tells its parent so, and
the parent waits for that generation's end (first release: only a sync child's skipped end
was sent, and a parent could finish before the answer to the mail came)."""

MAX_TURNS_KEEPS_ENDED = "max-turns-keeps-ended"
"""Patch id: an agent that spent its turns with mail waiting ends, reporting the unread
count. It went on as its next generation, which carried the spent turns, ended at once and
went on again: a new run every moment, each telling its parent another would follow."""


class AgentInbox:
    """What `AgentWorkflow` waits for, and reads, between its turns (over the state its
    `__init__` sets up, declared here)."""

    _stop: StopRequest | None
    _mailbox: list[MailMessage]
    _registry: ChildRegistry
    _subagents: SubAgents
    _team: TeamLink | None
    _team_counts: TeamCounters
    _shutdown_approved: bool

    def _on_phase(self, phase: str, tools: list[str]) -> None:
        raise NotImplementedError  # AgentWorkflow's: the phase the Web UI's details show

    def _mail_continues(self, inp: AgentInput, loop_end: str) -> bool:
        """Whether mail waiting at the end sends this agent on as its next generation (as
        `run` decides after the end: not a teammate, not a stopped agent, not one whose
        turns are spent)."""
        return (
            bool(self._mailbox)
            and inp.team is None
            and self._stop is None
            and not self._turns_spent_with_mail(loop_end)
            and versions.patched(LATE_MAIL_CONTINUES)
        )

    def _turns_spent_with_mail(self, loop_end: str) -> bool:
        # Asked only at such an end, so no other run records the marker.
        return (
            bool(self._mailbox)
            and loop_end == "max_turns"
            and versions.patched(MAX_TURNS_KEEPS_ENDED)
        )

    def _drain_inbox(self) -> list[Message]:
        notes = self._registry.drain()
        mail, self._mailbox = self._mailbox, []
        if notes and any(m.sender in PERSON_SENDERS for m in mail):
            notes = [wrap_notification_for_mixed_turn(n) for n in notes]
        texts = notes + [mail_text(m.sender, as_the_approver_reads_it(m.text)) for m in mail]
        return [Message.user_text(t) for t in texts]

    async def _wait_for_input(self) -> None:
        """Until mail, a notification, or a stop comes, or nothing is outstanding. Checks now
        and then that the children it waits for still run: one that was terminated, or died
        past its own reporting, cannot send its notification."""
        ctx = self._subagents.ctx
        base_s = ctx.config.agents.liveness_check_s if ctx else 120
        interval = timedelta(seconds=base_s)
        wait_s = ctx.config.agents.background_command_wait_s if ctx else 3600
        shells = TurnEndDeadline(self._registry, wait_s)
        checks = 0
        while True:
            timeout = shells.next_wait(interval)
            try:
                if timeout <= timedelta(0):
                    raise TimeoutError
                await workflow.wait_condition(
                    lambda: self._has_input() or not self._outstanding() or self._stop is not None,
                    timeout=timeout,
                )
                return
            except TimeoutError:
                if not await shells.stop_due():
                    await self._subagents.check_liveness()
                    checks += 1
                    # Asked only after a check, where the next wait's length is decided.
                    if versions.patched(LIVENESS_BACKOFF):
                        interval = timedelta(seconds=liveness_interval(base_s, checks))

    async def _team_send(self, me: str, fallback, call) -> ToolResultBlock:
        # The team as it is now: a teammate the lead added since this run began is in it.
        team = self._team
        assert team is not None
        if call.input.to == TEAM_ADDRESS or answers_a_request(self._team_counts, call.input.text):
            result, approved = await answer_shutdown(team, me, self._team_counts, call)
            if approved:
                self._stop = StopRequest(reason="shutdown request approved")
                self._shutdown_approved = True
            return result
        if is_peer_address(team, call.input.to):
            return await send_to_peers(team, me, self._team_counts, call)
        return await fallback(call)

    async def _idle(self, team: TeamLink, me: str) -> bool:
        """Wait for the next message; False when a stop came instead (the team is done)."""
        self._on_phase("waiting", [])
        await report_to_team(team, me, self._team_counts, True)
        await workflow.wait_condition(self._input_or_stop)
        if self._stop is not None:
            return False
        await report_to_team(team, me, self._team_counts, False)
        return True

    def _stopping(self) -> bool:
        return self._stop is not None

    def _has_input(self) -> bool:
        return bool(self._mailbox or self._registry.queue)

    def _input_or_stop(self) -> bool:
        return self._has_input() or self._stop is not None

    def _outstanding(self) -> bool:
        return self._registry.outstanding() or self._subagents.phases.waiting()
