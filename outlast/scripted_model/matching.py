"""From a request to its scripted reply: which agent, which turn, which attempt, what to send.

Everything here is derived from the request alone (plus the attempt counter and the cache
table), so a request that is retried or replayed after a worker crash gets the same agent,
turn and tool ids. The HTTP side (holding, writing, logging) lives in `server.py`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from outlast.scripted_model.cache import (
    CacheTable,
    Layouts,
    PromptLayout,
    Usage,
)
from outlast.scripted_model.cache import output_tokens as estimate_output
from outlast.scripted_model.script import (
    EXHAUSTED_TEXT,
    Agent,
    ErrorSpec,
    Script,
    Turn,
    UnknownVariable,
    background_task_from,
    cwd_from_system,
    plan_file_from,
    render_turn,
    scratchpad_from_system,
    variables_named,
)
from outlast.scripted_model.wire import (
    Answer,
    InvalidRequest,
    content_blocks,
    message_id,
    offers_web_search,
    validate_request,
)

Outcome = Literal["completed", "error", "disconnected", "invalid"]


class RequestView(BaseModel):
    """The parts of a Messages request that matching and variables look at."""

    model_config = ConfigDict(frozen=True)

    system_text: str
    first_user_text: str
    last_user_text: str
    headers: dict[str, str]
    turn_index: int
    messages: list[Any] = []

    @functools.cached_property
    def conversation_text(self) -> str:
        """Every message's text, tool results and tool_use inputs (as JSON), for
        `conversation_contains` / `conversation_lacks` and the variables read from the
        conversation. Built on first use: a 1,000-turn request's is megabytes."""
        return "\n".join(_all_text(m.get("content")) for m in self.messages)

    @classmethod
    def from_request(cls, body: Mapping[str, Any], headers: Mapping[str, str]) -> RequestView:
        messages = body["messages"]
        users = [m for m in messages if m.get("role") == "user"]
        return cls(
            system_text=system_text(body.get("system")),
            first_user_text=content_text(users[0]["content"]) if users else "",
            last_user_text=content_text(users[-1]["content"]) if users else "",
            headers={name.lower(): value for name, value in headers.items()},
            turn_index=sum(1 for m in messages if m.get("role") == "assistant"),
            messages=messages,
        )

    @property
    def conversation_key(self) -> str:
        """Identifies a conversation across its turns: its system prompt and first prompt."""
        return _key(self.system_text, self.first_user_text)


