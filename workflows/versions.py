"""Which behaviour changes a run has: `workflow.patched`, with every change up to a baseline
taken through one marker.

Each change to workflow code since the first release has a patch id. A run records, for each
id it reaches, a marker and (Temporal Core does this) an upsert of `TemporalChangeVersion` that
lists every id so far: five ids cost a sub-agent ten of its ~60 events, a fifth of its history
at spawn. A run that starts on this code records one marker, `BASELINE`, at the first change it
reaches, and has every id in `BUNDLED` without another. A run whose history reached a change
without `BASELINE` (it started on earlier code) still asks for each id as before, so its
history replays, and goes on, unchanged.

A change made after the baseline gets its own id, listed in `AFTER_BASELINE` until a later
baseline takes it in (a new baseline id then, never more ids under this one: the runs that
recorded this one did not take them).

A later baseline bundles its predecessor's ids and the ids added since (`EARLIER` keeps each
predecessor with its bundle). A run asks the newest baseline first; one that replays without
it (it started on earlier code, and every run reaches its first change in the same place on
replay) asks the earlier baseline, then each id, as it did. Newest first, so a run records
one baseline at most.

Deploying it is deploying a new patch id: a run started on a new worker, whose next workflow
task an old worker replays, fails that task ("non-deprecated patch marker encountered") until
a new worker takes it, so let the old workers drain; rolling back past this code breaks the
runs started on it.
"""

from __future__ import annotations

from collections.abc import Iterable

from temporalio import workflow

FIRST_BASELINE = "baseline-2026-12"

FIRST_BUNDLED = frozenset(
    {
        "closed-child-stays-sync",
        "handoff-check-parentless-sub-agents",
        "late-mail-continues",
        "local-host-steps",
        "local-read-tools",
        "pattern-attributes",
        "per-member-shutdown-ids",
        "queued-start-outstanding",
        "search-attributes",
        "settles-children",
        "spawn-limit-in-batch",
        "stop-starting-worker",
        "stopped-keeps-stopped",
        "sync-end-by-result",
        "team-member-endings",
        "transcript-export",
        "verified-follows-late-mail",
        "verified-task-liveness",
    }
)
"""Every patch id of the code `FIRST_BASELINE` was cut from."""

SINCE_FIRST = frozenset(
    {
        "coordinator-client-agent-refused",
        "resumed-names-own-id",
        "team-ends-with-lead",
        "team-continues",
        "plan-decided-once",
        "teammate-turns-per-wake",
        "team-members-awaited",
        "team-hand-on-waits-answers",
        "verified-verifier-failure-ends",
        "verified-implementer-stop-ends",
        "pipeline-stopped-stage-waits",
        "verifier-spot-check",
        "waits-marked",
        "task-output-takes-notice",
        "kill-keeps-results",
        "failure-keeps-results",
        "input-values-checked",
        "blank-mail-refused",
        "fork-join-blank-directives",
        "person-names-refused",
        "subagent-hooks",
        "stop-reaches-sync-children",
        "ask-user-question",
        "attributes-at-start",
        "auto-compact",
        "compact-when-too-long",
        "context-full-cuts-calls",
        "definition-isolation",
        "definition-plan-async",
        "earlier-children",
        "end-freezes-queue",
        "ended-child-usage",
        "end-stops-children",
        "bash-background",
        "end-waits-for-starts",
        "fork-sync-when-disabled",
        "input-unknown-fields",
        "fork-join-end-waits-handlers",
        "fork-no-plan-mode",
        "fork-stop-when-started",
        "kill-on-host",
        "last-results-kept",
        "liveness-backoff",
        "mail-after-stop-resumes",
        "max-turns-keeps-ended",
        "max-tokens-resume",
        "messages-after-spawns",
        "name-reuse-own-id",
        "no-structured-broadcast",
        "notebook-edit",
        "one-agent-per-name",
        "partial-ends-the-task",
        "pattern-agent-types-checked",
        "pattern-end-status",
        "pattern-writer-checked",
        "person-plan-not-by-mail",
        "peer-shutdown-answered",
        "pipeline-checked-pass",
        "pipeline-decision-effect",
        "pipeline-kill-answers-held",
        "pipeline-kill-cancels",
        "pipeline-stop-beats-rerun",
        "plan-needs-background",
        "plan-answer-from-lead",
        "plan-answer-from-parent",
        "plan-approve-false-refused",
        "plan-ids-per-run",
        "plan-no-ask-after-stop",
        "plan-reread-on-approval",
        "read-pages",
        "rerun-sees-earlier-attempts",
        "resume-keeps-plan-file",
        "scratchpad-by-feature",
        "shared-child-timers",
        "signal-unknown-fields",
        "skill-tool",
        "task-output",
        "task-output-stop",
        "team-answer-by-name",
        "team-handlers-all-members",
        "team-kill-answers-held",
        "team-loss-told",
        "team-name-needs-team",
        "team-spawn",
        "teammate-background-refused",
        "todo-write",
        "verified-base-commit",
        "verified-cancel-reaches-implementer",
        "verified-failed-stops-implementer",
        "verifier-kill-is-a-fail",
        "verifier-ran-nothing",
        "web-fetch",
        "web-search",
        "worktree-tools",
    }
)
"""Patch ids added after `FIRST_BASELINE`, asked one by one until `BASELINE` took them in."""

