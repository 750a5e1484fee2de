"""Starting and steering Outlast from Python: the same workflows the CLI starts, typed.

    from outlast.api import start_task
    from outlast.client import connect

    client = await connect()
    task = await start_task(client, "Fix the flaky test", "/src/project", pattern="coordinator")
    print(await task.status())
    result = await task.result()

Any other Temporal client can do the same by name with JSON (see README: "From code"); this
module only adds types and the checks the CLI makes before starting anything.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import socket
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from agents.config import OutlastConfig
from agents.permissions import RESUME_MODES
from agents.questions import QuestionAnswers
from outlast.api_args import check_argument_types
from outlast.api_errors import (
    ANSWER_TIMEOUT,
    NotAnswered,
    NotSupported,
    Refused,
    TaskEnded,
    a_workflow,
)
from outlast.kill_pending import (
    STOP_PENDING,
    being_killed,
    kill_pending,
    members_stopping,
    no_mail_while_killed,
    stop_pending,
)
from outlast.patterns import (
    RESULT_TYPES,
    WORKFLOW_TYPES,
    PatternArgs,
    build_pattern_input,
    first_error,
    fit_to_namespace,
    in_argument_names,
    start_pattern,
)
from outlast.resume import ResumeRefused, carried_line, max_turns_refusal, resume_agent
from outlast.run_ids import closed_run
from outlast.runner import StartError
from outlast.silence import unanswered
from outlast.updates import handler_missing
from workflows.contracts import (
    TASK_QUEUE,
    AgentStatus,
    MailMessage,
    PendingQuestion,
    PlanDecision,
    PlanView,
    StopRequest,
)
from workflows.pattern_contracts import PipelineView, StageDecision, TeamMail, TeamView

__all__ = [
    "NotSupported",
    "Refused",
    "StartError",
    "Task",
    "TaskEnded",
    "resume_task",
    "start_task",
]

AGENT_PATTERNS = ("single", "coordinator")
AGENT_WORKFLOW_TYPES = frozenset({"AgentWorkflow", "CoordinatorWorkflow"})
"""One query and signal set: a coordinator is an agent with workers."""
NO_GRACEFUL_STOP = ("fork-join", "verified")
"""Patterns whose workflow has no `stop` signal: one sent would never be handled."""

logger = logging.getLogger(__name__)


@dataclass
class Task:
    """A started task: its workflow handle, and the operations that fit its pattern."""

    handle: WorkflowHandle
    pattern: str
    of: str | None = None
    """The task this is one agent of (`agent()`), for what a missing one is told."""
    answer_timeout: timedelta = ANSWER_TIMEOUT
    """How long a query or an update waits for a worker's answer before `NotAnswered`."""
    _fits: bool = dataclasses.field(default=False, init=False, repr=False, compare=False)
    """Its workflow was found to be of `pattern`'s type (asked once, before the first query,
    signal or update)."""

    def __post_init__(self) -> None:
        if self.pattern not in RESULT_TYPES:
            close = difflib.get_close_matches(self.pattern, RESULT_TYPES, n=1)
            meant = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"pattern {self.pattern!r}{meant}: one of {', '.join(RESULT_TYPES)}")

    @property
    def id(self) -> str:
        return self.handle.id

    def agent(self, name: str) -> Task:
        """One of its agents, to steer on its own, as `outlast stop ID/NAME` does: a team's
        member (`reviewer`), a fork (`fork-2`), a pipeline's stage (`look`; its re-run
        `look-2`), a verified task's `implementer` or `verify-N`, a sub-agent by its name.
        Its `status`, `send`, `stop`, `kill` and plan operations act on that agent alone;
        its pattern takes the end as it takes any (a killed fork is reported by the join, a
        stopped member ends `stopped`, a killed verifier is a FAIL round). Nothing is asked
        of the server here: an agent that is not running raises TaskEnded when steered.

        Raises:
            ValueError: `name` is empty or holds a `/` (ask the agent that has it)."""
        if not name.strip() or "/" in name:
            raise ValueError(f"agent name {name!r}: one name, as its workflow id ends")
        # WorkflowHandle keeps the client it was made with; Task has no other.
        client = self.handle._client  # noqa: SLF001
        handle = client.get_workflow_handle(f"{self.id}/{name}")
        return Task(handle=handle, pattern="single", of=self.id, answer_timeout=self.answer_timeout)

    async def result(self) -> Any:
        """Wait for the end: an `AgentResult`, `PipelineResult`, `TeamResult`, ...

        Raises:
            WorkflowFailureError: the workflow failed, was killed (its cause a
                CancelledError) or terminated; no result.
            TaskEnded: the server has no workflow by this id (it raised the bare RPCError)."""
        handle = self.handle
        if handle._result_type is None:  # noqa: SLF001 (the SDK has no public getter)
            # A handle from `get_workflow_handle(id)` (as `agent()` and StartError's advice
            # make) decoded the result as a plain dict.
            handle = WorkflowHandle(
                handle._client,  # noqa: SLF001
                handle.id,
                run_id=handle.run_id,
                result_run_id=handle.result_run_id,
                first_execution_run_id=handle.first_execution_run_id,
                result_type=RESULT_TYPES[self.pattern],
            )
        try:
            return await handle.result()
        except RPCError as e:
            if e.status != RPCStatusCode.NOT_FOUND:
                raise
            raise TaskEnded(f"{self._not_running(e.message)}; there is no result") from None

    async def status(self) -> AgentStatus | PipelineView | TeamView | Any:
        """Where it stands now (the pattern's own query)."""
        if self.pattern in AGENT_PATTERNS:
            return await self._query("status", result_type=AgentStatus)
        if self.pattern == "pipeline":
            return await self._query("pipeline", result_type=PipelineView)
        if self.pattern == "team":
            return await self._query("team", result_type=TeamView)
        if self.pattern == "verified":
            return await self._query("rounds")
        return await self._query("forks")

    async def send(self, text: str, to: str | None = None) -> str | None:
        """A message for the agent's next turn (for a team: to member `to`, default the lead).
        A team answers whom it reached (`Message sent to b.`); an agent, None.

        Raises:
            NotSupported: the pattern has no mailbox, or `to` is given to no team (nothing
                was sent).
            ValueError: `text` or `to` is empty (nothing was sent).
            TaskEnded: the task is not running, or is being killed and reads no more mail
                (nothing was sent).
            Refused: the team refused it; the message says why (no member of that name)."""
        if not text.strip():
            raise ValueError("an empty message: give the text to send")
        if to is not None and not to.strip():
            # As `outlast send --to ""`: an empty name is a slip, not a choice of the lead.
            raise ValueError("`to` is empty: name a member, or `*` (leave it out for the lead)")
        if self.pattern not in (*AGENT_PATTERNS, "team"):
            raise NotSupported(
                f"a {self.pattern} task takes no messages; they go to agents and teams"
            )
        if to is not None and self.pattern != "team":
            raise NotSupported(f"`to` names a team's member; this is a {self.pattern} task")
        if self.pattern == "team":
            mail = TeamMail(to="lead" if to is None else to, text=text)
            said = await self._update("message_member", mail)
            for name in await members_stopping(self.handle, to):
                logger.warning("%s: %s: %s", self.id, name, STOP_PENDING)  # as `outlast send`
            return said
        await self._check_pattern("'send_message' signal")
        if await kill_pending(self.handle):
            sub = self.of is not None or "/" in self.id
            resume = (
                "its parent continues it with SendMessage."
                if sub
                else "resume_task goes on with it."
            )
            raise TaskEnded(no_mail_while_killed(self.id, resume))
        await self._signal("send_message", MailMessage(text=text))
        if await stop_pending(self.handle):
            # As `outlast send` warns: it was silent (a user test, 2026-12-07).
            logger.warning("%s: %s; a resume sends it first", self.id, STOP_PENDING)
        return None

    async def stop(self, reason: str = "") -> None:
        """Graceful: finish the current turn (or stage), then end.

        Raises:
            NotSupported: the pattern has no graceful stop (nothing was sent).
            TaskEnded: the task is not running (nothing was sent)."""
        if self.pattern in NO_GRACEFUL_STOP:
            raise NotSupported(f"a {self.pattern} task has no graceful stop; use kill()")
        name = "shutdown" if self.pattern == "team" else "stop"
        await self._signal(name, StopRequest(reason=reason))

    async def _check_pattern(self, what: str) -> None:
        """NotSupported if the workflow is of another pattern than this Task was made with
        (`Task(handle, pattern=...)`): a query raised Temporal's own "expected but not found",
        and a signal was taken and never handled (a user test, 2026-12-06). A workflow the
        server does not have is left to the operation, which says so."""
        if self._fits:
            return
        try:
            desc = await self.handle.describe()
        except RPCError:
            return
        if (remedy := self._misfit(desc.workflow_type)) is not None:
            raise NotSupported(
                f"{self.id} ({a_workflow(desc.workflow_type)}) is not a {self.pattern} task: it "
                f"has no {what}; {remedy}; nothing was sent"
            )

    def _misfit(self, workflow_type: str) -> str | None:
        """None if a workflow of `workflow_type` is of this Task's pattern (noted); else what
        to do instead."""
        wanted = WORKFLOW_TYPES[self.pattern]
        if workflow_type == wanted or {workflow_type, wanted} <= AGENT_WORKFLOW_TYPES:
            self._fits = True
            return None
        # By its type: a member's `Pattern` is its session's (a team's reviewer is a `team`
        # AgentWorkflow, which a Task of pattern "team" cannot steer).
        actual = next((p for p, t in WORKFLOW_TYPES.items() if t == workflow_type), None)
        if actual:
            return f"make its Task with pattern={actual!r}"
        if workflow_type == "ShellTaskWorkflow":
            return "it is a background command: only kill() acts on it"
        return "it is no Outlast task"

    async def _query(self, name: str, **kw: Any) -> Any:
        """A query's answer; a task the server has no workflow of as `TaskEnded` (one of its
        agents by a name that is none of them raised the bare RPCError)."""
        await self._check_pattern(f"{name!r} query")
        try:
            return await self.handle.query(name, **{"rpc_timeout": self.answer_timeout, **kw})
        except RPCError as e:
            if unanswered(e):
                raise NotAnswered(
                    f"no worker answered the {name!r} query for {self.id} ({e.message}); is "
                    "one running? (`outlast worker`)"
                ) from None
            if e.status != RPCStatusCode.NOT_FOUND:
                raise
            raise TaskEnded(f"{self._not_running(e.message)}; nothing was asked") from None

    async def _signal(self, name: str, payload: object) -> None:
        await self._check_pattern(f"{name!r} signal")
        try:
            await self.handle.signal(name, payload)
        except RPCError as e:
            raise self._ended(e) from None

    def _ended(self, e: RPCError) -> TaskEnded | RPCError:
        """What a signal's or update's RPCError means: the task is not running, or itself."""
        if e.status != RPCStatusCode.NOT_FOUND:
            return e
        return TaskEnded(f"{self._not_running(e.message)}; nothing was sent")

    def _not_running(self, said: str) -> str:
        """A task the server has no running workflow of: for one of a task's agents, perhaps
        a name that is none of them (`agent("alcie")` read as "not running")."""
        if self.of is not None and "not found" in said:
            name = self.id.removeprefix(f"{self.of}/")
            return f"{self.of} has no agent {name!r} that ever ran (no workflow {self.id})"
        return f"{self.id} is not running ({said})"

    async def _update(self, name: str, payload: object) -> str:
        """An update's answer; a refusal as `Refused`, an ended task as `TaskEnded` (both
        came as Temporal's own errors: "Workflow update failed", a bare RPCError)."""
        await self._check_pattern(f"{name!r} update")
        try:
            return await self.handle.execute_update(
                name, payload, result_type=str, rpc_timeout=self.answer_timeout
            )
        except WorkflowUpdateFailedError as e:
            raise Refused(e.cause) from e.cause  # `.cause`, as Temporal's error has it
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            raise self._not_answered(name) from None
        except RPCError as e:
            raise self._not_answered(name) if unanswered(e) else self._ended(e) from None

    def _not_answered(self, update: str) -> NotAnswered:
        return NotAnswered(
            f"no worker answered for {self.id} within {self.answer_timeout.total_seconds():.0f}"
            f" s: the {update!r} update waits on the server for one and may still be applied "
            "then; check status() before sending it again (is a worker running? `outlast "
            "worker`)"
        )

    async def kill(self, reason: str = "") -> bool:
        """Cancellation: running tools are killed, cleanup runs. `reason` is recorded with
        the cancel (history, Web UI), and a sub-agent's parent reads it in its end. False
        if a kill was requested already: this one adds nothing, and its reason is not
        recorded (the server takes a second cancel without a word).

        Raises:
            TaskEnded: the task is not running (nothing was cancelled: the server takes a
                cancel of a closed workflow without a word).
            NotSupported: the workflow is of another pattern than this Task's (nothing was
                cancelled); a background command's is killed by any Task."""
        try:
            desc = await self.handle.describe()
        except RPCError as e:
            if e.status != RPCStatusCode.NOT_FOUND:
                raise
            msg = f"{self._not_running(e.message)}; nothing was cancelled"
            raise TaskEnded(msg) from None
        if desc.status != WorkflowExecutionStatus.RUNNING:
            state = desc.status.name.lower() if desc.status else "closed"
            raise TaskEnded(f"{self.id} is not running ({state}); nothing was cancelled")
        # The wrong Task's query or signal is refused; its kill cancelled the workflow (a
        # user test, 2026-12-07).
        kind = desc.workflow_type
        if kind != "ShellTaskWorkflow" and (remedy := self._misfit(kind)) is not None:
            raise NotSupported(
                f"{self.id} ({a_workflow(kind)}) is not a {self.pattern} task; {remedy}; nothing "
                "was cancelled"
            )
        if being_killed(desc):
            return False  # said by the result alone: a library's warning went to stderr
        await self.handle.cancel(reason=reason)
        return True

    async def plan(self) -> PlanView:
        """The agent's plan mode, and the plan waiting for approval, if any.

        Raises:
            NotSupported: the task is no agent of its own (a pipeline, team, ...)."""
        # approve_plan() and reject_plan() ask this first.
        stages = "; a pipeline's stages are decided with decide_stage()"
        self._agent_only(
            "plans: plan(), approve_plan() and reject_plan() are for a single agent or a "
            f"coordinator{stages if self.pattern == 'pipeline' else ''}"
        )
        return await self._query("plan", result_type=PlanView)

    async def approve_plan(self, target_mode: str | None = None) -> bool:
        """Approve the pending plan; False (nothing sent) if no plan is waiting.

        Raises:
            TaskEnded: the task is not running (nothing was sent).
            Refused: the plan was decided meanwhile (by another approve or reject), or
                another plan waits now.
            NotSupported: the task is no agent of its own (a pipeline's stages are decided
                with decide_stage()).
            ValueError: `target_mode` is not a mode a plan's approval continues in."""
        if target_mode is not None and target_mode not in RESUME_MODES:
            raise ValueError(
                f"target_mode {target_mode!r}: choose one of {', '.join(RESUME_MODES)}"
            )
        return await self._decide_plan(True, "", target_mode)

    async def reject_plan(self, feedback: str) -> bool:
        """Send the pending plan back with `feedback`; False (nothing sent) if none waits.

        Raises:
            TaskEnded: the task is not running (nothing was sent).
            Refused: the plan was decided meanwhile, or another plan waits now.
            NotSupported: the task is no agent of its own."""
        return await self._decide_plan(False, feedback, None)

    async def decide_stage(
        self,
        stage: str,
        approve: bool,
        *,
        feedback: str = "",
        rerun: bool = False,
        attempt: int | None = None,
    ) -> str:
        """Approve or reject a pipeline stage waiting for approval (or re-run it with
        `feedback`); the answer says what the pipeline did. With `attempt`
        (`PipelineView.awaiting_attempt`) only that attempt is decided on.

        Raises:
            NotSupported: this is not a pipeline (nothing was sent).
            ValueError: `rerun` with `approve` (nothing was sent).
            Refused: the pipeline refused it; the message says why (no such stage waits,
                that attempt does not, it was decided already).
            TaskEnded: the pipeline is not running (nothing was sent)."""
        if self.pattern != "pipeline":
            raise NotSupported(
                f"a {self.pattern} task has no stages; approve_plan() decides an agent's plan"
            )
        if rerun and approve:
            raise ValueError("rerun is a rejection's: pass approve=False with rerun=True")
        decision = StageDecision(
            stage=stage, approve=approve, feedback=feedback, rerun=rerun, attempt=attempt
        )
        return await self._update("decide_stage", decision)

    async def question(self) -> PendingQuestion | None:
        """The questions the agent waits with at AskUserQuestion, or None.

        Raises:
            NotSupported: the task is no agent of its own."""
        self._agent_only("questions of its own")
        return await self._query("question", result_type=PendingQuestion | None)

    async def answer(self, answers: dict[str, str], request_id: str | None = None) -> str:
        """Answer the waiting questions: question text -> a choice's label (several joined
        by ", " where more than one may be picked) or your own words. Returns the request id
        answered.

        Raises:
            NotSupported: this is not a single agent's task (nothing was sent).
            Refused: the agent refused it; the message says why (no question waits, one is
                left unanswered, an answer names a question not asked).
            TypeError: `answers` is not a dict of strings (nothing was sent).
            TaskEnded: the agent is not running (nothing was sent)."""
        if self.pattern != "single":
            raise NotSupported(f"a {self.pattern} task asks no questions of its own")
        try:
            payload = QuestionAnswers(request_id=request_id, answers=answers)
        except ValidationError as e:
            # pydantic's own report, with its errors.pydantic.dev link (a user test).
            raise TypeError(
                f"answer() answers: a dict of question text -> answer text ({first_error(e)})"
            ) from None
        return await self._update("answer_question", payload)

    def _agent_only(self, what: str) -> None:
        """NotSupported (`a pipeline task has no <what>`) unless this is an agent's task."""
        # A pattern's workflow has no such query: Temporal would answer with its own words.
        if self.pattern not in AGENT_PATTERNS:
            raise NotSupported(f"a {self.pattern} task has no {what}")

    async def _decide_plan(self, approve: bool, feedback: str, mode: str | None) -> bool:
        pending = (await self.plan()).pending
        if pending is None:
            # A closed run answers the query too (by replay): it has no plan, and never will.
            desc = await self.handle.describe()
            if desc.status != WorkflowExecutionStatus.RUNNING:
                state = desc.status.name.lower() if desc.status else "closed"
                raise TaskEnded(f"{self.id} is not running ({state}); nothing was sent")
            return False
        decision = PlanDecision(
            request_id=pending.request_id, approve=approve, feedback=feedback, target_mode=mode
        )
        # The update answers: another decision that came first since the query is refused
        # (`Refused`), where a signal was taken for this one. A worker of an earlier release
        # has no such update: the signal then, as before.
        try:
            await self.handle.execute_update(
                "decide_plan", decision, result_type=str, rpc_timeout=self.answer_timeout
            )
            return True
        except WorkflowUpdateFailedError as e:
            if not handler_missing(e, "decide_plan"):
                raise Refused(e.cause) from e.cause
        except WorkflowUpdateRPCTimeoutOrCancelledError:
            raise self._not_answered("decide_plan") from None
        except RPCError as e:
            raise self._not_answered("decide_plan") if unanswered(e) else self._ended(e) from None
        try:
            await self.handle.signal("approve_plan" if approve else "reject_plan", decision)
        except RPCError as e:
            raise self._ended(e) from None
        return True


