"""`ForkJoinWorkflow` (R90): fork one conversation N ways, run the forks in parallel, join
every result, optionally synthesize.

Every fork is a child `AgentWorkflow` on the fork path: it gets the shared conversation by
reference (not a copy) and sends the very same prompt, tool and message bytes as its siblings
up to its own directive, so forks 2..N read that whole prefix from the prompt cache.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, ChildWorkflowError, is_cancelled_exception
from temporalio.workflow import ParentClosePolicy

from agents.builtin.fork import DEFINITION as FORK_DEFINITION
from agents.builtin.fork import FORK_QUERY_SOURCE
from agents.control_tools import TaskStopInput
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agents.notifications import TaskNotification, format_task_notification, summary_for
from agents.spawn import new_agent_id
from agents.transcript import TranscriptRef

with workflow.unsafe.imports_passed_through():
    from activities.errors import InvalidAgentInput
    from activities.llm import ModelRequest
    from activities.resume import AppendInput, append

from workflows import search_attributes as sa
from workflows import versions
from workflows.agent_setup import SETUP_OPTIONS, Prepared, lineage_of, prepare
from workflows.child_agents import ended_usage
from workflows.client_input import given_input, refuse_unknown_fields
from workflows.contracts import (
    AgentInput,
    AgentResult,
    AgentUsage,
    ForkContext,
    ForkJoinInput,
    ForkJoinResult,
    ForkOutcome,
    Lineage,
)
from workflows.fork_details import render_fork_details
from workflows.held_handlers import answer_held
from workflows.model_call import call_the_model
from workflows.registry import figures
from workflows.signal_input import Refusals
from workflows.signals import cancel_workflow
from workflows.turns import add_usage, sum_usages


def total_usage(outcomes: list[ForkOutcome], duration_ms: int) -> AgentUsage:
    return sum_usages([o.usage for o in outcomes], duration_ms)


def outcome_text(o: ForkOutcome) -> str:
    """A fork's result as its parent conversation reads it: a `<task-notification>`."""
    return format_task_notification(
        TaskNotification(
            task_id=o.agent_id,
            status=o.status,
            summary=summary_for(o.status, f"fork {o.index + 1}", o.error),
            result=o.final_text or None,
            usage=figures(o.usage),
        )
    )


STOP_STARTING_FORK = "fork-stop-when-started"
"""Patch: a `task_stop` for a fork whose start is in flight is applied once it has started
(the cancel of a workflow not there yet failed the whole fork-join)."""
END_WAITS_HANDLERS = "fork-join-end-waits-handlers"
"""Patch: a fork-join that is killed or fails with a `task_stop` handler unfinished lets it
finish (workflows/held_handlers.py)."""


FORKS_NOT_DONE = "forks not done"
"""A fork-join's `AgentStatus` at its end when a fork did not do its part (`ls` shows
`completed (forks not done)`, as a team's `tasks not done`)."""


