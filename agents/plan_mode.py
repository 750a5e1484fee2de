"""Plan mode (spec R75-R80, T12, T13): the texts, tool contracts and pure decisions.

Plan mode is two-phase execution: the agent explores and writes a plan file (the only file
it may edit), then asks for approval with ExitPlanMode; only after approval does it change
anything. Enforcement lives in the permission layer (R80); this module holds what the model
reads and the small pure rules the session workflow applies: when a reminder is attached,
how the plan slug is formed, and the plan-approval messages between a worker and its lead.
Pure (stdlib + pydantic): safe in the workflow sandbox.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.notifications import system_reminder

ENTER_PLAN_MODE_TOOL = "EnterPlanMode"
EXIT_PLAN_MODE_TOOL = "ExitPlanMode"

# Quoted verbatim from Claude Code (R78), misspelling included: models were trained on it.
PLAN_MODE_CONSTRAINT = (
    "Plan mode is active. The user indicated that they do not want you to execute yet -- you "
    "MUST NOT make any edits (with the exception of the plan file mentioned below), run any "
    "non-readonly tools (including changing configs or making commits), or otherwise make any "
    "changes to the system. This supercedes any other instructions you have received."
)

TURNS_BETWEEN_ATTACHMENTS = 5
FULL_REMINDER_EVERY_N_ATTACHMENTS = 5

PLAN_EXITED_REMINDER = (
    "You have exited plan mode. You can now make edits, run tools, and take actions. The plan "
    "file is at {plan_path} if you need to refer back to it."
)
"""Attached once after approval; a format string with `{plan_path}` (see plan_exited_reminder)."""


def _wrap(body: str) -> str:
    return system_reminder(body)


def _plan_file_info(plan_path: str, plan_exists: bool | None) -> str:
    if plan_exists is None:
        return (
            f"Plan file: {plan_path}\nYour previous run's plan may be in it. Read it first, then "
            "make incremental edits with Edit (create it with Write if it is not there)."
        )
    if plan_exists:
        return (
            f"Plan file: {plan_path}\nA plan file already exists at {plan_path}. Read it and "
            "make incremental edits with Edit."
        )
    return f"Plan file: {plan_path}\nNo plan file exists yet. Create it at {plan_path} with Write."


def _subagent_plan_note(plan_exists: bool | None) -> str:
    if plan_exists is None:
        return "It may hold your previous run's plan: read it before you change it. "
    return "" if plan_exists else "It does not exist yet. "


def plan_mode_reminder(
    plan_path: str,
    plan_exists: bool | None,
    *,
    full: bool,
    subagent: bool = False,
    approver: str | None = None,
    max_explore_agents: int = 3,
    max_plan_agents: int = 1,
) -> str:
    """The `<system-reminder>` attached to a user turn while in plan mode (R76, R78).

    Args:
        plan_path: The session's plan file.
        plan_exists: Whether the plan file already exists (edit it) or not (create it);
            None: an earlier run's file, which may hold its plan (read it first).
        full: The full text with the five-phase workflow, or the sparse one-line version.
        subagent: The variant for a sub-agent running in plan mode: the constraint and the
            plan file only; it takes precedence over `full`.
        approver: For a sub-agent that asks its lead to approve its plan (a worker or
            teammate started in plan mode, which keeps ExitPlanMode, R32): the lead's name,
            and the variant says to call ExitPlanMode once the plan is ready.
        max_explore_agents: How many Explore agents phase 1 may run in parallel.
        max_plan_agents: How many Plan agents phase 2 may run.
    """
    if subagent:
        return _wrap(
            # "Plan file: <path>" on a line of its own, as the full reminder names it.
            f"{PLAN_MODE_CONSTRAINT}\n\nPlan file: {plan_path}\n"
            f"{_subagent_plan_note(plan_exists)}You may write it only if your "
            "task asks for it; it is the only file you may change. Answer the task you were "
            "given fully, from reading and searching the code."
            + (
                f" When your plan is ready, write it to the plan file and call ExitPlanMode: "
                f"your lead ({approver}) approves it before you change anything."
                if approver
                else ""
            )
        )
    if not full:
        return _wrap(
            "Plan mode is still active: make no edits and run no non-readonly tools, except "
            f"writing the plan file at {plan_path}. Keep following the plan-mode workflow and "
            "end the turn with a question to the user or ExitPlanMode."
        )
    return _wrap(
        f"{PLAN_MODE_CONSTRAINT}\n\n"
        f"## Plan file\n{_plan_file_info(plan_path, plan_exists)} It is the only file you are "
        "allowed to edit; build the plan up in it as you go.\n\n"
        "## Workflow\n"
        "1. Initial understanding: read the code the request touches and work out what the "
        "user actually wants. In this phase use only Explore sub-agents to search, at most "
        f"{max_explore_agents} in parallel; one is usually enough, use more only when the "
        "areas to search are clearly separate.\n"
        "2. Design: launch Plan sub-agents (at most "
        f"{max_plan_agents}) with what you found, to design the implementation.\n"
        "3. Review: read the critical files the design depends on yourself, check that the "
        "design does what the user asked, and ask the user clarifying questions about "
        "anything still open.\n"
        "4. Final plan: write the plan file. Give only the approach you recommend, not every "
        "alternative; keep it concise but specific enough to carry out, name the files to "
        "change, and say how to check the result.\n"
        "5. Call ExitPlanMode to ask the user to approve the plan.\n\n"
        "End every turn either with a question to the user (AskUserQuestion) or with a call "
        "to ExitPlanMode. Never ask for approval of the plan any other way: not in plain "
        "text and not with AskUserQuestion."
    )


def plan_exited_reminder(plan_path: str) -> str:
    """The `<system-reminder>` attached once after the plan is approved (R78)."""
    return _wrap(PLAN_EXITED_REMINDER.format(plan_path=plan_path))


def plan_reentry_reminder(plan_path: str) -> str:
    """The `<system-reminder>` attached when plan mode is entered again in a session (R78)."""
    return _wrap(
        f"You are back in plan mode. The plan file from your earlier planning is at "
        f"{plan_path}. Read it before anything else. If the new request is a different task, "
        "overwrite the file with a new plan; if it continues the same task, refine the "
        "existing plan and drop what no longer applies. Then call ExitPlanMode as before."
    )


def reminder_due(turns_in_plan: int, attachments_so_far: int) -> Literal["full", "sparse"] | None:
    """Which plan-mode reminder, if any, the next user turn gets (R78).

    The rule, as a pure function of two counters kept in workflow state:

    - `turns_in_plan` counts the user turns already taken in plan mode (0 on the first
      one). A reminder is due when `turns_in_plan % TURNS_BETWEEN_ATTACHMENTS == 0`: on
      turns 0, 5, 10, ...; no reminder on the others.
    - `attachments_so_far` counts the reminders already attached; the caller adds one
      whenever this function returns non-None. Counting the due one as attachment number
      `attachments_so_far + 1`, numbers 1, 6, 11, ... (every
      FULL_REMINDER_EVERY_N_ATTACHMENTS-th, starting with the first) are full, the others
      sparse.
    - The first turn in plan mode (`turns_in_plan == 0`) is always full, whatever the
      counter says, so a re-entry starts with the whole workflow again.

    Raises:
        ValueError: A counter is negative.
    """
    if turns_in_plan < 0 or attachments_so_far < 0:
        raise ValueError("plan-mode turn and attachment counters must not be negative")
    if turns_in_plan % TURNS_BETWEEN_ATTACHMENTS:
        return None
    if turns_in_plan == 0 or attachments_so_far % FULL_REMINDER_EVERY_N_ATTACHMENTS == 0:
        return "full"
    return "sparse"


# 32 words each, so a slug takes 15 bits; the workflow draws them with workflow.random().
_FIRST = (
    "brave", "calm", "bright", "clever", "eager", "gentle", "happy", "jolly",
    "keen", "kind", "lively", "lucky", "merry", "noble", "proud", "quick",
    "swift", "witty", "bold", "fair", "fond", "glad", "grand", "humble",
    "jaunty", "mellow", "nimble", "plucky", "sunny", "tidy", "vivid", "zesty",
)  # fmt: skip
_SECOND = (
    "quiet", "amber", "azure", "crimson", "dusty", "early", "fuzzy", "golden",
    "hidden", "icy", "jade", "silent", "misty", "mossy", "olive", "pale",
    "rosy", "rustic", "silver", "snowy", "soft", "starry", "velvet", "windy",
    "wild", "woolly", "cosmic", "frosty", "hollow", "lunar", "polar", "scarlet",
)  # fmt: skip
_THIRD = (
    "river", "meadow", "forest", "harbor", "island", "lagoon", "canyon", "glacier",
    "valley", "summit", "breeze", "comet", "ember", "falcon", "garden", "horizon",
    "lantern", "maple", "orchid", "otter", "pebble", "planet", "quartz", "raven",
    "sparrow", "spruce", "thistle", "tiger", "willow", "badger", "beacon", "cedar",
)  # fmt: skip
PLAN_SLUG_BITS = 15


def plan_slug(bits: int) -> str:
    """A three-word slug such as "brave-quiet-river", a pure function of `bits` (R76).

    Only the low PLAN_SLUG_BITS bits matter; the workflow draws them with
    `workflow.random().getrandbits(PLAN_SLUG_BITS)` and draws again when the file exists.
    """
    words = (_FIRST, _SECOND, _THIRD)
    return "-".join(w[(bits >> (5 * i)) % len(w)] for i, w in enumerate(words))


def approved_plan_result(plan: str, plan_path: str, edited: bool = False) -> str:
    """The ExitPlanMode tool_result when the plan is approved: it carries the plan (R79)."""
    return (
        "User has approved your plan. You can now start coding. Start with updating your todo "
        f"list if applicable\n\nYour plan has been saved to: {plan_path}\nYou can refer back "
        "to it if needed during implementation.\n\n"
        f"## Approved Plan{' (edited by user)' if edited else ''}:\n{plan}"
    )


def rejected_plan_result(feedback: str) -> str:
    """The ExitPlanMode tool_result when the user wants to keep planning (R79)."""
    head = "The user rejected your plan and wants to keep planning; you are still in plan mode."
    if not feedback.strip():
        return (
            f"{head} The user gave no reason.\n\nRevise the plan file, then call ExitPlanMode "
            "again."
        )
    return (
        f"{head} The user's feedback:\n\n{feedback.strip()}\n\n"
        "Revise the plan file to address this feedback, then call ExitPlanMode again."
    )


def awaiting_lead_text(lead: str) -> str:
    """The ExitPlanMode tool_result for a worker whose plan its lead approves (R79)."""
    return (
        f"Your plan has been sent to {lead} for approval. Wait for the answer: do not start "
        "implementing and make no changes until the approval arrives. If the plan is "
        "rejected, revise it with the feedback you receive and call ExitPlanMode again."
    )


class EnterPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AllowedPrompt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: Literal["Bash"] = Field(description="The tool the permission applies to.")
    prompt: str = Field(
        description='What the commands do, e.g. "run tests" or "install dependencies".'
    )


class ExitPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allowedPrompts: list[AllowedPrompt] = Field(  # noqa: N815
        default_factory=list,
        description="Categories of Bash commands the implementation will need, by description.",
    )


ENTER_PLAN_MODE_DESCRIPTION = """\
Switch to plan mode, to explore the code and design an approach before writing any. Use it \
proactively before a non-trivial implementation task: a new feature, a change that touches \
several files or the architecture, a task with more than one reasonable approach, or \
requirements unclear enough that you would otherwise be guessing. Skip it for a typo or a \
small obvious fix, for precise step-by-step instructions from the user, and for pure \
research or questions. Entering plan mode needs the user's approval. In plan mode you can \
read and search the code and use Explore and Plan sub-agents, but you can edit nothing \
except the plan file; when the plan is ready, call ExitPlanMode."""

