"""The scenario script: pydantic models, the YAML/JSON loader and variable substitution.

The script is validated strictly (unknown keys are rejected) because a typo such as
`tool_uses:` would otherwise silently turn a tool turn into an empty answer and the test
using it would fail far away from the cause.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

StopReason = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
AfterLast = Literal["repeat_last", "end", "error"]

# The error `type` the real API sends with each status; anything else is an `api_error`.
DEFAULT_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

EXHAUSTED_TEXT = "(script exhausted)"

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_WORKING_DIRECTORY = re.compile(r"^\s*Working directory:\s*(\S.*?)\s*$", re.MULTILINE)
_PLAN_FILE = re.compile(r"^\s*Plan file:\s*(\S.*?)\s*$", re.MULTILINE)
_SCRATCHPAD = re.compile(r"^\s*Scratchpad directory:\s*(\S.*?)\s*$", re.MULTILINE)
_BACKGROUND = re.compile(
    r"Command running in background with ID: (\S+)\. Output is being written to: ([^\n]*\S)"
)


class ScriptError(Exception):
    """The script file cannot be read or does not follow the format."""


class UnknownVariable(Exception):
    """A `{{NAME}}` placeholder has no value; `name` lets callers report it precisely."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(name)
        self.name = name
        self.known = known

    def describe(self, agent: str, turn_index: int) -> str:
        """The error message sent to the client (and logged)."""
        known = ", ".join(self.known) or "none"
        message = (
            f"scripted model: unknown variable {{{{{self.name}}}}} in turn {turn_index} of "
            f"agent {agent!r} (known variables: {known})"
        )
        if self.name == "cwd":
            message += "; the system prompt has no 'Working directory: <path>' line"
        return message


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ErrorSpec(_Frozen):
    """An error answer: a `fail` entry or a turn's `error`. A bare int means `{status: N}`."""

    status: int = Field(ge=400, le=599)
    type: str | None = None
    message: str | None = None
    retry_after: float | None = Field(default=None, ge=0)
    should_retry: bool | None = None
    """Sent as `x-should-retry: true|false`, the API's own word on retrying."""

    @model_validator(mode="before")
    @classmethod
    def _from_int(cls, value: Any) -> Any:
        return {"status": value} if isinstance(value, int) else value

    @property
    def error_type(self) -> str:
        return self.type or DEFAULT_ERROR_TYPES.get(self.status, "api_error")

    @property
    def error_message(self) -> str:
        return self.message or f"scripted {self.error_type} (HTTP {self.status})"


class ToolUseSpec(_Frozen):
    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    raw_input: str | None = None
    """The input's JSON text exactly as streamed, in place of `input`: lets a script send a
    model's malformed JSON. A non-streaming response carries `{}` instead, as it cannot
    hold text that does not parse."""


class SearchResultSpec(_Frozen):
    title: str
    url: str
    page_age: str | None = None


class WebSearchSpec(_Frozen):
    """A search the API's server-side `web_search` tool made, answered in the same response:
    a `server_tool_use` block and its `web_search_tool_result` (the `results`, or an
    `error` code such as `too_many_requests`). The request must offer that tool."""

    query: str
    results: list[SearchResultSpec] = Field(default_factory=list)
    error: str | None = None


class Turn(_Frozen):
    """One scripted assistant answer (or error) for one turn index."""

    text: str | None = None
    thinking: str | None = None
    web_search: WebSearchSpec | None = None
    tool_use: list[ToolUseSpec] = Field(default_factory=list)
    fail: list[ErrorSpec] = Field(default_factory=list)
    delay_ms: int = Field(default=0, ge=0)
    stop_reason: StopReason | None = None
    error: ErrorSpec | None = None
    extra_input_tokens: int = Field(default=0, ge=0)
    """Reported as `input_tokens` on top of the estimate: a conversation near the context
    window without sending megabytes (auto-compaction's tests)."""

    @field_validator("tool_use", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _answer_is_consistent(self) -> Turn:
        content = (
            self.text is not None
            or self.thinking is not None
            or bool(self.tool_use)
            or self.web_search is not None
        )
        if self.error is not None and (content or self.stop_reason is not None):
            raise ValueError(
                "a turn with `error` cannot also have text, thinking, web_search, tool_use or "
                "stop_reason"
            )
        if self.error is None and not content:
            raise ValueError("a turn needs at least one of text, thinking, tool_use or error")
        return self

    @property
    def effective_stop_reason(self) -> StopReason:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_use else "end_turn"


class Match(_Frozen):
    """Conditions on a request; all given ones must hold. No condition = fallback agent."""

    agent_type: str | None = None
    agent_name: str | None = None
    system_contains: str | None = None
    prompt_contains: str | None = None
    last_user_contains: str | None = None
    header: dict[str, str] = Field(default_factory=dict)
    conversation_contains: list[str] = Field(default_factory=list)
    """Every one of these appears somewhere in the conversation (any message's text, tool
    results, tool_use inputs): an agent's next move can depend on what has happened, not on
    how many turns it took (notifications arrive in batches that timing decides)."""
    conversation_lacks: list[str] = Field(default_factory=list)
    """None of these appears anywhere in the conversation."""

    @field_validator("header")
    @classmethod
    def _lower_names(cls, value: dict[str, str]) -> dict[str, str]:
        # HTTP header names are case-insensitive; the server lowercases incoming names too.
        return {name.lower(): str(v) for name, v in value.items()}

    @property
    def is_fallback(self) -> bool:
        if self.conversation_contains or self.conversation_lacks:
            return False
        return not self.header and all(
            v is None
            for v in (
                self.agent_type,
                self.agent_name,
                self.system_contains,
                self.prompt_contains,
                self.last_user_contains,
            )
        )


class Agent(_Frozen):
    name: str = Field(min_length=1)
    match: Match = Field(default_factory=Match)
    turns: list[Turn] = Field(default_factory=list)
    after_last: AfterLast = "end"

    @field_validator("match", mode="before")
    @classmethod
    def _none_is_fallback(cls, value: Any) -> Any:
        return {} if value is None else value


class Script(_Frozen):
    """A whole scenario: the agents in match order plus server-wide settings."""

    model: str | None = None
    latency_ms: int = Field(default=0, ge=0)
    min_cache_tokens: int = Field(default=0, ge=0)
    agents: list[Agent] = Field(default_factory=list)

    @field_validator("agents")
    @classmethod
    def _unique_names(cls, agents: list[Agent]) -> list[Agent]:
        names = [a.name for a in agents]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"agent names must be unique; repeated: {', '.join(duplicates)}")
        return agents