def _key(system: str, first_user: str) -> str:
    canonical = json.dumps([system, first_user], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def conversation_key(body: Any) -> str:
    """`RequestView.conversation_key` of a request not validated yet (any JSON at all)."""
    if not isinstance(body, dict):
        return ""
    messages = body.get("messages")
    users = [
        m
        for m in (messages if isinstance(messages, list) else [])
        if isinstance(m, dict) and m.get("role") == "user"
    ]
    return _key(
        system_text(body.get("system")), content_text(users[0].get("content")) if users else ""
    )


def system_text(system: Any) -> str:
    """All system text joined by newlines (`system` is a string or a list of text blocks)."""
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return ""


def content_text(content: Any) -> str:
    """The text of a message content, including the text inside `tool_result` blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(content_text(block.get("content", "")))
    return "\n".join(parts)


def _all_text(content: Any) -> str:
    parts = [content_text(content)]
    if isinstance(content, list):
        parts += [
            json.dumps(b.get("input", {}), ensure_ascii=False)
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
    return "\n".join(parts)


def matches(agent: Agent, view: RequestView) -> bool:
    """True when every condition of the agent's `match` holds for the request."""
    m = view.headers
    rules = agent.match
    checks = [
        rules.agent_type is None or m.get("x-outlast-agent-type") == rules.agent_type,
        rules.agent_name is None or m.get("x-outlast-agent-name") == rules.agent_name,
        rules.system_contains is None or rules.system_contains in view.system_text,
        rules.prompt_contains is None or rules.prompt_contains in view.first_user_text,
        rules.last_user_contains is None or rules.last_user_contains in view.last_user_text,
        all(m.get(name) == value for name, value in rules.header.items()),
        all(text in view.conversation_text for text in rules.conversation_contains),
        not any(text in view.conversation_text for text in rules.conversation_lacks),
    ]
    return all(checks)


def select_agent(script: Script, view: RequestView) -> Agent | None:
    """The first agent, in script order, whose `match` holds."""
    return next((agent for agent in script.agents if matches(agent, view)), None)


def no_match_message(script: Script) -> str:
    names = ", ".join(a.name for a in script.agents) or "(none)"
    return (
        f"scripted model: no agent of the script matches this request (agents: {names}; "
        "none has an empty `match`, so there is no fallback)"
    )


def turn_for(agent: Agent, turn_index: int) -> Turn | ErrorSpec:
    """The scripted turn for `turn_index`, applying `after_last` past the end of `turns`."""
    if turn_index < len(agent.turns):
        return agent.turns[turn_index]
    if agent.after_last == "repeat_last" and agent.turns:
        return agent.turns[-1]
    if agent.after_last == "error":
        return ErrorSpec(
            status=500,
            type="api_error",
            message=(
                f"scripted model: agent {agent.name!r} has {len(agent.turns)} turns "
                f"and was asked for turn {turn_index} (after_last: error)"
            ),
        )
    return Turn(text=EXHAUSTED_TEXT, stop_reason="end_turn")


def scripted_reply(agent: Agent, turn_index: int, attempt: int) -> Turn | ErrorSpec:
    """The turn to answer with, or the error this attempt must get instead.

    Attempts 1..n of a turn with n `fail` entries get those errors; attempt n+1 the answer.
    """
    scripted = turn_for(agent, turn_index)
    if isinstance(scripted, Turn) and attempt <= len(scripted.fail):
        return scripted.fail[attempt - 1]
    return scripted


class AttemptCounter:
    """Counts requests per (agent, conversation key, turn index); shared by handler threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str, int], int] = {}

    def next(self, agent: str, conversation_key: str, turn_index: int) -> int:
        """Record one more attempt and return its 1-based number."""
        key = (agent, conversation_key, turn_index)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]


class RequestFacts(BaseModel):
    """The log fields of a request that are known before its response is sent."""

    ts: str
    path: str
    request_sha256: str
    headers: dict[str, str] = {}
    agent: str | None = None
    turn: int | None = None
    attempt: int | None = None
    stream: bool = False
    stop_reason: str | None = None
    usage: Usage | None = None
    message_count: int = 0
    prefix_hashes: list[str] = []
    tools: list[str] = []
    error: str | None = None
    body: Any = None


@dataclass
class Plan:
    """What to send for one request, and the log fields known before sending it."""

    status: int
    record: RequestFacts
    stream: bool = False
    delay_s: float = 0.0
    answer: Answer | None = None
    error: ErrorSpec | None = None
    prompt: PromptLayout | None = None
    outcome: Outcome = "completed"
    sending: bool = False  # set once bytes of the response start to go out


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def invalid(record: RequestFacts, message: str, status: int = 400) -> Plan:
    error_type = "not_found_error" if status == 404 else "invalid_request_error"
    record.error = message
    spec = ErrorSpec(status=status, type=error_type, message=message)
    return Plan(status=status, record=record, error=spec, outcome="invalid")


def failure(record: RequestFacts, spec: ErrorSpec, delay_s: float) -> Plan:
    record.error = spec.error_message
    return Plan(status=spec.status, record=record, error=spec, delay_s=delay_s, outcome="error")


class Responder:
    """Plans the reply to each `POST /v1/messages`; shared by all handler threads.

    Args:
        script: the scenario.
        variables: values for `{{NAME}}` (the request's working directory overrides `cwd`).
    """

    def __init__(self, script: Script, variables: dict[str, str] | None = None) -> None:
        self.script = script
        self.variables = dict(variables or {})
        self._attempts = AttemptCounter()
        self._cache = CacheTable(script.min_cache_tokens)
        self._layouts = Layouts()

    def plan(self, raw: bytes, headers: dict[str, str], record: RequestFacts) -> Plan:
        """Decide the answer to a `POST /v1/messages` body."""
        try:
            body = json.loads(raw)
        except ValueError:
            return invalid(record, "request body is not valid JSON")
        record.request_sha256 = sha256_hex(raw)
        record.body = body
        key = conversation_key(body)
        try:
            validate_request(body, self._layouts.last_messages(key))
        except InvalidRequest as exc:
            return invalid(record, str(exc))
        view = RequestView.from_request(body, headers)
        prompt = self._layouts.layout(key, body)
        record.stream = body.get("stream", False)
        record.message_count = len(body["messages"])
        record.prefix_hashes = [b.prefix_hash for b in prompt.breakpoints]
        record.tools = [t["name"] for t in body.get("tools") or []]
        agent = select_agent(self.script, view)
        if agent is None:
            return invalid(record, no_match_message(self.script))
        attempt = self._attempts.next(agent.name, view.conversation_key, view.turn_index)
        record.agent, record.turn, record.attempt = agent.name, view.turn_index, attempt
        return self._plan_turn(record, body, view, agent, prompt, attempt)

    def _plan_turn(
        self,
        record: RequestFacts,
        body: dict[str, Any],
        view: RequestView,
        agent: Agent,
        prompt: PromptLayout,
        attempt: int,
    ) -> Plan:
        latency = self.script.latency_ms / 1000
        scripted = scripted_reply(agent, view.turn_index, attempt)
        if isinstance(scripted, ErrorSpec):
            return failure(record, scripted, latency)
        delay = latency + scripted.delay_ms / 1000
        try:
            turn = render_turn(scripted, self._variables_for(view, scripted.model_dump()))
        except UnknownVariable as exc:
            message = exc.describe(agent.name, view.turn_index)
            return failure(record, ErrorSpec(status=500, type="api_error", message=message), delay)
        if turn.error is not None:
            return failure(record, turn.error, delay)
        if turn.web_search is not None and not offers_web_search(body):
            message = "web_search was answered, but the request offers no web_search tool"
            spec = ErrorSpec(status=400, type="invalid_request_error", message=message)
            return failure(record, spec, delay)
        plan = Plan(status=200, record=record, stream=record.stream, delay_s=delay)
        plan.answer = self._answer(turn, body, view, prompt)
        plan.prompt = prompt
        record.stop_reason, record.usage = plan.answer.stop_reason, plan.answer.usage
        return plan

    def _answer(
        self, turn: Turn, body: dict[str, Any], view: RequestView, prompt: PromptLayout
    ) -> Answer:
        content = content_blocks(turn, view.conversation_key, view.turn_index)
        # Accounted and written in one step: the first of several concurrent requests with a
        # shared prefix writes it, the others read it (prefill is taken as instant).
        usage = self._cache.account_and_commit(prompt, estimate_output(content))
        if turn.extra_input_tokens:
            usage = usage.model_copy(
                update={"input_tokens": usage.input_tokens + turn.extra_input_tokens}
            )
        return Answer(
            id=message_id(view.conversation_key, view.turn_index),
            model=self.script.model or body["model"],
            content=content,
            stop_reason=turn.effective_stop_reason,
            usage=usage,
        )

    def _variables_for(self, view: RequestView, turn: dict[str, Any]) -> dict[str, str]:
        """The variables for a turn (`turn`: its fields; those read from the whole
        conversation are looked for only when the turn names them)."""
        named = variables_named(turn)
        variables = dict(self.variables)
        cwd = cwd_from_system(view.system_text)
        if cwd is not None:
            variables["cwd"] = cwd
        scratchpad = scratchpad_from_system(view.system_text)
        if scratchpad is not None:
            variables["scratchpad"] = scratchpad
        if "plan_file" in named:
            plan_file = plan_file_from(view.conversation_text)
            if plan_file is not None:
                variables["plan_file"] = plan_file
        if named & {"task_id", "output_file"}:
            background = background_task_from(view.conversation_text)
            if background is not None:
                variables["task_id"], variables["output_file"] = background
        return variables
