"""A teammate's side of a team (R69-R74): peer messages, the shared task list, and the
reports that let the team know when every member has gone quiet.

Peer mail is a `send_message` signal straight to the peer's workflow (durable, ordered,
drained at its next turn boundary). Every message sent inside a team carries an id starting
with `team:`, so each member can count what it sent and received; the team compares the
counts to tell "all idle, nothing in flight" from "idle, but a message is on its way".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents.control_tools import SendMessageInput
from agents.messages import ToolResultBlock
from agents.team_protocol import (
    TEAM_ADDRESS,
    parse_shutdown_response,
    protocol_type,
    response_request_id,
    shutdown_request_id,
    with_request_id,
)
from agents.team_tasks import TASK_CREATE_TOOL, TASK_GET_TOOL, TASK_LIST_TOOL, TASK_UPDATE_TOOL

with workflow.unsafe.imports_passed_through():
    from activities.team_control import TeamControl, TeamTaskCall, TeamTaskReply

from workflows import versions
from workflows.contracts import AgentUsage, MailMessage, TeamLink
from workflows.pattern_contracts import MemberEnd, MemberReport, ShutdownAnswer
from workflows.signals import signal_workflow
from workflows.turns import ValidCall, error_result

TEAM_MAIL_PREFIX = "team:"
PEER_SHUTDOWN_ANSWERED = "peer-shutdown-answered"
"""Patch id: a teammate's answer to a shutdown request another teammate sent (the lead,
mostly) reaches that teammate, and an answer sent to it by name counts as the answer. The
team alone heard answers, and ignored ids it had not issued."""
TEAM_ANSWER_BY_NAME = "team-answer-by-name"
"""Patch id: an answer to the team's own shutdown request sent to a teammate by name (not to
"team") counts as the answer; it went to that teammate as mail, and the request waited."""
NO_STRUCTURED_BROADCAST = "no-structured-broadcast"
"""Patch id: a protocol message to "*" is refused, as Claude Code refuses it. An answer
carries one asker's request id, and ids repeat across members (each member's first plan is
`plan-1`): a lead's approval sent to everyone approved every member's waiting plan."""
TEAM_TOOL_OPS = {
    "create": TASK_CREATE_TOOL,
    "get": TASK_GET_TOOL,
    "list": TASK_LIST_TOOL,
    "update": TASK_UPDATE_TOOL,
}
TASK_OP_OPTIONS = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5),
}


class TeamCounters(BaseModel):
    """A member's cumulative team-mail counts and open shutdown requests (carried across
    continue-as-new)."""

    sent_to: dict[str, int] = Field(default_factory=dict)
    received: int = 0
    shutdown_requests: list[str] = Field(default_factory=list)
    shutdown_askers: dict[str, str] = Field(default_factory=dict)
    """Open requests a teammate sent (request id -> its name); the others are the team's."""


def on_team_mail(counters: TeamCounters, message: MailMessage) -> None:
    counters.received += 1
    if request_id := shutdown_request_id(message.text):
        counters.shutdown_requests.append(request_id)
        if message.sender != TEAM_ADDRESS:
            counters.shutdown_askers[request_id] = message.sender


def answers_a_request(counters: TeamCounters, text: str) -> bool:
    """A shutdown_response to an open request, sent by name: the answer, as if sent to
    "team" (one that answers no open request is mail like any other)."""
    request_id = response_request_id(text)
    if request_id in counters.shutdown_askers:
        return versions.patched(PEER_SHUTDOWN_ANSWERED)
    # The team's own request (no teammate asked it); asked only for such an answer.
    return request_id in counters.shutdown_requests and versions.patched(TEAM_ANSWER_BY_NAME)


async def answer_shutdown(
    team: TeamLink, me: str, counters: TeamCounters, call: ValidCall
) -> tuple[ToolResultBlock, bool]:
    """A teammate's SendMessage to "team": its answer to a shutdown request (R68). Returns
    the tool result and whether the member now stops (approved)."""
    answer = parse_shutdown_response(call.input.text, counters.shutdown_requests)
    if isinstance(answer, str):
        return error_result(call.block, answer), False
    try:
        await signal_workflow(
            team.workflow_id,
            "shutdown_response",
            ShutdownAnswer(
                name=me, request_id=answer.request_id, approve=answer.approve, reason=answer.reason
            ),
        )
    except ApplicationError:
        workflow.logger.info("team %s ended before %s answered", team.workflow_id, me)
    counters.shutdown_requests.remove(answer.request_id)
    asker = counters.shutdown_askers.pop(answer.request_id, None)
    if asker is not None and versions.patched(PEER_SHUTDOWN_ANSWERED):
        # R72: the responder echoes the id to whoever asked (the lead, mostly).
        mail = MailMessage(
            text=call.input.text,
            sender=me,
            id=f"{TEAM_MAIL_PREFIX}{workflow.info().workflow_id}:{call.block.id}",
        )
        try:
            await signal_workflow(member_workflow_id(team, asker), "send_message", mail)
            counters.sent_to[asker] = counters.sent_to.get(asker, 0) + 1
        except ApplicationError:
            workflow.logger.info("%s left the team before %s answered", asker, me)
    text = (
        "Shutdown approved: you stop when this turn ends."
        if answer.approve
        else "Shutdown declined; the team has your reason. Carry on."
    )
    return ToolResultBlock(tool_use_id=call.block.id, content=text), answer.approve