def load_script(source: str | Path | Mapping[str, Any] | Script) -> Script:
    """A script from a `.yaml`/`.yml`/`.json` file path, from its parsed dict form, or as is.

    Raises:
        ScriptError: the file is missing, unparsable, or does not follow the format.
    """
    if isinstance(source, Script):
        return source
    if isinstance(source, Mapping):
        return parse_script(dict(source))
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise ScriptError(f"{path}: script must end in .yaml, .yml or .json")
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path}: {exc}") from exc
    return parse_script(data, source=str(path))


def parse_script(data: Any, source: str = "script") -> Script:
    """Validate already-parsed data (a dict) as a script, with a readable error: a line per
    problem, where it is and what is wrong, an unknown key with the one it probably meant
    (pydantic's report, with its links, read `tool_usee ... Extra inputs are not permitted`;
    a user test, 2026-12-07)."""
    try:
        return Script.model_validate(data if data is not None else {})
    except ValidationError as exc:
        problems = "\n".join(f"  {problem}" for problem in _problems(exc))
        raise ScriptError(f"{source}: invalid script:\n{problems}") from exc


def _problems(exc: ValidationError) -> list[str]:
    # Every model's keys, not only the one the error is in: a guess, and a key of another
    # model is rarely the closest.
    fields = sorted({name for model in _Frozen.__subclasses__() for name in model.model_fields})
    said = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "the script"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(error["loc"][-1]), fields, n=1)
            message = "no such key" + (f"; did you mean {close[0]!r}?" if close else "")
        said.append(f"{where}: {message}")
    return said


def cwd_from_system(system_text: str) -> str | None:
    """The path on the first `Working directory: <path>` line of a system prompt."""
    found = _WORKING_DIRECTORY.search(system_text)
    return found.group(1) if found else None


def scratchpad_from_system(system_text: str) -> str | None:
    """The path on the first `Scratchpad directory: <path>` line (a coordinator's workers)."""
    found = _SCRATCHPAD.search(system_text)
    return found.group(1) if found else None


def plan_file_from(conversation_text: str) -> str | None:
    """The path on the last `Plan file: <path>` line of the conversation (plan mode)."""
    found = _PLAN_FILE.findall(conversation_text)
    return found[-1] if found else None


def variables_named(value: Any) -> set[str]:
    """The names of the `{{NAME}}` placeholders in every string nested in `value` (as
    `substitute` finds them)."""
    if isinstance(value, str):
        return {m.group(1) for m in _VARIABLE.finditer(value)}
    if isinstance(value, list):
        return set().union(*(variables_named(item) for item in value))
    if isinstance(value, dict):
        return set().union(*(variables_named(item) for item in value.values()))
    return set()


def background_task_from(conversation_text: str) -> tuple[str, str] | None:
    """The ID and output file of the last background command launched in the conversation."""
    found = _BACKGROUND.findall(conversation_text)
    return found[-1] if found else None


def substitute(value: Any, variables: dict[str, str]) -> Any:
    """Replace `{{NAME}}` in every string nested in `value` (one pass; values are literal).

    Raises:
        UnknownVariable: a placeholder names a variable missing from `variables`.
    """
    if isinstance(value, str):
        return _VARIABLE.sub(lambda m: _lookup(m.group(1), variables), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def _lookup(name: str, variables: dict[str, str]) -> str:
    if name not in variables:
        raise UnknownVariable(name, sorted(variables))
    return variables[name]


def render_turn(turn: Turn, variables: dict[str, str]) -> Turn:
    """The turn with variables substituted in its answer (text, thinking, tool_use, error)."""
    data = turn.model_dump(exclude={"fail"}, exclude_none=True)
    return Turn.model_validate(substitute(data, variables))
