"""The coordinator's phase rules at run time (R59): claims on files, and worker spawns that
wait, durably, until the files they need are free.

A waiting spawn is a workflow task blocked on a condition over the claim table, which lives
in the carried sub-agent registry; the agent does not continue as new while one waits, so
no waiting spawn is ever lost with a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from agents.agent_tool import AgentToolInput
from agents.builtin.coordinator import unsynthesized_phrase
from agents.file_claims import (
    Claim,
    ClaimTable,
    blockers,
    claim_problem,
    glob_problem,
    normalize_claim_path,
)
from agents.messages import ToolResultBlock
from agents.tool_filter import WRITE_TOOLS
from workflows import versions
from workflows.contracts import AgentInput, ChildSummary, QueuedWorker
from workflows.registry import ChildRegistry
from workflows.signals import cancel_workflow

with workflow.unsafe.imports_passed_through():
    from activities.scratchpad import ScratchpadRequest, create_scratchpad


QUEUED_START_OUTSTANDING = "queued-start-outstanding"
END_FREEZES_QUEUE = "end-freezes-queue"
"""Patch id: a queued worker whose files come free while its agent is ending stays queued
(and is reported unstarted); it started, after the end had listed what to stop."""
ENDING_FREEZES_QUEUE = "ending-freezes-queue"
"""Patch id: a queued worker whose files come free once its agent takes no further turn (out
of turns, stopped, killed) stays queued, and is reported unstarted. It started, and the end
killed it 0.2 s later: a coordinator out of turns woke for the end that freed the files, and
ended (a user test, 2026-12-07)."""
CLAIM_GLOBS_REFUSED = "claim-globs-refused"
"""Patch id: a worker spawn whose `files` holds a pattern (`src/*.py`) is refused, for the
model to list paths: taken as a path, it matched no file."""
STOP_STARTING_WORKER = "stop-starting-worker"
"""Patch id: TaskStop of a queued worker that is starting stops it once it has started (first
release: "No task found", and the worker ran)."""


class PhaseGate:
    def __init__(self, registry: ChildRegistry) -> None:
        self.registry = registry
        self._starts: dict[str, asyncio.Task] = {}
        self.starting: set[str] = set()
        """Queued workers that left the queue and whose child workflow is not registered yet:
        outstanding all the same, or the agent could end its turn (and its run) between the
        two and the worker would never start."""
        self.max_running = 16
        """Set from the agent's config: a queued worker also waits for a free slot."""
        self.stop_at_start: set[str] = set()
        """Starting workers that TaskStop reached before their child workflow was registered:
        each is stopped as soon as it is."""
        self.closing = False
        """The agent is ending: no queued worker starts any more."""
        self.ending: Callable[[], bool] = lambda: False
        """Whether the agent will take no further turn (set by it): a worker started now
        would be killed by its end before anyone read a word of it."""

    @property
    def table(self) -> ClaimTable:
        return self.registry.claims

    def problem(self, inp: AgentToolInput, root: str) -> str | None:
        """What makes a worker spawn unacceptable, for the coordinator to fix."""
        if phrase := unsynthesized_phrase(inp.prompt):
            return (
                f'The worker prompt says "{phrase}", but workers cannot see your '
                "conversation or earlier workers' results. Write the findings themselves "
                "into the prompt: file paths, line numbers, what exactly to change."
            )
        files = getattr(inp, "files", [])
        if problem := claim_problem(getattr(inp, "phase", "research"), files, root):
            return problem
        # Asked only of a spawn that declares one, so no other run records the marker.
        if (problem := glob_problem(files)) and versions.patched(CLAIM_GLOBS_REFUSED):
            return problem
        return None

    def claim(self, agent_id: str, inp: AgentToolInput, root: str, agent_type: str) -> Claim:
        files = [normalize_claim_path(root, f) for f in getattr(inp, "files", [])]
        return Claim(
            agent_id=agent_id,
            phase=getattr(inp, "phase", "research"),
            files=tuple(sorted({f for f in files if f})),
            label=inp.name or inp.description,
            name=inp.name,
            agent_type=agent_type,
            description=inp.description,
        )

    def active(self) -> list[Claim]:
        """Claims of workers still running (or being started)."""
        tasks = self.registry.tasks
        return [
            c
            for agent_id, c in self.table.held.items()
            if agent_id not in tasks or tasks[agent_id].status == "running"
        ]

    def waits(self, claim: Claim) -> list[tuple[Claim, list[str]]]:
        """Whom `claim` waits for: running workers, and queued ones ahead of it (first come,
        first served, so a stream of small changes cannot starve a queued one)."""
        ahead = []
        for queued in self.table.waiting:
            if queued.agent_id == claim.agent_id:
                break
            ahead.append(queued)
        return blockers(claim, [*self.active(), *ahead])

    def claim_of(self, agent_id: str) -> Claim | None:
        return self.table.held.get(agent_id)

    def hold(self, claim: Claim) -> None:
        self.table.held[claim.agent_id] = claim

    def release(self, agent_id: str) -> None:
        self.table.held.pop(agent_id, None)

    def drop_waiting(self) -> list[Claim]:
        """The agent is ending: spawns still waiting for their files will never start."""
        dropped, self.table.waiting = self.table.waiting, []
        return dropped

    def resume_conflicts(self, agent_id: str) -> list[tuple[Claim, list[str]]]:
        """Whom a worker being continued (SendMessage) would collide with (R59)."""
        claim = self.table.held.get(agent_id)
        if claim is None:
            return []
        others = [c for c in self.active() if c.agent_id != agent_id]
        return blockers(claim, [*others, *self.table.waiting])

    def queued_view(self) -> list[QueuedWorker]:
        """The spawns waiting for their files, and whom each waits for (the `status` query:
        `outlast show` did not list them, a user test, 2026-12-06)."""
        return [
            QueuedWorker(
                agent_id=c.agent_id,
                label=c.label,
                phase=c.phase,
                files=list(c.files),
                waits_for=[b.label or b.agent_id for b, _ in self.waits(c)],
            )
            for c in self.table.waiting
        ]

    def queued_summaries(self) -> list[ChildSummary]:
        """The spawns waiting for their files as the `tasks` query lists them: with no
        workflow (its id is ""), and no run yet. A raw client's `tasks` left them out, so a
        worker the coordinator had accepted was nowhere (a user test, 2026-12-07)."""
        return [
            ChildSummary(
                agent_id=c.agent_id,
                name=c.name,
                agent_type=c.agent_type,
                description=c.description or c.label,
                workflow_id="",
                status="queued",
                mode="background",
                run_generation=0,
            )
            for c in self.table.waiting
        ]

    def waiting(self) -> bool:
        return bool(self.table.waiting or self.starting)

    def enqueue(self, claim: Claim, launch: Callable[[], Awaitable[ToolResultBlock]]) -> None:
        self.table.waiting.append(claim)
        self._starts[claim.agent_id] = asyncio.create_task(self._start_when_free(claim, launch))

    def cancel(self, target: str) -> Claim | None:
        """Take a queued spawn off the queue (TaskStop before it started)."""
        for claim in self.table.waiting:
            if target in (claim.agent_id, claim.label):
                self.table.waiting.remove(claim)
                return claim
        return None

    def starting_claim(self, target: str) -> Claim | None:
        """The claim of the worker `target` (id or name) if it is starting: off the queue,
        not registered yet."""
        target = target.strip()
        for agent_id in sorted(self.starting):
            claim = self.table.held.get(agent_id)
            if claim is not None and target in (claim.agent_id, claim.label):
                return claim
        return None

    async def _start_when_free(
        self, claim: Claim, launch: Callable[[], Awaitable[ToolResultBlock]]
    ) -> None:
        def queued() -> bool:
            return any(c.agent_id == claim.agent_id for c in self.table.waiting)

        def may_start() -> bool:
            # One that is starting takes its slot already (empty in runs from before the patch).
            running = len(self.registry.running()) + len(self.starting)
            return not self.waits(claim) and running < self.max_running

        await workflow.wait_condition(lambda: not queued() or may_start())
        if not queued():
            return  # stopped before it started
        # Asked only by a worker whose files came free as its agent ends.
        if self.closing and versions.patched(END_FREEZES_QUEUE):
            return  # left queued: the end reports it unstarted
        # Asked only then, as the one above.
        if self.ending() and versions.patched(ENDING_FREEZES_QUEUE):
            return
        self.table.waiting = [c for c in self.table.waiting if c.agent_id != claim.agent_id]
        self.hold(claim)
        workflow.logger.info("queued worker %s starts: its files are free", claim.agent_id)
        # Runs recorded before this patch did not count a starting worker as outstanding
        # (and could end before it started): replay them that way.
        if versions.patched(QUEUED_START_OUTSTANDING):
            self.starting.add(claim.agent_id)
        try:
            result = await launch()
        finally:
            self.starting.discard(claim.agent_id)
        if claim.agent_id in self.stop_at_start:
            self.stop_at_start.discard(claim.agent_id)
            await self._stop_started(claim.agent_id)
        if result.is_error:
            self.table.held.pop(claim.agent_id, None)
            self.registry.queue.append(
                f"Queued worker {claim.label or claim.agent_id} ({claim.agent_id}) could not "
                f"start: {result.content}"
            )

    async def _stop_started(self, agent_id: str) -> None:
        task = self.registry.tasks.get(agent_id)
        if task is not None and task.status == "running":
            task.stop_requested = True
            await cancel_workflow(task.workflow_id)


async def create_session_scratchpad(inp: AgentInput) -> str:
    """R63: the coordinator's scratchpad, made once on the host that holds the checkout."""
    return await workflow.execute_activity(
        create_scratchpad,
        ScratchpadRequest(session_id=inp.lineage.session_id or workflow.info().workflow_id),
        task_queue=inp.workspace.host_queue,
        summary="create the session's scratchpad",
        start_to_close_timeout=timedelta(seconds=30),
        retry_policy=RetryPolicy(maximum_attempts=5),
    )


def phase_capabilities(
    tools: list[str], claim: Claim | None, scratchpad: str | None
) -> tuple[list[str], list[str] | None]:
    """What a worker may do follows from its phase: a research or verification worker reads
    the repository (its shell in a read-only sandbox) and writes only to the scratchpad; an
    implementation worker changes only the files it declared. Returns the tool list and the
    write scope to run it with."""
    if claim is not None and claim.phase == "implementation":
        return tools, list(claim.files)
    if scratchpad is None:
        return [t for t in tools if t not in WRITE_TOOLS], None
    return tools, []