async def start_task(
    client: Client,
    task: str,
    repo: str | os.PathLike[str],
    *,
    pattern: str = "single",
    workflow_id: str | None = None,
    task_queue: str = TASK_QUEUE,
    host_id: str | None = None,
    **options: Any,
) -> Task:
    """Start `task` on the checkout `repo` as `pattern` (single, coordinator, pipeline,
    team, fork-join, verified). `options` are `PatternArgs` fields: `agent_type`, `model`,
    `max_turns`, `teammates`, `team_tasks`, `team_name`, `forks`, `approve`, `max_rounds`,
    `plan_first`, `config`.

    Raises:
        StartError: an argument that would start a task doomed to fail, or, without
            `config`, an environment setting Outlast cannot read, or a server that refuses
            to list the namespace's search attributes (the message says what to fix);
            nothing was started. A namespace without Outlast's search attributes runs the
            task without them (logged), as `outlast run` does. Also a `workflow_id` that a
            running workflow has, or one that ran and ended (`resume_task` goes on with it).
    """
    known = [f.name for f in dataclasses.fields(PatternArgs)]
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            meant = f" (did you mean {close[0]}?)" if close else ""
            raise TypeError(f"start_task() got an unexpected keyword argument {name!r}{meant}")
    for name in ("teammates", "team_tasks", "forks"):
        if isinstance(options.get(name), str):
            # A string is a list of its characters: `forks="audit a"` was six forks.
            raise TypeError(f"start_task() {name}: a list of strings, not one string")
    check_argument_types(task, workflow_id, options)
    if isinstance(config := options.get("config"), dict):
        try:
            options["config"] = OutlastConfig.model_validate(config)
        except ValidationError as e:  # it failed deep inside, as an AttributeError
            raise StartError(f"config: {first_error(e)}") from None
    host = host_id or os.environ.get("OUTLAST_HOST_ID") or socket.gethostname()
    args = PatternArgs(pattern=pattern, task=task, repo=repo, host_id=host, **options)
    try:
        built = build_pattern_input(args)
    except StartError as e:
        raise StartError(in_argument_names(str(e))) from None
    inp, missing = await fit_to_namespace(client, built)
    if missing:
        logger.warning(
            "namespace %s lacks Outlast's search attributes (%s): the task starts without "
            "them; register them once with `outlast setup`",
            client.namespace,
            ", ".join(missing),
        )
    if workflow_id is not None and (ran := await closed_run(client, workflow_id)) is not None:
        # As `outlast run --id` refuses it: a new run beside it would hide it from `show`,
        # under the same id (a user test, 2026-12-06).
        raise StartError(
            f"workflow_id {workflow_id}: a workflow with that id already ran ({ran}); "
            "choose another id (resume_task() goes on with an agent that ended, not with a "
            "pattern's workflow)"
        )
    try:
        handle = await start_pattern(
            client, pattern, inp, workflow_id=workflow_id, task_queue=task_queue
        )
    except WorkflowAlreadyStartedError:
        raise StartError(
            f"workflow_id {workflow_id}: a workflow with that id is running; steer it with "
            f"Task(handle=client.get_workflow_handle({workflow_id!r}), pattern=...), or "
            "choose another id"
        ) from None
    return Task(handle=handle, pattern=pattern)