def member_workflow_id(team: TeamLink, name: str) -> str:
    return f"{team.workflow_id}/{name}"


def is_team_mail(message: MailMessage) -> bool:
    return (message.id or "").startswith(TEAM_MAIL_PREFIX)


def is_peer_address(team: TeamLink, to: str) -> bool:
    return to == "*" or to in team.members


async def send_to_peers(
    team: TeamLink, me: str, counters: TeamCounters, call: ValidCall
) -> ToolResultBlock:
    inp: SendMessageInput = call.input  # type: ignore[assignment]
    if inp.to == me:
        return error_result(call.block, "That is you; send the message to a teammate.")
    kind = protocol_type(inp.text) if inp.to == "*" else None
    if kind is not None and versions.patched(NO_STRUCTURED_BROADCAST):
        return error_result(
            call.block,
            f'A {kind} cannot be broadcast (to: "*"): send it to the one it is for, by name '
            '(a shutdown_response to "team" or to the teammate that asked).',
        )
    targets = [m for m in team.members if m != me] if inp.to == "*" else [inp.to]
    if not targets:
        # It read " has left the team; nobody read it." (a user test, 2026-12-07). No
        # command is sent either way.
        return error_result(
            call.block,
            'You have no teammates yet: a broadcast (to: "*") reaches the team\'s other '
            "members, and there are none. Nobody read it.",
        )
    # A shutdown request needs an id its answer can echo (R72); the asker gives a reason only.
    asked = with_request_id(inp.text, f"shutdown-{me}-{call.block.id}")
    mail = MailMessage(
        text=asked or inp.text,
        sender=me,
        summary=inp.summary,
        id=f"{TEAM_MAIL_PREFIX}{workflow.info().workflow_id}:{call.block.id}",
    )
    delivered, gone = [], []
    for target in targets:
        try:
            await signal_workflow(member_workflow_id(team, target), "send_message", mail)
        except ApplicationError:
            gone.append(target)
            continue
        counters.sent_to[target] = counters.sent_to.get(target, 0) + 1
        delivered.append(target)
    if not delivered:
        return error_result(call.block, f"{', '.join(gone)} has left the team; nobody read it.")
    text = f"Message queued for delivery to {', '.join(delivered)} at its next tool round."
    if gone:
        text += f" Not delivered to {', '.join(gone)}: they have left the team."
    return ToolResultBlock(tool_use_id=call.block.id, content=text)


async def task_tool(team: TeamLink, me: str, op: str, call: ValidCall) -> ToolResultBlock:
    """TaskCreate / TaskGet / TaskList / TaskUpdate against the team's workflow."""
    task_call = TeamTaskCall(
        team_workflow_id=team.workflow_id,
        op=op,  # type: ignore[arg-type]
        args=call.input.model_dump(mode="json"),
        caller=me,
        update_id=f"{workflow.info().workflow_id}:{call.block.id}",
    )
    return await team_reply(call, "The task list", TeamControl.task_op, task_call)


async def team_reply(call: ValidCall, what: str, method: Any, arg: BaseModel) -> ToolResultBlock:
    """The tool result a `TeamControl` activity answers: the team's reply, or (the activity
    failed) that `what` could not be reached."""
    try:
        reply: TeamTaskReply = await workflow.execute_activity_method(
            method, arg, **TASK_OP_OPTIONS
        )
    except ActivityError as e:
        if is_cancelled_exception(e):
            raise
        return error_result(call.block, f"{what} could not be reached: {e.cause or e}")
    return ToolResultBlock(tool_use_id=call.block.id, content=reply.text, is_error=not reply.ok)


async def report(
    team: TeamLink,
    me: str,
    counters: TeamCounters,
    idle: bool,
    usage: AgentUsage | None = None,
    stopped: bool = False,
    end_reason: str = "",
    end: MemberEnd | None = None,
) -> None:
    """Tell the team this member is idle (or working again), with its `usage` at its end (and
    whether a stop ended it); a team that has ended is fine."""
    state = MemberReport(
        name=me,
        idle=idle,
        sent_to=dict(counters.sent_to),
        received=counters.received,
        usage=usage,
        stopped=stopped,
        end_reason=end_reason,
        end=end,
    )
    try:
        await signal_workflow(team.workflow_id, "member_state", state)
    except ApplicationError:
        workflow.logger.info("team %s has ended; report from %s dropped", team.workflow_id, me)