@workflow.defn(name="ForkJoinWorkflow")
class ForkJoinWorkflow:
    def __init__(self) -> None:
        self._outcomes: dict[int, ForkOutcome] = {}
        self._children: dict[int, tuple[str, str]] = {}
        """index -> (agent id, workflow id) of every fork started (or starting)."""
        self._started: set[int] = set()
        """Forks whose start has completed."""
        self._stop_on_start: set[int] = set()
        """Forks a `task_stop` named while their start was in flight."""
        self._directives: list[str] = []
        self._marks = sa.PatternMarks()
        self._refusals = Refusals()
        self._step = "starting"

    @workflow.run
    async def run(self, inp: ForkJoinInput | None = None) -> ForkJoinResult:
        inp = given_input("ForkJoinWorkflow", inp, ForkJoinInput)
        refuse_unknown_fields("ForkJoinWorkflow", inp)
        started = workflow.now()
        _validate(inp)
        # Drawn before the start's upsert, which draws nothing: the same draws, in the same
        # order, as before. Its forks name it their parent agent, so it has it too: their
        # `ParentAgentId` named no workflow (a user test, 2026-12-07).
        lineage = lineage_of(AgentInput(prompt="", workspace=inp.workspace))
        self._marks.start(inp.config.search_attributes, "fork-join", agent_id=lineage.agent_id)
        try:
            return await self._fork_and_join(inp, started, lineage)
        except BaseException as e:
            self._marks.ended_by(e)
            # A `task_stop` still sending its cancel finishes first (nothing answers it: a
            # signal; temporalio warns of a run that ends under a handler).
            await answer_held(END_WAITS_HANDLERS, e, lambda _: None)
            raise

    async def _fork_and_join(
        self, inp: ForkJoinInput, started: datetime, lineage: Lineage
    ) -> ForkJoinResult:
        self._directives = list(inp.directives)
        source = await self._source(inp, lineage)
        uses = [
            ToolUseBlock(
                id=f"toolu_{workflow.uuid4().hex[:24]}",
                name="Agent",
                input={"description": f"fork {i + 1}", "prompt": d},
            )
            for i, d in enumerate(inp.directives)
        ]
        prefix = [Message.user_text(inp.context)] if inp.context else []
        prefix.append(Message(role="assistant", content=[*uses]))
        # Written once; every fork gets it by reference, however long the context is.
        base = await workflow.execute_activity(
            append,
            AppendInput(transcript=inp.transcript or TranscriptRef(), messages=prefix),
            task_queue=inp.workspace.host_queue,
            summary=f"the forks' shared context ({len(uses)} forks)",
            **SETUP_OPTIONS,
        )
        self._show("forking")
        handles = await asyncio.gather(
            *(
                self._start_fork(inp, source, lineage, base, uses, i)
                for i in range(len(inp.directives))
            )
        )
        self._show("waiting for the forks")
        outcomes = list(await asyncio.gather(*(self._join(i, h) for i, h in enumerate(handles))))
        elapsed = int((workflow.now() - started).total_seconds() * 1000)
        result = ForkJoinResult(forks=outcomes, usage=total_usage(outcomes, elapsed))
        if inp.synthesize:
            self._show("synthesizing the forks' reports")
            result = await self._synthesize(inp, source, base, uses, result)
        await workflow.wait_condition(workflow.all_handlers_finished)
        # A fork killed, stopped or out of turns: `ls` and the Web UI read plain `completed`
        # while `run` exits 1 and `show` counts it (a user test, 2026-12-07). The upsert's
        # value only, which a replay does not compare.
        done = all(f.finished() for f in result.forks)
        self._marks.end("completed" if done else FORKS_NOT_DONE)
        self._show("completed" if done else f"ended: {FORKS_NOT_DONE}")
        return result

    def _show(self, step: str | None = None) -> None:
        """The Web UI's current details (not a command: nothing a replay compares)."""
        self._step = step or self._step
        workflow.set_current_details(
            render_fork_details(
                self._directives,
                self._children,
                self._outcomes,
                self._started,
                self._step,
                self._refusals.texts,
            )
        )

    async def _source(self, inp: ForkJoinInput, lineage: Lineage) -> Prepared:
        """The prompt and tools every fork inherits: given, or rendered once here."""
        agent = AgentInput(
            prompt=inp.context or "",
            workspace=inp.workspace,
            agent_type=inp.agent_type,
            model=inp.model,
            config=inp.config,
        )
        prepared = await prepare(agent, lineage)
        if inp.system_ref is None:
            return prepared
        request = prepared.request.model_copy(
            update={"system_ref": inp.system_ref, "tools_ref": inp.tools_ref}
        )
        return prepared.model_copy(update={"request": request, "tools": inp.tools or []})

    async def _start_fork(self, inp, source: Prepared, lineage, base, uses, i: int):
        agent_id = new_agent_id(workflow.random().getrandbits(64))
        workflow_id = f"{workflow.info().workflow_id}/fork-{i + 1}"
        self._children[i] = (agent_id, workflow_id)
        child = AgentInput(
            prompt="",
            workspace=inp.workspace,
            agent_type=FORK_DEFINITION.agent_type,
            definition=FORK_DEFINITION,
            tools=source.tools,
            model=source.model,
            config=inp.config,
            lineage=Lineage(
                agent_id=agent_id,
                chain_id=str(workflow.uuid4()),
                depth=1,
                session_id=lineage.session_id,
                parent_workflow_id=workflow.info().workflow_id,
                parent_agent_id=lineage.agent_id,
                pattern="fork-join",
            ),
            description=f"fork {i + 1}",
            background=True,
            permission_mode="bubble",
            definitions=source.definitions,
            query_source=FORK_QUERY_SOURCE,
            fork=ForkContext(
                system_ref=source.request.system_ref,
                tools_ref=source.request.tools_ref,
                tools=source.tools,
                model=source.model,
                base=base,
                tool_use_ids=[u.id for u in uses],
                directive=inp.directives[i],
            ),
        )
        child, attributes = sa.child_start(child)
        handle = await workflow.start_child_workflow(
            "AgentWorkflow",
            child,
            id=workflow_id,
            result_type=AgentResult,
            # The join waits for every fork: cancelling the fork-join cancels its forks.
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            static_summary=f"fork {i + 1}: {inp.directives[i][:80]}",
            search_attributes=attributes,
        )
        self._started.add(i)
        self._show()
        if i in self._stop_on_start:
            with contextlib.suppress(ApplicationError):  # it has closed already
                await cancel_workflow(workflow_id)
        return handle

    async def _join(self, i: int, handle) -> ForkOutcome:
        agent_id, workflow_id = self._children[i]
        directive = self._directives[i]
        try:
            result: AgentResult = await handle
            outcome = ForkOutcome(
                index=i,
                directive=directive,
                agent_id=agent_id,
                workflow_id=workflow_id,
                status=result.status,
                final_text=(
                    f"{result.handoff_warning}\n\n{result.final_text}"
                    if result.handoff_warning
                    else result.final_text
                ),
                usage=result.usage,
                stopped=result.stopped,
                max_turns_reached=result.max_turns_reached,
            )
        except ChildWorkflowError as e:
            killed = is_cancelled_exception(e)
            outcome = ForkOutcome(
                index=i,
                directive=directive,
                agent_id=agent_id,
                workflow_id=workflow_id,
                status="killed" if killed else "failed",
                error=None if killed else getattr(e.cause, "message", None) or str(e.cause),
                usage=await ended_usage(workflow_id),
            )
        self._outcomes[i] = outcome
        self._show()
        return outcome

    async def _synthesize(self, inp, source: Prepared, base, uses, result):
        """One more turn of the forked conversation, with every fork's result in it."""
        results = [
            ToolResultBlock(tool_use_id=u.id, content=outcome_text(o))
            for u, o in zip(uses, result.forks, strict=True)
        ]
        closing = Message(role="user", content=[*results, TextBlock(text=inp.synthesis_prompt)])
        request: ModelRequest = source.request.model_copy(
            update={"transcript": base, "append": [closing]}
        )
        summary = f"{workflow.info().workflow_id}: synthesis of {len(uses)} forks"
        response, _ = await call_the_model(inp.config, request, summary)
        turn = add_usage(AgentUsage(), response.usage, 0, 0)
        usage = result.usage.model_copy(
            update={
                "total_tokens": result.usage.total_tokens + turn.total_tokens,
                "tokens": result.usage.tokens + response.usage,
            }
        )
        return result.model_copy(
            update={
                "synthesis": response.message.text(),
                "usage": usage,
                "transcript": response.transcript,
            }
        )

    @workflow.signal(name="task_stop")
    async def task_stop(self, request: Any = None, *extra: Any) -> None:
        """Stop one fork: by index (`3`, `fork-3`), agent id or workflow id. Its outcome is
        reported `killed`; the others go on. An input that does not fit, or names no running
        fork, is refused (workflows/signal_input.py) and listed by `refused_signals`."""
        checked = self._refusals.checked("task_stop", TaskStopInput, request, extra)
        if checked is None:
            self._show()  # its refusal
            return
        found = fork_named(self._children, checked.target)
        if found is None:
            self._refuse(no_fork_text(checked.target, len(self._directives), len(self._children)))
        elif found in self._outcomes:
            ended = self._outcomes[found].status
            self._refuse(f"signal `task_stop` refused: fork {found + 1} has ended ({ended})")
        elif found not in self._started and versions.patched(STOP_STARTING_FORK):
            self._stop_on_start.add(found)  # cancelled by `_start_fork` once started
        else:
            await cancel_workflow(self._children[found][1])

    def _refuse(self, text: str) -> None:
        self._refusals.keep(text)
        self._show()

    @workflow.signal(dynamic=True)
    def unknown_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """A signal of a name fork-join has no handler for (`stop`) is refused, not lost."""
        hint = "a fork-join has no graceful stop: a cancel (`outlast kill`) ends it"
        self._refusals.unknown_signal("ForkJoinWorkflow", name, ("task_stop",), hint)
        self._show()

    @workflow.query(name="forks")
    def forks(self) -> list[ForkOutcome]:
        """Finished forks' outcomes so far, by index."""
        return [self._outcomes[i] for i in sorted(self._outcomes)]

    @workflow.query(name="refused_signals")
    def refused_signals(self) -> list[str]:
        """The latest signals refused, newest last, each saying why."""
        return self._refusals.texts


