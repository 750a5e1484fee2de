"""The one model <-> tool loop, shared by every workflow that runs an agent.

A plain async function over explicit state: the workflow that owns it supplies the fixed
setup (`LoopSetup`), the state to carry across continue-as-new (`LoopState`) and a few hooks
(stop flag, inbox, progress). Decisions are in `workflows/turns.py`; this module only awaits
activities and records what they return.
"""

from __future__ import annotations

from typing import Literal

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agents import compaction
from agents.messages import Message, merge_user_messages
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelResponse

from workflows.loop_model import compact_if_due, compacted_for, model_turn
from workflows.loop_tools import run_tools
from workflows.loop_types import LoopHooks, LoopSetup, LoopState
from workflows.turns import CONTEXT_FULL, CONTEXT_FULL_NOTE, add_usage

LoopEnd = Literal["end_turn", "max_turns", "stopped", "continue_as_new"]


MAX_TOKENS_RESUME = "max-tokens-resume"
"""An answer that max_tokens cut off (no tool call in it) is followed by a request to go on
from where it stopped, up to MAX_TOKENS_RESUMES times in a row, as Claude Code does. The cut
answer ended the agent: a parent got half a report as the whole of it."""
MAX_TOKENS_RESUMES = 3
RESUME_AFTER_MAX_TOKENS = (
    "Output token limit hit. Resume directly \u2014 no apology, no recap of what you were "
    "doing. Pick up mid-thought if that is where the cut happened. Break remaining work into "
    "smaller pieces."
)


def _resume_after_max_tokens(state: LoopState, response: ModelResponse) -> bool:
    """Whether the next turn asks the model to go on from an answer max_tokens cut off."""
    if response.stop_reason != "max_tokens":
        return False
    if state.max_tokens_resumes >= MAX_TOKENS_RESUMES:
        state.max_tokens_resumes = 0  # given up on this one; a later cut is a new one
        return False
    # Asked only by such an answer.
    if not versions.patched(MAX_TOKENS_RESUME):
        return False
    if state.max_tokens_resumes == 0:
        # The answer starts with this one, even with no text (cut in its thinking): not
        # with what an earlier turn said.
        state.last_text = response.message.text()
    state.max_tokens_resumes += 1
    state.resuming_cut = True
    state.pending.append(Message.user_text(RESUME_AFTER_MAX_TOKENS))
    return True


TEAMMATE_TURNS_PER_WAKE = "teammate-turns-per-wake"
"""Patch id: a teammate's `max_turns` counts from the mail that woke it, as each message
starts a new piece of work; counted over its life, a standing teammate ended out of turns
after 1,000 model calls (`hard_max_turns`), whatever it was asked (bench/team_history.py).
Asked only where the two counts differ."""


def turns_spent(setup: LoopSetup, state: LoopState, ahead: int = 0) -> bool:
    """Whether the agent's turns are spent: `max_turns` model calls in its run (a
    teammate's: since the mail that last woke it); `ahead`: once that many more are."""
    turns = state.turns + ahead
    if turns < setup.max_turns:
        return False
    return not (
        setup.turns_per_wake
        and turns - state.wake_turns < setup.max_turns
        and versions.patched(TEAMMATE_TURNS_PER_WAKE)
    )


async def run_agent_loop(setup: LoopSetup, state: LoopState, hooks: LoopHooks) -> LoopEnd:
    """Turns until the model ends its turn, `max_turns` model calls are spent, or a stop."""
    while True:
        if hooks.stop_requested():
            return "stopped"
        if turns_spent(setup, state):
            return "max_turns"
        if hooks.continue_as_new():
            return "continue_as_new"
        if await compact_if_due(setup, state, hooks) and hooks.stop_requested():
            return "stopped"  # it came during the summary: no model call after a stop
        state.pending.extend(hooks.drain_inbox())
        state.pending.extend(Message.user_text(text) for text in hooks.attachments())
        hooks.on_phase("calling_model", [])
        ephemeral = hooks.ephemeral()
        try:
            response = await model_turn(setup, state, ephemeral)
        except ApplicationError as e:
            if not await compacted_for(e, setup, state, hooks):
                raise
            # Sent again even if a stop came during the summary: the mail in it is drained
            # already, and a stop takes effect at the next turn boundary, as during any call.
            response = await model_turn(setup, state, ephemeral)
        hooks.record([*merge_user_messages(state.pending), response.message])
        state.turns += 1
        state.transcript = response.transcript
        state.pending = []
        state.result_refs = {}
        state.result_images = {}
        state.unseen_stamps = []
        if state.resuming_cut:  # going on after a cut: the answer is the cut text and this
            state.last_text += response.message.text()
            state.resuming_cut = False
        elif text := response.message.text():
            state.last_text = text
        if response.stop_reason != "max_tokens":
            state.max_tokens_resumes = 0
        state.context_tokens = compaction.context_tokens(response.usage)
        uses = len(response.message.tool_uses())
        state.usage = add_usage(state.usage, response.usage, uses, hooks.started_at())
        if uses == 0:
            if response.stop_reason == CONTEXT_FULL:  # no room to go on, as after max_tokens
                state.last_text += CONTEXT_FULL_NOTE
            if _resume_after_max_tokens(state, response):
                continue
            if hooks.has_input():
                continue
            if hooks.outstanding() and hooks.wait_for_input is not None:
                # Background sub-agents are still out: their notifications start new turns.
                hooks.on_phase("waiting", [])
                await hooks.wait_for_input()
                continue
            # At the last allowed turn another turn cannot answer what the wait brings.
            if not turns_spent(setup, state) and hooks.settle is not None and await hooks.settle():
                continue  # a sub-agent that had told its end sent another, or mail came
            return "end_turn"
        state.round_tool_use_ids = [b.id for b in response.message.tool_uses()]
        results = await run_tools(setup, state, response, hooks)
        state.pending = [Message(role="user", content=results)]