BASELINE = "baseline-2026-12-07"
"""The baseline a run started on this code records (a sub-agent of the 20x5 fan-out recorded
`attributes-at-start` beside the first one: two more events, one more visibility write)."""

BUNDLED = FIRST_BUNDLED | SINCE_FIRST
"""Every patch id of the code `BASELINE` was cut from (a test holds the code and the corpus
to it)."""

EARLIER = ((FIRST_BASELINE, FIRST_BUNDLED),)
"""Each earlier baseline with its bundle, newest first: the runs that recorded one."""

AFTER_BASELINE: frozenset[str] = frozenset(
    {
        "background-reaches-starting-child",
        "claim-globs-refused",
        "plan-decision-in-its-task",
        "ending-freezes-queue",
        "input-lenient-unknown-fields",
        "kill-answers-cut-off-calls",
        "notice-before-start-kept",
        "pipeline-one-held-decision",
        "pipeline-waits-marked",
        "set-backgrounded-checked",
        "stage-decision-signal",
        "stop-reaches-starting-child",
        "team-shutdown-told",
        "team-carry-not-refused",
        "team-agent-types-checked",
        "no-model-falls-back",
        "undelivered-in-memo",
        "unstarted-in-memo",
        "verified-stopped-implementer-closes",
        "continued-marked",
        "worktree-in-memo",
    }
)
"""Patch ids added since `BASELINE`, asked one by one."""


def patched(patch_id: str) -> bool:
    """`workflow.patched(patch_id)`, answered by the newest baseline a run has for a bundled
    id. The SDK memoizes each id per run, so a run that replayed past its first change
    without `BASELINE` keeps asking as the code it started on did, and one that recorded it
    asks nothing more."""
    if patch_id in BUNDLED and workflow.patched(BASELINE):
        return True
    for baseline, bundle in EARLIER:
        if patch_id in bundle and workflow.patched(baseline):
            return True
    return workflow.patched(patch_id)


def took(recorded: Iterable[str], patch_id: str) -> bool:
    """Whether a closed run whose history recorded the patch ids `recorded` took change
    `patch_id`: by its own marker, or by a baseline that bundles it. (Whether its code
    reached the change is not in its history under a baseline.)"""
    ids = set(recorded)
    if patch_id in ids:
        return True
    bundles = [(BASELINE, BUNDLED), *EARLIER]
    return any(baseline in ids and patch_id in bundle for baseline, bundle in bundles)