EXIT_PLAN_MODE_DESCRIPTION = """\
Call this in plan mode when the plan you wrote in the plan file is ready for the user's \
approval. The tool reads the plan from the plan file itself: do not pass the plan as a \
parameter. Use it only when planning an implementation, not after research or answering a \
question. Ask any open questions first, then call this tool. Never ask whether the plan is \
okay any other way (in text or with AskUserQuestion): this tool is how approval is asked. \
In allowedPrompts you may list the kinds of Bash commands the implementation will need \
(e.g. "run tests"), so the user can grant them with the approval."""


class PlanApprovalRequest(BaseModel):
    """A worker's plan, sent to its lead's mailbox by ExitPlanMode (R79)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["plan_approval_request"]
    request_id: str
    plan: str
    plan_path: str


class PlanApprovalResponse(BaseModel):
    """The lead's answer to a PlanApprovalRequest, matched by request_id (R79)."""

    # Extra keys are ignored, not refused: a refused answer would leave the worker waiting.
    model_config = ConfigDict(frozen=True)

    type: Literal["plan_approval_response"]
    request_id: str
    approve: bool = Field(strict=True)  # "yes" or 1 is not an approval
    feedback: str | None = None


def plan_approval_request_text(request_id: str, plan: str, plan_path: str) -> str:
    request = PlanApprovalRequest(
        type="plan_approval_request", request_id=request_id, plan=plan, plan_path=plan_path
    )
    return json.dumps(request.model_dump(), ensure_ascii=False)


