"""Record a new replay history: `python -m tests.replay.record NAME`.

Each scenario (tests/replay/scenarios_*.py: one agent, sub-agents, the patterns) runs on a
fresh dev server with the scripted model and writes `tests/replay/histories/NAME.json`.
Histories are a contract with every workflow already running in production: record new ones
for new behaviour, never re-record an existing one to make a replay test pass (an existing
file is refused).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import Client, WorkflowHandle

from outlast.client import connect
from outlast.devserver import DevServer
from tests.replay.scenarios_agent import (
    background_bash,
    backgrounded_refused,
    bad_mode,
    blank_mail,
    compact_too_long,
    compaction,
    context_full,
    continue_as_new,
    coordinator_client_agent,
    demo,
    failed_kept_results,
    fork_plan_mode,
    killed,
    killed_kept_results,
    killed_undelivered,
    killed_worktree_kept,
    lenient_unknown,
    liveness_backoff,
    max_tokens_resume,
    model_auto,
    model_local,
    model_local_no_model,
    new_calls,
    notebook_edit,
    plan_approve_false,
    plan_approved,
    plan_decided_by_update,
    plan_decision_in_its_task,
    plan_forged_answer,
    plan_late_answer,
    plan_parent_answer,
    plan_rejected,
    plan_resumed,
    plan_stop_before_ask,
    question,
    resumed_by_person,
    resumed_earlier_child,
    resumed_new_child,
    signal_fields,
    skill,
    task_output_takes_notice,
    todos,
    tool_errors,
    unknown_field,
    unknown_signal,
    web_fetch,
    web_search,
    worktree_session,
)
from tests.replay.scenarios_patterns import (
    coordinator,
    coordinator_glob_refused,
    coordinator_killed_unstarted,
    coordinator_out_of_turns_unstarted,
    coordinator_resumed,
    fork_join,
    fork_join_blank,
    fork_join_killed_fork,
    fork_stop_starting,
    pipeline,
    pipeline_approval,
    pipeline_failed_stage,
    pipeline_killed,
    pipeline_killed_held_decision,
    pipeline_queued_decisions,
    pipeline_spot_check,
    pipeline_stage_stopped,
    pipeline_unknown_type,
    stop_starting,
    team,
    team_background_refused,
    team_continues,
    team_ends_with_lead,
    team_killed_held_shutdown,
    team_member_lost,
    team_peer_plan_answer,
    team_person_plan_decision,
    team_shutdown,
    team_shutdown_told,
    team_spawn,
    team_steered,
    team_structured_broadcast,
    team_teammate_turns,
    team_unknown_type,
    verified_implementer_stopped,
    verified_killed_verifier,
    verified_late_mail,
    verified_liveness_backoff,
    verified_ran_nothing,
    verified_read_only_implementer,
    verified_spot_check,
    verified_task,
    verified_verifier_fails,
)
from tests.replay.scenarios_subagents import (
    background_starting_child,
    closed_child,
    late_mail,
    late_mail_notice,
    late_mail_settles,
    late_mail_stopped,
    mail_after_stop,
    message_after_spawn,
    notice_before_start,
    parallel_sync,
    person_name,
    resume_read_state,
    shared_timers,
    spawn_limit,
    stop_reaches_starting_child,
    stop_reaches_sync,
    subagent_hooks,
    subagents_resume,
    subagents_sync_async,
    subagents_taskstop,
)
from tests.support import free_port

HISTORIES = Path(__file__).parent / "histories"


SCENARIOS: dict[str, Callable[[Client, Path], Awaitable[WorkflowHandle]]] = {
    "agent_continue_as_new": continue_as_new,
    "fork_join": fork_join,
    "agent_demo": demo,
    # After Read, Glob and Grep became local activities on the host (patched local-read-tools).
    "agent_demo_v2": demo,
    "agent_killed": killed,
    "agent_tool_errors": tool_errors,
    # TodoWrite, carried out by the workflow (T7).
    "agent_todos": todos,
    # TodoWrite and Read with `pages` beside Reads in one turn (patched todo-write and
    # read-pages); `agent_new_calls_v0` is the same scenario recorded on a832e70, before both.
    "agent_new_calls": new_calls,
    # AskUserQuestion answered by the update (patched ask-user-question); `agent_question_v0`
    # is the same scenario recorded on a832e70, before it.
    "agent_question": question,
    # NotebookEdit after a Read (patched notebook-edit); `agent_notebook_edit_v0` is the same
    # scenario recorded on a832e70, before it.
    "agent_notebook_edit": notebook_edit,
    # EnterWorktree and ExitWorktree (patched worktree-tools); `agent_worktree_session_v0` is
    # the same scenario recorded on 58e72f0, before them.
    "agent_worktree_session": worktree_session,
    # Skill between two Reads (patched skill-tool); `agent_skill_v0` is the same scenario
    # recorded on 58e72f0, before it.
    "agent_skill": skill,
    # WebFetch between two Reads (patched web-fetch); `agent_web_fetch_v0` is the same
    # scenario recorded on 58e72f0, before it.
    "agent_web_fetch": web_fetch,
    # WebSearch between two Reads (patched web-search); `agent_web_search_v0` is the same
    # scenario recorded on 58e72f0, before it.
    "agent_web_search": web_search,
    "subagents_sync_async": subagents_sync_async,
    # The same scenario after output files, late-mail handling and liveness checks came in.
    "subagents_sync_async_v2": subagents_sync_async,
    # After prompt rendering, the handoff check and the transcript export became local
    # activities on the host (patched local-host-steps).
    "subagents_sync_async_v3": subagents_sync_async,
    # After a sync sub-agent that completes stopped signalling its parent, which reads the
    # same end from the result (patched sync-end-by-result).
    "subagents_sync_async_v4": subagents_sync_async,
    "subagents_taskstop": subagents_taskstop,
    "subagents_resume": subagents_resume,
    "coordinator": coordinator,
    # After a queued worker that is starting counted as outstanding (patched
    # queued-start-outstanding).
    "coordinator_v2": coordinator,
    "pipeline": pipeline,
    "team": team,
    "team_shutdown": team_shutdown,
    # After members sent a final report and a refused request became a failed update.
    "team_shutdown_v2": team_shutdown,
    "plan_approved": plan_approved,
    # The plan decided by the `decide_plan` update (answered, where the signals are not).
    "plan_decided_by_update": plan_decided_by_update,
    # After an approved plan is read again (patched plan-reread-on-approval).
    "plan_approved_v2": plan_approved,
    "plan_rejected": plan_rejected,
    "verified_task": verified_task,
    # After the implementer's liveness checks and explicit cancellation came in.
    "verified_task_v2": verified_task,
    "verified_late_mail": verified_late_mail,
    # The model called as a local activity (config model.local_activity).
    "agent_model_local": model_local,
    # A local model call a worker without credentials took (`outlast worker --no-model`):
    # made again as a regular activity (patched no-model-falls-back).
    "agent_model_local_no_model": model_local_no_model,
    # Three parallel spawns against a limit of two (patched spawn-limit-in-batch).
    "subagents_spawn_limit": spawn_limit,
    # `subagents_person_name_v0` recorded on ae8274b, where the child ran.
    "subagents_person_name": person_name,
    # A definition's own SubagentStart and Stop hooks run (patched subagent-hooks);
    # `subagents_hooks_v0` recorded on 5da79cb, where they were read and ignored (as they
    # are now without `features.definition_hooks`).
    "subagents_hooks": subagent_hooks,
    # A stop while waiting on a sync sub-agent is sent on to it (patched
    # stop-reaches-sync-children); `subagents_stop_sync_v0` recorded on 38b69ce, before.
    "subagents_stop_sync": stop_reaches_sync,
    # A stop while the model writes a sync Agent call: the sub-agent is stopped at its start
    # (patched stop-reaches-starting-child); `subagents_stop_starting_v0` recorded on
    # da0daf3, where it ran its whole course first.
    "subagents_stop_starting": stop_reaches_starting_child,
    "subagents_stop_starting_v0": stop_reaches_starting_child,
    # A `background` signal, and a sub-agent's notification, that come while a sync
    # sub-agent's start is held (its worktree's post-checkout hook): kept for it (patched
    # background-reaches-starting-child, notice-before-start-kept); the `_v0`s recorded on
    # 78ffa27, where the signal was refused and the notification dropped.
    "subagents_background_starting": background_starting_child,
    "subagents_background_starting_v0": background_starting_child,
    "subagents_notice_before_start": notice_before_start,
    "subagents_notice_before_start_v0": notice_before_start,
    # Mail reaching a sub-agent as it writes its output file: it goes on as generation 2 and
    # says so with its end, and its parent waits for that end too (patched
    # late-mail-continues); sync, and background.
    "subagents_late_mail": late_mail(False, "subagents_late_mail"),
    "subagents_late_mail_bg": late_mail(True, "subagents_late_mail_bg"),
    # The scenarios below run with a worker interceptor holding a command (tests/interceptors.py);
    # their histories replay with the same one (INTERCEPTED).
    # A sync child completing as its parent backgrounds it (patched closed-child-stays-sync).
    "subagents_closed_child": closed_child,
    # Mail during a background child's end notification: a second notice (late-mail-continues).
    "subagents_late_mail_notice": late_mail_notice,
    # The parent at its end waits for the helper to close (patched settles-children).
    "subagents_late_mail_settles": late_mail_settles,
    # A stop after the end said another generation follows: that one ends at once.
    "subagents_late_mail_stopped": late_mail_stopped,
    # TaskStop of a queued worker that is starting (patched stop-starting-worker).
    "coordinator_stop_starting": stop_starting,
    # Every change up to the baseline taken through one patch marker (workflows/versions.py).
    "agent_demo_v3": demo,
    "subagents_sync_async_v5": subagents_sync_async,
    "coordinator_v3": coordinator,
    "team_shutdown_v3": team_shutdown,
    "verified_task_v3": verified_task,
    "fork_join_v2": fork_join,
    # Three sync children of one response share one hint timer (patched shared-child-timers,
    # after the baseline).
    "subagents_shared_timers": shared_timers,
    # The same three children, recorded on bd1e6b4, before the patch baseline and the shared
    # timers: a timer each, the quick child's cancelled by its own end.
    "subagents_parallel_sync": parallel_sync,
    # The model call's mode by the previous call's duration (model.local_activity: auto).
    "agent_model_auto": model_auto,
    # A model call's history form of issue 9 (activities/history_form.py, model_setup.py):
    # the setup by name after the first call, a stored output's flag, the blob names of
    # results by reference in order, the answer without its role. Payloads only, no patch.
    "agent_demo_v4": demo,
    "agent_model_auto_v2": model_auto,
    "subagents_sync_async_v7": subagents_sync_async,
    # Killed during Bash: the run kills the command on the host too (patched kill-on-host).
    "agent_killed_v2": killed,
    # Killed mid-turn: the Read that had finished is kept (patched kill-keeps-results).
    "agent_killed_kept_results": killed_kept_results,
    # The same: the Bash call the kill cut off is kept too, answered as interrupted
    # (patched kill-answers-cut-off-calls; the history above is from before it).
    "agent_killed_kept_results_v2": killed_kept_results,
    # A failed model call: the results it was to send are kept (patched
    # failure-keeps-results).
    "agent_failed_kept_results": failed_kept_results,
    "subagents_taskstop_v2": subagents_taskstop,
    # The task records HEAD before the implementer starts (patched verified-base-commit), and
    # the resumed implementer starts with its read stamps.
    "verified_task_v4": verified_task,
    # A resumed helper starts with the read stamps its first run ended with.
    "subagents_resume_read_state": resume_read_state,
    # Bash with run_in_background: a ShellTaskWorkflow each, one ending, one stopped
    # (patched bash-background); the shells' histories are kept too (SHELLS).
    "agent_background_bash": background_bash,
    # The lead spawns a teammate by name (patched team-spawn): the team adds a member, tells
    # the others its name, and the newcomer's own history is kept (CHILDREN).
    "team_spawn": team_spawn,
    # Mail to `*` and kills after a member has ended, chosen from every member (patched
    # team-handlers-all-members).
    "team_shutdown_v4": team_steered,
    # The same with a task b held when it ended, then claimed by a (its claim no longer
    # locks: a rule of the validator; the handler replays without the lock check).
    "team_shutdown_v5": team_steered,
    # The resume of the implementer is waited for when cancelled (patched
    # verified-cancel-reaches-implementer).
    "verified_task_v5": verified_task,
    # A task_stop for a fork still starting, applied once it has (patched
    # fork-stop-when-started); with fork 2's start held (INTERCEPTED).
    "fork_join_stop_starting": fork_stop_starting,
    # Signals with a field their input does not have, refused (patched signal-unknown-fields).
    "agent_signal_fields": signal_fields,
    # A signal of a name no handler has: refused by the dynamic handler; `_v0` recorded on
    # 22107b3, where Temporal kept it unread.
    "agent_unknown_signal": unknown_signal,
    "agent_unknown_signal_v0": unknown_signal,
    # A stage re-run, a late decision on its first attempt refused, its second approved
    # (StageDecision.attempt; decide_stage answers with what the pipeline did, patched
    # pipeline-decision-effect). `pipeline_approval_v0` is the same without `attempt`,
    # recorded on 3e76ba8, before that patch: its scenario lives in that commit only.
    "pipeline_approval": pipeline_approval,
    # Children started with their search attributes (AgentInput.attributes_at_start): a
    # child's first run upserts only its end; the implementer's resumed runs upsert as before.
    "subagents_sync_async_v6": subagents_sync_async,
    "fork_join_v3": fork_join,
    "verified_task_v6": verified_task,
    # A stage that failed: the pipeline reads what it spent from its run after the end
    # (patched ended-child-usage). `pipeline_failed_stage_v0` and `pipeline_killed_v0` are
    # the same scenarios recorded on 9128311, before ended-child-usage, pipeline-kill-cancels
    # and pattern-end-status (the killed pipeline completed `failed` then).
    "pipeline_failed_stage": pipeline_failed_stage,
    # A fork killed by task_stop after a Glob: the join reads what it spent the same way.
    "fork_join_killed_fork": fork_join_killed_fork,
    # Killed while a stage runs: the pipeline ends cancelled (patched pipeline-kill-cancels).
    "pipeline_killed": pipeline_killed,
    # Killed with a decision held (approved ahead): the kill answers it (patched
    # pipeline-kill-answers-held). `pipeline_killed_held_decision_v0` is the same scenario
    # recorded on 9c46fd8, before that patch (the run ended under the held update).
    "pipeline_killed_held_decision": pipeline_killed_held_decision,
    # Killed with a shutdown request waiting for its member: the kill answers it (patched
    # team-kill-answers-held); `team_killed_held_shutdown_v0` recorded on 9c46fd8, before.
    "team_killed_held_shutdown": team_killed_held_shutdown,
    # Round 1's verifier killed on its own: a FAIL round (patched verifier-kill-is-a-fail);
    # `verified_killed_verifier_v0` recorded on 9c46fd8, where the kill failed the task.
    "verified_killed_verifier": verified_killed_verifier,
    # TaskStop, then SendMessage to the stopped agent in one response: it is resumed with
    # the message (patched mail-after-stop-resumes); `subagents_mail_after_stop_v0`
    # recorded on 9c46fd8, where the message went to the ending run.
    "subagents_mail_after_stop": mail_after_stop,
    # A fork's EnterPlanMode, refused (patched fork-no-plan-mode); `agent_fork_plan_mode_v0`
    # recorded on 9c46fd8, where the fork entered plan mode.
    "agent_fork_plan_mode": fork_plan_mode,
    # A mail reading like a lead's plan answer while the plan waits for the person: mail
    # (patched person-plan-not-by-mail); `agent_plan_forged_answer_v0` recorded on 9c46fd8,
    # where it approved the plan.
    "agent_plan_forged_answer": plan_forged_answer,
    # `approve_plan` with `approve: false`: refused (patched plan-approve-false-refused);
    # `agent_plan_approve_false_v0` recorded on 201e76c, where it approved the plan.
    "agent_plan_approve_false": plan_approve_false,
    "agent_plan_approve_false_v0": plan_approve_false,
    # A queued approval in the same workflow task as its plan's read: the plan takes it
    # (patched plan-decision-in-its-task); `agent_plan_decision_in_task_v0` recorded on
    # 1d4116a, where it was refused and an approval by id followed.
    "agent_plan_decision_in_task": plan_decision_in_its_task,
    "agent_plan_decision_in_task_v0": plan_decision_in_its_task,
    # A peer's message reading like the lead's answer to b's plan: mail (patched
    # plan-answer-from-lead, in b); `team_peer_plan_answer_v0` recorded on 9c46fd8.
    "team_peer_plan_answer": team_peer_plan_answer,
    # A planning sub-agent stopped as it calls ExitPlanMode: nobody is asked (patched
    # plan-no-ask-after-stop); `subagents_plan_stop_before_ask_v0` recorded on 9c46fd8.
    "subagents_plan_stop_before_ask": plan_stop_before_ask,
    # A client's start with a misspelt field, refused (patched input-unknown-fields).
    "agent_unknown_field": unknown_field,
    # A tool call the context window cut off, refused (patched context-full-cuts-calls);
    # `agent_context_full_v0` recorded on 2d7021b, where it ran.
    "agent_context_full": context_full,
    # An answer max_tokens cut off, taken up (patched max-tokens-resume);
    # `agent_max_tokens_resume_v0` recorded on 6b6fa23, where the agent ended with it.
    "agent_max_tokens_resume": max_tokens_resume,
    # `agent_compaction_v0` recorded on 9705e2e, where the turns went on uncompacted.
    "agent_compaction": compaction,
    # `agent_compact_too_long_v0` recorded on 99187d3, where the refusal failed the agent.
    "agent_compact_too_long": compact_too_long,
    # A planning sub-agent continued by SendMessage keeps its plan file (patched
    # resume-keeps-plan-file); `subagents_plan_resumed_v0` recorded on 3b67f79.
    "subagents_plan_resumed": plan_resumed,
    # A lead's late answer to a stopped run's plan, not taken by the resumed run's (patched
    # plan-ids-per-run); `subagents_plan_late_answer_v0` recorded on 4e45d1a, where it was.
    "subagents_plan_late_answer": plan_late_answer,
    # A parent's liveness checks, further apart each time (patched liveness-backoff);
    # `agent_liveness_backoff_v0` recorded on 1666e00, at a fixed interval.
    "agent_liveness_backoff": liveness_backoff,
    # The same for a verified task's implementer; `verified_liveness_backoff_v0` recorded on
    # 7e807b8, at a fixed interval.
    "verified_liveness_backoff": verified_liveness_backoff,
    # The lead's plan approval to "*", refused (patched no-structured-broadcast, in a);
    # `team_structured_broadcast_v0` recorded on 0e4317e, where it went to everyone.
    "team_structured_broadcast": team_structured_broadcast,
    # A blank directive from a client, refused (patched fork-join-blank-directives);
    # `fork_join_blank_v0` recorded on 3935373, where its fork ran.
    "fork_join_blank": fork_join_blank,
    # A blank `send_message`, refused (patched blank-mail-refused); `agent_blank_mail_v0`
    # recorded on 513c32b, where the model's 400 failed the agent.
    "agent_blank_mail": blank_mail,
    # A `set_backgrounded` with an input to a top-level agent, refused (patched
    # set-backgrounded-checked); `agent_backgrounded_refused_v0` recorded on 3574812, where
    # it marked the agent `IsBackground`. (Core does not compare upserts on replay: the
    # `_v0` replays on code without the patch too; the new history is what holds it.)
    "agent_backgrounded_refused": backgrounded_refused,
    # A misspelt permission mode from a client, refused (patched input-values-checked);
    # `agent_bad_mode_v0` recorded on 16909ab, where it ran without plan mode.
    "agent_bad_mode": bad_mode,
    # A client's start with an unknown field inside its workspace, refused (patched
    # input-lenient-unknown-fields); `agent_lenient_unknown_v0` recorded on 68a83c4, where
    # it ran without it (and recorded the baseline marker: the refusal must not be asked
    # under the baseline, or that run replays as refused).
    "agent_lenient_unknown": lenient_unknown,
    # A verifier that cannot run ends the task (patched verified-verifier-failure-ends);
    # `verified_verifier_fails_v0` recorded on 2fe3bac, where the implementer went again.
    "verified_verifier_fails": verified_verifier_fails,
    # A person stops the implementer: the task ends unverified (patched
    # verified-implementer-stop-ends).
    "verified_implementer_stopped": verified_implementer_stopped,
    # A person stops a pipeline stage's agent: the stage waits for a decision (patched
    # pipeline-stopped-stage-waits).
    "pipeline_stage_stopped": pipeline_stage_stopped,
    # A client's coordinator start with `agent` set, refused (patched
    # coordinator-client-agent-refused); `coordinator_client_agent_v0` recorded on c592263,
    # where it ran that agent.
    "coordinator_client_agent": coordinator_client_agent,
    "coordinator_client_agent_v0": coordinator_client_agent,
    # The pattern looks its agent types up at its start (patched pattern-agent-types-checked):
    # a pipeline and a verified task through, and a stage type no definition has, refused.
    "pipeline_v2": pipeline,
    "verified_task_v7": verified_task,
    "pipeline_unknown_type": pipeline_unknown_type,
    # A team's members' types, looked up before any starts (patched team-agent-types-checked);
    # `team_unknown_type_v0` recorded on 0f851b3, where the lead failed at its start and the
    # team ended with it.
    "team_unknown_type": team_unknown_type,
    "team_unknown_type_v0": team_unknown_type,
    # The team scenarios the cache modes run again (tests/replay/test_cache_modes.py), as
    # today's code runs them: the members' types looked up first.
    "team_v2": team,
    "team_shutdown_v8": team_shutdown,
    "team_spawn_v2": team_spawn,
    # A read-only implementer, refused at the start (patched pattern-writer-checked).
    "verified_read_only_implementer": verified_read_only_implementer,
    # A message reading like the parent's answer to a planning sub-agent, from someone else:
    # mail (patched plan-answer-from-parent, in careful); `subagents_plan_parent_answer_v0`
    # recorded on 86ec538, where it approved the plan.
    "subagents_plan_parent_answer": plan_parent_answer,
    "subagents_plan_parent_answer_v0": plan_parent_answer,
    # A person's `outlast resume` (outlast/resume.py): an agent terminated mid-run, and a
    # coordinator that completed (its input's `resumed`); each the resumed run's history.
    "agent_resumed_by_person": resumed_by_person,
    "coordinator_resumed": coordinator_resumed,
    # A verifier's PASS with no tool called, a FAIL round (patched verifier-ran-nothing);
    # `verified_ran_nothing_v0` recorded on 9897664, where the task passed on it.
    "verified_ran_nothing": verified_ran_nothing,
    "verified_ran_nothing_v0": verified_ran_nothing,
    # A PASS checked against what the verifier ran: made-up output, a check never run
    # (patched verifier-spot-check).
    "verified_spot_check": verified_spot_check,
    "pipeline_spot_check": pipeline_spot_check,
    # Today's pipeline and verified task, each PASS spot-checked (the pipeline's verifier
    # now runs the command its check shows).
    "pipeline_v3": pipeline,
    "verified_task_v8": verified_task,
    # AgentStatus says what the agent waits for, PermissionMode follows plan mode (patched
    # waits-marked): a plan approved, questions answered.
    "plan_approved_v3": plan_approved,
    "agent_question_v2": question,
    # TaskOutput gives a command's end; its notification is not sent too (patched
    # task-output-takes-notice).
    "agent_task_output_takes_notice": task_output_takes_notice,
    # A helper spawned and messaged in one response: the message waits for the spawn
    # (patched messages-after-spawns); `_v0` recorded on 9897664, where it found no helper.
    "subagents_message_after_spawn": message_after_spawn,
    "subagents_message_after_spawn_v0": message_after_spawn,
    # A member stopped with tool results no model call recorded appends them to its
    # conversation (patched last-results-kept).
    "team_shutdown_v6": team_shutdown,
    # The re-run of `look` is told its first attempt and the feedback on it (patched
    # rerun-sees-earlier-attempts).
    "pipeline_approval_v2": pipeline_approval,
    # The same: the pipeline's AgentStatus reads waiting_for_approval while a stage waits
    # (patched pipeline-waits-marked; `_v2` is from before it).
    "pipeline_approval_v3": pipeline_approval,
    # Two stage decisions sent while no worker ran (the `stage_decision` signal): the first
    # taken, the second refused into `refused_signals` (patched stage-decision-signal);
    # `pipeline_queued_decisions_v0` recorded on 3ea9475, which refused both as unknown.
    "pipeline_queued_decisions": pipeline_queued_decisions,
    "pipeline_queued_decisions_v0": pipeline_queued_decisions,
    # The `background` signal to a teammate, refused (patched teammate-background-refused).
    "team_background_refused": team_background_refused,
    # A resumed agent's SendMessage finds the sub-agent its first run spawned (patched
    # earlier-children).
    "agent_resumed_earlier_child": resumed_earlier_child,
    # A teammate killed while it works: its task put back, the lead mailed (patched
    # team-loss-told).
    "team_member_lost": team_member_lost,
    # A teammate holding a task approves a person's shutdown request: its task put back,
    # the lead mailed (patched team-shutdown-told); before, the team_shutdown histories'
    # b, which held none, ended unannounced.
    "team_shutdown_told": team_shutdown_told,
    # A resumed agent's new child named as its first run's: an id of its own (patched
    # resumed-names-own-id).
    "agent_resumed_new_child": resumed_new_child,
    # A team whose lead is killed ends, stopping its teammate (patched team-ends-with-lead).
    "team_ends_with_lead": team_ends_with_lead,
    # A standing team that continues as new: its members go on, their ends reach the next
    # run by their last report or its liveness check (patched team-continues).
    "team_continues": team_continues,
    # A teammate's plan approved by a person while its lead was asked: the lead is told
    # (patched plan-decided-once, in b).
    "team_person_plan_decision": team_person_plan_decision,
    # A teammate's turn budget counted from the mail that woke it (patched
    # teammate-turns-per-wake, in b).
    "team_teammate_turns": team_teammate_turns,
    # The same, a terminated member found by `agents.await_closed` (patched
    # team-members-awaited), not by liveness checks.
    "team_continues_v2": team_continues,
    # The same, the hand-on giving a shutdown answer on its way a while first (patched
    # team-hand-on-waits-answers; none is on its way here: the grace's timer is cancelled).
    "team_continues_v3": team_continues,
    # Under the second baseline (baseline-2026-12-07): a run records that one marker for every
    # change so far (workflows/versions.py); one of each workflow type and pattern.
    "agent_demo_v5": demo,
    "agent_background_bash_v2": background_bash,
    "agent_continue_as_new_v2": continue_as_new,
    "plan_approved_v4": plan_approved,
    "subagents_sync_async_v8": subagents_sync_async,
    "coordinator_v4": coordinator,
    "fork_join_v4": fork_join,
    "pipeline_v4": pipeline,
    "team_shutdown_v7": team_shutdown,
    "team_continues_v4": team_continues,
    "verified_task_v9": verified_task,
    # A coordinator out of turns, woken by the end that frees its queued worker's file: the
    # worker does not start (patched ending-freezes-queue); killed with a worker queued, its
    # memo names it (patched unstarted-in-memo). `_v0` of each recorded on 18639a2, before
    # both (the worker started and was killed; no memo): their scenarios live in a copy of
    # these made for that commit (session note, 2026-12-07).
    "coordinator_out_of_turns_unstarted": coordinator_out_of_turns_unstarted,
    # A run that hands its agent or team on sets `AgentStatus=continued` first, and hands
    # its attributes to the next (patched continued-marked).
    "agent_continue_as_new_v3": continue_as_new,
    "team_continues_v5": team_continues,
    # Killed in its worktree session with a change there: the memo names the kept worktree
    # (patched worktree-in-memo).
    "agent_killed_worktree_kept": killed_worktree_kept,
    "coordinator_killed_unstarted": coordinator_killed_unstarted,
    # The implementer a person stopped closes before its task does (patched
    # verified-stopped-implementer-closes): the close policy cancelled it in its end.
    "verified_implementer_stopped_v2": verified_implementer_stopped,
    # Killed with a background helper's end queued: its memo keeps it (patched
    # undelivered-in-memo); `agent_killed_undelivered_v0` recorded on 18639a2, before.
    "agent_killed_undelivered": killed_undelivered,
    # A worker's `files` with a pattern, refused (patched claim-globs-refused).
    "coordinator_glob_refused": coordinator_glob_refused,
}


# Children whose histories are worth keeping too (a killed child, a resumed run), saved as
# `<parent>__<child>.json`: the file name encodes the workflow id, which replay needs.
CHILDREN = {
    "pipeline_stage_stopped": ["look"],
    "verified_implementer_stopped": ["implementer"],
    "verified_implementer_stopped_v2": ["implementer"],
    "fork_join_blank_v0": ["fork-2"],
    "subagents_stop_sync": ["slow"],
    "subagents_stop_starting": ["busy"],
    "subagents_stop_starting_v0": ["busy"],
    "subagents_hooks": ["helper"],
    "subagents_late_mail_stopped": ["helper"],
    "subagents_taskstop": ["sleeper"],
    "subagents_mail_after_stop": ["sleeper"],
    "team_peer_plan_answer": ["b"],
    "subagents_plan_stop_before_ask": ["careful"],
    "subagents_plan_stop_before_ask_v0": ["careful"],
    "team_peer_plan_answer_v0": ["b"],
    "team_structured_broadcast": ["a"],
    "team_structured_broadcast_v0": ["a"],
    "subagents_resume": ["helper"],
    "fork_join": ["fork-1"],
    "subagents_sync_async_v2": ["bg2", "fg"],
    "subagents_sync_async_v3": ["bg2", "fg"],
    "subagents_sync_async_v4": ["bg2", "fg"],
    "coordinator": ["impl-b"],
    "coordinator_v2": ["impl-b"],
    "pipeline": ["verify"],
    "team": ["b", "c"],
    "team_shutdown": ["b", "c"],
    "team_shutdown_v2": ["b"],
    "verified_task": ["implementer", "verify-1", "verify-2"],
    "subagents_sync_async_v5": ["bg2", "fg"],
    "coordinator_v3": ["impl-b"],
    "team_shutdown_v3": ["b"],
    "verified_task_v3": ["implementer", "verify-1", "verify-2"],
    "fork_join_v2": ["fork-1"],
    "subagents_taskstop_v2": ["sleeper"],
    "subagents_resume_read_state": ["helper"],
    "verified_task_v4": ["implementer", "verify-1", "verify-2"],
    "team_spawn": ["a", "b", "d"],
    "team_shutdown_v4": ["b"],
    "team_shutdown_v5": ["b"],
    "team_shutdown_v6": ["b"],
    "verified_task_v5": ["implementer", "verify-1", "verify-2"],
    "pipeline_approval": ["look-2"],
    "pipeline_approval_v2": ["look-2"],
    "pipeline_approval_v3": ["look-2"],
    "team_background_refused": ["b"],
    "subagents_sync_async_v6": ["bg2", "fg"],
    "subagents_sync_async_v7": ["bg2", "fg"],
    "fork_join_v3": ["fork-1"],
    "verified_task_v6": ["verify-1", "verify-2"],
    "pipeline_failed_stage": ["plan"],
    "fork_join_killed_fork": ["fork-2"],
    "subagents_plan_parent_answer": ["careful"],
    "subagents_plan_parent_answer_v0": ["careful"],
    "team_person_plan_decision": ["b"],
    "team_teammate_turns": ["b"],
    "subagents_sync_async_v8": ["bg2", "fg"],
    "coordinator_v4": ["impl-b"],
    "fork_join_v4": ["fork-1"],
    "pipeline_v4": ["verify"],
    "team_shutdown_v7": ["b"],
    "team_v2": ["b", "c"],
    "team_shutdown_v8": ["b"],
    "team_spawn_v2": ["a", "b", "d"],
    "verified_task_v9": ["implementer", "verify-1", "verify-2"],
}
# Scenarios whose background commands' histories are kept too, as `<parent>__<shell id>.json`.
SHELLS = {"agent_background_bash", "agent_background_bash_v2"}
# Parents whose every child agent is kept too (a fork's id ends in its random agent id).
CHILD_AGENTS = {"agent_fork_plan_mode", "agent_fork_plan_mode_v0"}
# Chains whose every run is kept, as `<id>@run<N>.json` (a continued run replays from its
# carried state, a different path from a first run).
CHAINS = {
    "agent_continue_as_new",
    "agent_continue_as_new_v2",
    "team_continues",
    "team_continues_v2",
    "team_continues_v3",
    "team_continues_v4",
    "agent_continue_as_new_v3",
    "team_continues_v5",
}
# Children resumed by a new run (not a continue-as-new): the run the parent started, as
# `<parent>__<child>@child.json`, and the latest, as `<parent>__<child>@resumed.json`.
RESUMED = {
    "verified_task_v6": ["implementer"],
    "subagents_plan_resumed": ["careful"],
    "subagents_plan_resumed_v0": ["careful"],
    "subagents_plan_late_answer": ["careful"],
    "subagents_plan_late_answer_v0": ["careful"],
}
# Children whose every run is kept, as `<parent>__<child>@run<N>.json`.
CHILD_CHAINS = {
    "subagents_late_mail": ["helper"],
    "subagents_late_mail_bg": ["helper"],
    "subagents_late_mail_notice": ["helper"],
    "subagents_late_mail_settles": ["helper"],
    "verified_late_mail": ["implementer"],
}


def intercepted(name: str) -> list:
    """The interceptors scenario `name` ran with: its histories replay with them too."""
    from tests.interceptors import Hold
    from tests.workflows.test_fork_join import SLOW_FORK_2_S
    from tests.workflows.test_late_mail import (
        HOLD_CONTINUING_END,
        HOLD_CONTINUING_END_LONG,
        HOLD_PLAIN_END,
    )
    from tests.workflows.test_stop_starting_worker import SLOW_START
    from tests.workflows.test_sync_end import LATE_BACKGROUNDING

    return {
        "subagents_closed_child": [LATE_BACKGROUNDING],
        "subagents_late_mail_notice": [HOLD_PLAIN_END],
        "subagents_late_mail_settles": [HOLD_PLAIN_END, HOLD_CONTINUING_END_LONG],
        "subagents_late_mail_stopped": [HOLD_CONTINUING_END],
        "coordinator_stop_starting": [SLOW_START],
        "fork_join_stop_starting": [Hold(SLOW_FORK_2_S, child_suffix="/fork-2")],
    }.get(name, [])


async def _save_runs(client: Client, workflow_id: str, stem: str) -> None:
    """Every run of a chain, found from the latest back through each run's predecessor
    (visibility may not list the last runs yet)."""
    histories, run_id = [], None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        started = history.events[0].workflow_execution_started_event_attributes
        run_id = started.continued_execution_run_id
        if not run_id:
            break
    for n, history in enumerate(reversed(histories), start=1):
        (HISTORIES / f"{stem}@run{n}.json").write_text(history.to_json())


async def _save_resumed(client: Client, parent: WorkflowHandle, workflow_id: str, stem: str):
    """The run of `workflow_id` the parent started (its child run), and the latest run."""
    first = None
    async for event in parent.fetch_history_events():
        if event.HasField("child_workflow_execution_started_event_attributes"):
            started = event.child_workflow_execution_started_event_attributes.workflow_execution
            if started.workflow_id == workflow_id:
                first = started.run_id
    assert first, f"{workflow_id} was not started by {parent.id}"
    child = await client.get_workflow_handle(workflow_id, run_id=first).fetch_history()
    latest = await client.get_workflow_handle(workflow_id).fetch_history()
    started = latest.events[0].workflow_execution_started_event_attributes
    assert latest.run_id != first, f"{workflow_id} was not resumed"
    assert not started.continued_execution_run_id, f"{workflow_id}'s latest run is a continued one"
    (HISTORIES / f"{stem}@child.json").write_text(child.to_json())
    (HISTORIES / f"{stem}@resumed.json").write_text(latest.to_json())


async def _save_shells(
    client: Client, parent: WorkflowHandle, stem: str, of_type: str = "ShellTaskWorkflow"
) -> None:
    """Each child of `of_type` the parent started (their ids end in a random id: a shell's,
    a fork's agent id)."""
    async for event in parent.fetch_history_events():
        if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            started = event.start_child_workflow_execution_initiated_event_attributes
            if started.workflow_type.name == of_type:
                shell_id = started.workflow_id.rsplit("/", 1)[1]
                history = await client.get_workflow_handle(started.workflow_id).fetch_history()
                (HISTORIES / f"{stem}__{shell_id}.json").write_text(history.to_json())


async def record(name: str) -> Path:
    out = HISTORIES / f"{name}.json"
    if out.exists():
        raise SystemExit(f"{out} exists; histories are never re-recorded")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        os.environ["OUTLAST_STORE_DIR"] = str(tmp / "store")
        os.environ["OUTLAST_RECORDING"] = name
        server = DevServer(state_dir=tmp / "t", port=free_port(), headless=True, persist=False)
        proc = server.start(detach=False)
        try:
            client = await connect(server.address)
            handle = await SCENARIOS[name](client, tmp)
            out.write_text((await handle.fetch_history()).to_json())
            if name in CHAINS:
                out.unlink()
                await _save_runs(client, name, name)
            for child in CHILD_CHAINS.get(name, []):
                await _save_runs(client, f"{name}/{child}", f"{name}__{child}")
            for child in RESUMED.get(name, []):
                await _save_resumed(client, handle, f"{name}/{child}", f"{name}__{child}")
            if name in SHELLS:
                await _save_shells(client, handle, name)
            if name in CHILD_AGENTS:
                await _save_shells(client, handle, name, "AgentWorkflow")
            for child in CHILDREN.get(name, []):
                child_handle = client.get_workflow_handle(f"{name}/{child}")
                path = HISTORIES / f"{name}__{child}.json"
                path.write_text((await child_handle.fetch_history()).to_json())
        finally:
            proc.terminate()
    return out


if __name__ == "__main__":
    for scenario in sys.argv[1:] or list(SCENARIOS):
        print(asyncio.run(record(scenario)))
