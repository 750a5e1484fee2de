"""Words for a sub-agent whose child workflow is still starting: kept until it is in the
registry, then applied to it.

Between the Agent call and the start's resolution a child is in no registry entry, so a
`background` signal found "no synchronous sub-agent running" and was refused, and an
`agent_notification` from the child found no task and was dropped. Both come together with
the start's resolution when the parent's worker was away (the Python SDK runs a workflow
task's signal handlers before the code its resolutions wake), which is when a person, who saw
the child in the Web UI, signals. A dropped notification that `continues` lost that run's
answer: the parent waited for the next one instead.
"""

from __future__ import annotations

from workflows import versions
from workflows.contracts import AgentNotification, BackgroundRequest
from workflows.registry import ChildRegistry, ChildTask

BACKGROUND_REACHES_STARTING_CHILD = "background-reaches-starting-child"
"""Patch id: a `background` signal for a sync sub-agent still starting moves it once it runs
(refused before: "no synchronous sub-agent is running")."""

NOTICE_BEFORE_START_KEPT = "notice-before-start-kept"
"""Patch id: a sub-agent's notification that comes before its start has resolved is kept
for it (dropped before)."""


class StartingChildren:
    """Not carried: a run continues as new only between turns, with no start under way."""

    def __init__(self) -> None:
        self._sync: dict[str, str | None] = {}
        """Sync children between the Agent call and the registry: agent id -> name."""
        self._background: dict[str, bool] = {}
        """Agent id -> whether the request named it (not one for every sync child)."""
        self._ends: list[AgentNotification] = []

    def begin(self, agent_id: str, name: str | None) -> None:
        """A sync child's start is under way: a `background` naming it is kept for it."""
        self._sync[agent_id] = name

    def hold_background(self, request: BackgroundRequest) -> bool:
        """Keep `request` for the sync children it names that are starting; False if none."""
        named = [
            agent_id
            for agent_id, name in self._sync.items()
            if request.agent_id in (None, agent_id, name)
        ]
        # Asked only where one is starting, so no other signal records a marker.
        if not named or not versions.patched(BACKGROUND_REACHES_STARTING_CHILD):
            return False
        for agent_id in named:
            self._background[agent_id] = self._background.get(agent_id, False) or (
                request.agent_id is not None
            )
        return True

    def hold_end(self, end: AgentNotification, starting: set[str]) -> bool:
        """Keep `end` if its child is starting (`starting`: the caller has found it in no
        registry entry)."""
        # Asked only for such an end, so no other notification records a marker.
        if end.agent_id not in starting or not versions.patched(NOTICE_BEFORE_START_KEPT):
            return False
        self._ends.append(end)
        return True

    def apply(self, task: ChildTask, registry: ChildRegistry) -> None:
        """`task` has just been registered: what was kept for it reaches it now."""
        if self._background.pop(task.agent_id, None) is not None:
            task.background_requested = True
        for end in [e for e in self._ends if e.agent_id == task.agent_id]:
            registry.record_end(end)
        self.forget(task.agent_id)

    def forget(self, agent_id: str) -> bool:
        """Its start is over, registered or failed: nothing more is kept for it. True if a
        `background` that named it was kept and not applied (its start failed): its sender was
        not refused, and is to be told. One for every sync child moved the others, and named
        nothing that failed (a review, 2026-12-07)."""
        self._sync.pop(agent_id, None)
        named = self._background.pop(agent_id, False)
        self._ends = [e for e in self._ends if e.agent_id != agent_id]
        return named
