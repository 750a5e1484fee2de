"""The agent loop's model call (workflows/agent_loop.py), and the compaction that keeps its
conversation within the window (agents/compaction.py): before a call that would reach the
line, or after one the API refused as too long."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from agents import compaction
from agents.activity_summaries import model_summary
from agents.messages import merge_user_messages
from agents.paths import normalize_path
from workflows import versions

with workflow.unsafe.imports_passed_through():
    from activities.llm import ModelRequest, ModelResponse, compact
    from activities.model_setup import setup_ref_of

from workflows.loop_types import LoopHooks, LoopSetup, LoopState
from workflows.model_call import call_the_model, model_activity_options
from workflows.turns import add_usage, by_reference

AUTO_COMPACT = "auto-compact"
"""Before a model call whose conversation has reached `compaction.compact_at`, the model sums
it up and the agent goes on from the summary (agents/compaction.py). The call went as it was,
and the API refused it as too long once the window was full: the agent failed."""
COMPACT_WHEN_TOO_LONG = "compact-when-too-long"
"""A model call the API refuses as too long for the window is sent again after a compaction
(once; the estimate that decides `auto-compact` beforehand can fall short). The refusal
failed the agent."""


async def model_turn(setup: LoopSetup, state: LoopState, ephemeral: list[str]) -> ModelResponse:
    """The turn's model call: the conversation by reference, what waits appended to it."""
    append, refs = by_reference(merge_user_messages(state.pending), state.result_refs)
    known = state.model_setup_ref
    request = setup.request.model_copy(
        update={
            "setup_ref": known if known == setup_ref_of(setup.request.setup()) else None,
            "transcript": state.transcript,
            "append": append,
            "append_refs": refs,
            "append_images": dict(state.result_images),
            "ephemeral": ephemeral,
        }
    )
    response = await _model_call(
        setup, state, request, model_summary(setup.label, state.turns + 1, request.model)
    )
    if response.setup_ref is not None:
        state.model_setup_ref = response.setup_ref
    return response


async def _model_call(
    setup: LoopSetup,
    state: LoopState,
    request: ModelRequest,
    summary: str,
    compacting: bool = False,
) -> ModelResponse:
    try:
        if compacting:
            # Always regular: a summary of a full window takes long (a local try under
            # `auto` would run over and be paid twice), and says nothing of how long the
            # agent's next call will take.
            return await workflow.execute_activity(
                compact, request, summary=summary, **model_activity_options(setup.config)
            )
        response, state.model_calls = await call_the_model(
            setup.config, request, summary, state.model_calls
        )
        return response
    # A local call's failure reaches the workflow bare, a regular one's wrapped: the agent
    # fails the same way after either.
    except (ActivityError, ApplicationError) as e:
        if is_cancelled_exception(e):
            raise
        failure = e.cause if isinstance(e, ActivityError) else e
        cause = failure if isinstance(failure, ApplicationError) else None
        raise ApplicationError(
            f"Model call failed: {cause.message if cause else e}",
            *(cause.details if cause else ()),
            type=cause.type if cause and cause.type else "ModelCallFailed",
            non_retryable=True,
        ) from e


async def _compact(
    setup: LoopSetup, state: LoopState, hooks: LoopHooks, tokens: int | None
) -> None:
    """Sum the conversation up and go on from the summary; as it was if no summary came.
    A failed call is the agent's failure, as any model call's: it would be the next one's."""
    request = setup.request.model_copy(
        update={"transcript": state.transcript, "shared_prefix_breakpoint": False}
    )
    size = f"about {tokens:,} tokens" if tokens is not None else "a call too long for the window"
    summary = f"{setup.label}: compact {size}: model {request.model}"
    response = await _model_call(setup, state, request, summary, compacting=True)
    state.usage = add_usage(state.usage, response.usage, 0, hooks.started_at())
    if response.transcript == state.transcript:
        state.compact_failures += 1
        workflow.logger.warning("compaction gave no summary (%d in a row)", state.compact_failures)
        return
    state.compacted.append(state.transcript)
    state.transcript = response.transcript
    state.context_tokens = state.compact_failures = 0
    # The model no longer has the files it read (Claude Code forgets them too): an edit of
    # one needs a Read first, but for those whose results it is about to be sent.
    # The plan file stays known, so plan mode's reminder does not ask for a new one.
    keep = set(state.unseen_stamps)
    if state.plan_file:
        keep.add(normalize_path(state.cwd, state.plan_file))
    state.read_state = {p: s for p, s in state.read_state.items() if p in keep}
    # The plan-mode instructions went with the old conversation: the next turn has them whole.
    state.plan_turns = state.plan_attachments = 0
    # The `transcript` query's messages stay this run's, in the order they came: the summary
    # is the `llm.compact` activity's result, in history and the Web UI.


def _waiting(state: LoopState) -> int:
    """About how many tokens what waits for the next model call adds to it."""
    media = [i.is_document for images in state.result_images.values() for i in images]
    return compaction.estimate_tokens(state.pending, media)


async def compacted_for(
    error: ApplicationError, setup: LoopSetup, state: LoopState, hooks: LoopHooks
) -> bool:
    """After a call refused as too long for the window (the estimate fell short: a fork's or
    a resumed agent's first call, a big mail), whether a summary was made to send it again."""
    details = error.details[0] if error.details else None
    limit = compaction.compact_at(setup.config.model, setup.request.max_tokens)
    if (
        not compaction.too_long(error.type, details)
        or limit is None  # compaction is off: the agent fails, as it was told
        or state.transcript.length == 0
        or state.compact_failures >= compaction.MAX_FAILURES
        # What waits goes whole with the call: over the line by itself, no summary helps.
        or _waiting(state) >= limit
        # Asked only after such a refusal, which ended the agent before.
        or not versions.patched(COMPACT_WHEN_TOO_LONG)
    ):
        return False
    before = state.transcript
    await _compact(setup, state, hooks, None)
    return state.transcript != before


async def compact_if_due(setup: LoopSetup, state: LoopState, hooks: LoopHooks) -> bool:
    """Before a model call: sum the conversation up if it has reached the line; True if a
    summary was asked for."""
    # The conversation as the next call would send it, about: the last call's, and what is
    # waiting to go with the next (tool results, most of all).
    waiting = _waiting(state)
    settings, max_tokens = setup.config.model, setup.request.max_tokens
    # Asked only when the conversation has grown that far.
    if not (
        compaction.due(state.context_tokens, waiting, state.compact_failures, settings, max_tokens)
        and versions.patched(AUTO_COMPACT)
    ):
        return False
    hooks.on_phase("calling_model", [])
    await _compact(setup, state, hooks, state.context_tokens + waiting)
    return True
