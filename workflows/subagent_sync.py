"""A sync sub-agent's wait (R20-R22): its result as the tool result, or the move to the
background on request or at the auto-background deadline. A mixin of `SubAgents`, over the
state its `__init__` sets up (declared here)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agents.messages import ToolResultBlock
from agents.notifications import (
    CALLER_STOPPED,
    backgrounded_text,
    summary_for,
    sync_result_text,
    with_note,
)
from workflows import versions
from workflows.child_timers import ChildTimers
from workflows.contracts import AgentNotification, StopRequest
from workflows.registry import ChildRegistry, ChildTask, delivered_text, ending_note, figures
from workflows.signals import cancel_workflow, signal_workflow
from workflows.turns import ValidCall, error_result

CLOSED_CHILD_STAYS_SYNC = "closed-child-stays-sync"
"""Patch id: a sync child found closed when the parent moves it to the background delivers
its end as the tool result (first release: backgrounded all the same)."""


STOP_REACHES_STARTING_CHILD = "stop-reaches-starting-child"
"""Patch id: a sync sub-agent that starts while its parent is stopping is stopped too. The
parent's stop reached only the sync children already running, so one it started that turn,
or whose start was under way, ran its whole course before the parent could stop."""


class SyncChildren:
    registry: ChildRegistry
    ctx: object
    _timers: ChildTimers
    stopping: Callable[[], bool]
    """Whether the parent has been asked to stop (AgentWorkflow's `stop`)."""

    async def _end_from_handle(self, task: ChildTask, generation: int, handle) -> AgentNotification:
        raise NotImplementedError  # SubAgents'

    def _watch(self, task: ChildTask, handle) -> None:
        raise NotImplementedError  # SubAgents'

    async def _wait_sync(self, call: ValidCall, task: ChildTask, handle) -> ToolResultBlock:
        """Wait for the child, or move it to the background on request or at the auto-
        background deadline. Both timers start with the child (absolute deadlines)."""
        cfg = self.ctx.config.agents  # type: ignore[union-attr]
        started = workflow.now()
        due = {"auto": False}

        def settled() -> bool:
            return task.end is not None or handle.done()

        def hint() -> None:
            task.background_hint = not settled()  # R21: the UI may offer to background it

        def auto() -> None:
            due["auto"] = True

        if cfg.background_hint_ms:
            after = timedelta(milliseconds=cfg.background_hint_ms)
            self._timers.start("hint", task.agent_id, after, hint)
        if cfg.auto_background_ms:
            after = timedelta(milliseconds=cfg.auto_background_ms)
            self._timers.start("auto", task.agent_id, after, auto)
        try:
            # Asked only then, so no other run records the patch. In the try: a kill that
            # comes meanwhile still cancels the child (R26).
            if self.stopping() and versions.patched(STOP_REACHES_STARTING_CHILD):
                with contextlib.suppress(ApplicationError):  # it has ended already
                    stop = StopRequest(reason=CALLER_STOPPED)
                    await signal_workflow(task.workflow_id, "stop", stop)
            await workflow.wait_condition(
                lambda: settled() or task.background_requested or due["auto"]
            )
        except asyncio.CancelledError:
            # R26: a sync child shares its parent's fate; ABANDON alone would orphan it.
            # Marked first (state only): the ended parent's view reads it `killed`, as the
            # end it tells a closed workflow says.
            task.stop_requested = True
            await cancel_workflow(task.workflow_id)
            raise
        finally:
            self._timers.stop(task.agent_id)
        if settled():
            return await self._sync_result(call, task, handle)
        return await self._to_background(call, task, handle, started)

    async def _sync_result(self, call: ValidCall, task: ChildTask, handle) -> ToolResultBlock:
        if task.end is None:
            self.registry.record_end(await self._end_from_handle(task, task.run_generation, handle))
        end = task.end
        assert end is not None
        note = ending_note(task, end)
        self.registry.mark_delivered(task)
        if end.status == "completed" or end.stopped:
            # A stopped child's answer so far is still its answer, with the stop said first.
            kept = (end.worktree_path, end.worktree_branch or "") if end.worktree_path else None
            said = with_note(note, delivered_text(end))
            text = sync_result_text(
                said, task.agent_id, task.agent_type, figures(end.usage), kept, task.name
            )
            return ToolResultBlock(tool_use_id=call.block.id, content=text)
        summary = summary_for(end.status, task.description, end.error)
        return error_result(call.block, f"{summary}. {note}" if note else summary)

    async def _to_background(self, call, task: ChildTask, handle, started) -> ToolResultBlock:
        """R22: the running child is not restarted; its end comes as a notification."""
        task.mode = "background"
        try:
            await signal_workflow(task.workflow_id, "set_backgrounded")
        except ApplicationError:
            # The child closed meanwhile. A sync child that completed reports its end only
            # through its result: backgrounded, that end would rest on the watcher alone, which
            # a continue-as-new of this run drops (the liveness check would find it minutes
            # later). Its end is in this run's history, so it goes back as the tool result,
            # unless its notification came first and is already queued.
            if task.run_generation not in task.notified and versions.patched(
                CLOSED_CHILD_STAYS_SYNC
            ):
                task.mode = "sync"
                return await self._sync_result(call, task, handle)
        self._watch(task, handle)
        if task.background_requested:
            reason = "on request"
        else:
            seconds = (workflow.now() - started).total_seconds()
            reason = f"automatically, after {seconds:.0f} s"
        return ToolResultBlock(
            tool_use_id=call.block.id,
            content=backgrounded_text(task.agent_id, task.description, reason),
        )
