"""The single registry of coding tools: what the model sees and how the workflow runs them.

Each tool's description, input schema, activity, timeouts and retry policy live in one
`ToolSpec`, so call sites only look a tool up by its model-facing name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio.common import RetryPolicy

from activities.tools import bash, edit, glob, grep, notebook_edit, read, skill, write
from activities.tools.base import KillRequest, ToolContext, ToolOutput, ToolRequest

HEARTBEAT_TIMEOUT = timedelta(seconds=30)
# Read, Glob, Grep and Skill change nothing, and Write, Edit and NotebookEdit detect an attempt
# that already happened, so retrying them after a worker crash is safe.
IDEMPOTENT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=3,
)
# A command whose worker died is run once more, never blindly: the new attempt first kills
# whatever the interrupted one left running, and its result tells the model it was re-run
# (bash_runs.py). Commands that fail are results, not exceptions: they are never retried.
# The attempts beyond that second one are for graceful worker stops (a rolling deploy stops
# each worker in turn): the activity itself refuses a third run after two crashes
# (bash_runs.MAX_CRASH_RERUNS).
BASH_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=6)


def _fixed(timeout: timedelta) -> Callable[[Any], timedelta]:
    return lambda _input: timeout


def _bash_timeout(inp: bash.BashInput) -> timedelta:
    # The command's own timeout plus room to kill it and collect its output.
    return timedelta(milliseconds=inp.timeout or bash.DEFAULT_TIMEOUT_MS) + timedelta(seconds=30)


def clean_schema(node: Any) -> Any:
    """A pydantic JSON schema as the model should see it: no titles, no `null` alternatives.

    An optional field becomes a plain typed property that is simply not required, which is how
    Claude Code's own schemas spell it.
    """
    if isinstance(node, list):
        return [clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    # A string-valued `title` is pydantic's label; a property named "title" would be a dict.
    out = {k: clean_schema(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    alternatives = out.get("anyOf")
    if (
        isinstance(alternatives, list)
        and len(alternatives) == 2
        and {"type": "null"} in alternatives
    ):
        (kept,) = [alt for alt in alternatives if alt != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out}
        if "default" in out and out["default"] is None:
            del out["default"]
    return out


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its model-facing contract and how to run it as an activity."""

    name: str
    description: str
    input_model: type[BaseModel]
    request_model: type[ToolRequest]
    activity: Callable[..., Awaitable[ToolOutput]]
    read_only: bool
    """Changes nothing, so several calls may run concurrently."""
    start_to_close: Callable[[Any], timedelta]
    retry_policy: RetryPolicy
    kill: Callable[[KillRequest], Awaitable[int]] | None = None
    """The host activity that stops a killed workflow run's calls of this tool at once,
    instead of at the activity's next heartbeat (Bash: `bash.kill_bash_runs`)."""

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema sent to the model as this tool's `input_schema`."""
        schema = clean_schema(self.input_model.model_json_schema(by_alias=True))
        schema.pop("$schema", None)
        schema["additionalProperties"] = False
        return schema

    def activity_options(self, tool_input: BaseModel | dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for `workflow.execute_activity` running this tool on `tool_input`."""
        inp = self._validated(tool_input)
        return {
            "start_to_close_timeout": self.start_to_close(inp),
            "heartbeat_timeout": HEARTBEAT_TIMEOUT,
            "retry_policy": self.retry_policy,
        }

    def request(self, ctx: ToolContext, tool_input: BaseModel | dict[str, Any]) -> ToolRequest:
        """The activity argument for `tool_input` (validated if given raw) in `ctx`."""
        return self.request_model(ctx=ctx, input=self._validated(tool_input))

    def _validated(self, tool_input: BaseModel | dict[str, Any]) -> BaseModel:
        if isinstance(tool_input, self.input_model):
            return tool_input
        return self.input_model.model_validate(tool_input)


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name="Read",
            description=read.DESCRIPTION,
            input_model=read.ReadInput,
            request_model=read.ReadRequest,
            activity=read.read_file,
            read_only=True,
            start_to_close=_fixed(timedelta(minutes=2)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Write",
            description=write.DESCRIPTION,
            input_model=write.WriteInput,
            request_model=write.WriteRequest,
            activity=write.write_file,
            read_only=False,
            start_to_close=_fixed(timedelta(minutes=2)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Edit",
            description=edit.DESCRIPTION,
            input_model=edit.EditInput,
            request_model=edit.EditRequest,
            activity=edit.edit_file,
            read_only=False,
            start_to_close=_fixed(timedelta(minutes=2)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="NotebookEdit",
            description=notebook_edit.DESCRIPTION,
            input_model=notebook_edit.NotebookEditInput,
            request_model=notebook_edit.NotebookEditRequest,
            activity=notebook_edit.notebook_edit,
            read_only=False,
            start_to_close=_fixed(timedelta(minutes=2)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Glob",
            description=glob.DESCRIPTION,
            input_model=glob.GlobInput,
            request_model=glob.GlobRequest,
            activity=glob.glob_files,
            read_only=True,
            start_to_close=_fixed(timedelta(seconds=grep.RG_TIMEOUT_S + 60)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Grep",
            description=grep.DESCRIPTION,
            input_model=grep.GrepInput,
            request_model=grep.GrepRequest,
            activity=grep.grep_files,
            read_only=True,
            start_to_close=_fixed(timedelta(seconds=grep.RG_TIMEOUT_S + 60)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Skill",
            description=skill.DESCRIPTION,
            input_model=skill.SkillInput,
            request_model=skill.SkillRequest,
            activity=skill.run_skill,
            read_only=True,
            start_to_close=_fixed(timedelta(minutes=1)),
            retry_policy=IDEMPOTENT_RETRY,
        ),
        ToolSpec(
            name="Bash",
            description=bash.DESCRIPTION,
            input_model=bash.BashInput,
            request_model=bash.BashRequest,
            activity=bash.run_bash,
            read_only=False,
            start_to_close=_bash_timeout,
            retry_policy=BASH_RETRY,
            kill=bash.kill_bash_runs,
        ),
    )
}

ALL_ACTIVITIES: list[Callable[..., Awaitable[ToolOutput]]] = [s.activity for s in TOOLS.values()]
KILL_ACTIVITIES: list[Callable[[KillRequest], Awaitable[int]]] = [
    s.kill for s in TOOLS.values() if s.kill
]
"""Served on the host queue beside the tools (`ToolSpec.kill`)."""

__all__ = ["ALL_ACTIVITIES", "KILL_ACTIVITIES", "TOOLS", "ToolSpec", "clean_schema"]