def parse_plan_approval_request(text: str) -> PlanApprovalRequest | None:
    """The request if `text` is a plan_approval_request, else None (the lead's side)."""
    try:
        return PlanApprovalRequest.model_validate_json(text)
    except (ValidationError, ValueError):
        return None


def as_the_approver_reads_it(text: str) -> str:
    """Mail as the approver's model reads it: a plan approval request with how to answer it
    after it (R79), anything else unchanged. With the request alone, an approver that
    answered in words ("approved") left the asking agent waiting for good."""
    request = parse_plan_approval_request(text)
    if request is None:
        return text
    approve = plan_approval_response_text(request.request_id, True)
    return (
        f"{text}\n\nThe sender waits for your decision on this plan. Answer it with "
        f"SendMessage to the sender, message {approve} to approve, or with "
        '"approve": false and a "feedback" saying what to change; no other message answers it.'
    )


def plan_approval_response_text(request_id: str, approve: bool, feedback: str | None = None) -> str:
    response = PlanApprovalResponse(
        type="plan_approval_response", request_id=request_id, approve=approve, feedback=feedback
    )
    return json.dumps(response.model_dump(exclude_none=True), ensure_ascii=False)


def plan_request_id(number: int, run_generation: int = 1) -> str:
    """`plan-N` for an agent's Nth plan request, `plan-N-runG` in its Gth run: a resumed run
    counts its requests from 1 again, and a lead's late answer to the previous run's `plan-1`
    must not decide a plan the lead has not seen."""
    return f"plan-{number}" if run_generation <= 1 else f"plan-{number}-run{run_generation}"


def parse_plan_approval_response(text: str, request_id: str) -> PlanApprovalResponse | None:
    """The answer to request `request_id`, or None if `text` is not one (other mail)."""
    try:
        response = PlanApprovalResponse.model_validate_json(text)
    except (ValidationError, ValueError):
        return None
    return response if response.request_id == request_id else None