def fork_named(children: dict[int, tuple[str, str]], target: str) -> int | None:
    """The index of the started fork `target` names: its number (`3`, `fork-3`), agent id
    or workflow id."""
    for i, (agent_id, workflow_id) in children.items():
        if target in (agent_id, workflow_id, str(i + 1), f"fork-{i + 1}"):
            return i
    return None


def no_fork_text(target: str, directives: int, started: int) -> str:
    """Why a `task_stop` naming no started fork is refused."""
    if started < directives:
        # The forks start one after another when the shared conversation is ready.
        return (
            f"signal `task_stop` refused: no started fork is `{target}`; "
            f"{started} of {directives} forks have started, try again when yours has"
        )
    return (
        f"signal `task_stop` refused: no fork is `{target}`; name one by its number "
        f"(1-{directives} or fork-1..fork-{directives}), agent id or workflow id"
    )


BLANK_DIRECTIVES = "fork-join-blank-directives"
"""Patch id: a blank directive ran a fork with nothing to do (`outlast run` refused it)."""


def _validate(inp: ForkJoinInput) -> None:
    if not inp.context and inp.transcript is None:
        raise InvalidAgentInput("ForkJoinWorkflow needs `context` or `transcript` to fork from")
    blank = [n for n, d in enumerate(inp.directives) if not d.strip()]
    # Asked only for such an input: every other run's history stays as it was.
    if blank and versions.patched(BLANK_DIRECTIVES):
        raise InvalidAgentInput(
            f"directives[{blank[0]}] is blank: say what fork {blank[0] + 1} should do"
        )
    limit = inp.config.agents.max_concurrent
    if len(inp.directives) > limit:
        raise InvalidAgentInput(
            f"{len(inp.directives)} directives, but at most {limit} forks run at once "
            "(config agents.max_concurrent)"
        )
    if inp.system_ref is not None and not inp.tools:
        raise InvalidAgentInput("`system_ref` needs the `tools` list the prompt was rendered with")