async def resume_task(
    client: Client, workflow_id: str, message: str, *, max_turns: int | None = None
) -> Task:
    """Go on with the agent `workflow_id`, which ended (completed, stopped, killed, failed,
    out of turns): a new run of its id from the conversation it ended with, `message` its
    next turn, `max_turns` its turn limit (None: the ended run's) (`outlast resume`;
    `outlast/resume.py`).

    Raises:
        TypeError: a `max_turns` that is not a whole number of turns, 1 or more.
        StartError: an empty message, a workflow that is running, is neither an
            AgentWorkflow nor a CoordinatorWorkflow, is a sub-agent or a teammate (its parent
            or team resumes it), ended before its first model call answered, or was started
            again meanwhile; the message says which. Nothing was started.
    """
    for name, value in (("workflow_id", workflow_id), ("message", message)):
        if not isinstance(value, str):
            raise TypeError(f"resume_task() {name}: a string, not {type(value).__name__}")
    if refusal := max_turns_refusal(max_turns):
        raise TypeError(f"resume_task() {refusal}")
    try:
        resumed = await resume_agent(client, workflow_id, message, max_turns=max_turns)
    except ResumeRefused as e:
        raise StartError(str(e)) from None
    for child in resumed.cancelled:
        logger.warning("cancelled %s: the ended run of %s had left it running", child, workflow_id)
    for text in resumed.carried:
        logger.warning("%s: %s", workflow_id, carried_line(text))
    if resumed.unstarted:
        names = ", ".join(resumed.unstarted)
        logger.warning("%s: queued workers its ended run never started: %s", workflow_id, names)
    return Task(handle=resumed.handle, pattern=resumed.pattern)
