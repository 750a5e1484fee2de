"""Typed configuration: every switch Claude Code reads from feature flags or env (spec R1).

The starter builds one snapshot (`from_env`) and passes it in the workflow input; workflow
code never reads the environment, so a replay sees the values the run started with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.hooks import HookMatcher, check_events

MAX_SECONDS = 10 * 365 * 24 * 3600
"""The longest a duration setting may be (ten years). Workflow code turns settings into
timers and deadlines (`workflow.now()` plus the setting): an infinite or astronomically long
one raised OverflowError there, which failed the workflow task on every retry."""
MAX_MS = MAX_SECONDS * 1000


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Features(_Section):
    fork_subagent: bool = False
    coordinator_mode: bool = False
    verification_agent: bool = False
    handoff_classifier: bool = False
    scratchpad: bool = False
    definition_hooks: bool = False
    """Run the hooks in agent definitions' frontmatter (R100: its `Stop` as SubagentStop).
    Off by default: they come from the repository's `.claude/agents/`, which a writer agent
    can change, and run unsandboxed on the host (the config's own `hooks` always run)."""


MIN_HISTORY_EVENTS = 100
"""The least `continue_as_new_events` takes (fewer, and a run would hand on at nearly every
turn)."""


class AgentSettings(_Section):
    auto_background_ms: int = Field(default=0, ge=0, le=MAX_MS)
    background_tasks_disabled: bool = False
    simple_worker_tools: bool = False
    allow_nested_agents: bool = False
    explore_model: str = "haiku"
    slim_subagent_context: bool = True
    hard_max_turns: int = Field(default=1000, ge=1)
    """The most model calls an agent's run makes when its definition sets no `maxTurns` (and
    the bound on one that does); a teammate's count from the mail that last woke it."""
    max_concurrent: int = Field(default=16, ge=1)
    max_depth: int | None = Field(default=None, ge=1)
    """Deepest sub-agent level; None = 1 without nested agents, 3 with them (R4)."""
    subagent_model: str | None = None
    """Default model of sub-agents whose definition names none (CLAUDE_CODE_SUBAGENT_MODEL)."""
    deny_rules: list[str] = Field(default_factory=list)
    """Permission rules such as `Agent(Explore)` that forbid spawning a type (R13)."""
    assistant_force_async: bool = False
    default_background: bool = False
    background_hint_ms: int = Field(default=2000, ge=0, le=MAX_MS)
    turns_per_run: int | None = Field(default=None, ge=1)
    """Continue as new after this many turns in one run (None: only on the server's advice
    or `continue_as_new_events`)."""
    continue_as_new_events: int = Field(default=10_000, ge=MIN_HISTORY_EVENTS)
    """Continue as new once a run's history has this many events (R92)."""
    hand_on_answer_wait_s: float = Field(default=300, ge=0, le=MAX_SECONDS)
    """A team about to continue as new waits this long for a shutdown request's answer that
    is on its way; then the request answers `answered: false` and the team hands on."""
    liveness_check_s: float = Field(default=120, gt=0, le=MAX_SECONDS)
    """While waiting for background sub-agents, check this long after the wait begins that
    they still run (a terminated one cannot report its end), then at twice the interval
    each time, up to 15 minutes or this interval if longer (a long wait's history grows
    slowly)."""
    background_command_wait_s: float = Field(default=3600, gt=0, le=MAX_SECONDS)
    """How long an agent whose turn has ended waits for its background commands to end
    before it stops them (a server it left running must not hold it for good; a test suite
    of most of an hour still reports)."""
    handoff_check: bool = True
    """Scan every sub-agent result for injected instructions before the parent sees it (R42)."""

    def depth_limit(self) -> int:
        return self.max_depth or (3 if self.allow_nested_agents else 1)


ModelCallMode = bool | Literal["auto"]
"""`model.local_activity`: true, false or "auto" (see `ModelSettings.local_activity`)."""


class ModelSettings(_Section):
    default_model: str = "claude-sonnet-5-5"
    aliases: dict[str, str] = Field(
        default_factory=lambda: {
            "sonnet": "claude-sonnet-5-5",
            "opus": "claude-opus-5-5",
            "haiku": "claude-haiku-5-5",
        }
    )
    max_tokens: int = Field(default=32000, ge=1)
    call_timeout_s: float = Field(default=600, gt=0, le=MAX_SECONDS)
    """Longest a single model call (one attempt) may take."""
    heartbeat_timeout_s: float = Field(default=30, gt=0, le=MAX_SECONDS)
    """A model call that sends no heartbeat for this long is presumed lost with its worker."""
    max_attempts: int = Field(default=0, ge=0)
    """0: retry transient failures (overload, rate limits, outages) until `retry_window_s`
    runs out; requests the API rejects are never retried."""
    retry_window_s: float = Field(default=6 * 3600, gt=0, le=MAX_SECONDS)
    """How long a model call may keep retrying in all: an hours-long task should outlast an
    API outage of several minutes, not fail every agent after the 10th attempt."""
    local_activity: ModelCallMode = False
    """How a model call runs. `false` (the default): a regular activity. `true`: a local
    activity, inside the workflow task: no server round trip for the model, one marker
    event (~0.9 KB) instead of three (~1.7 KB), fewer billed actions (bench/RESULTS.md). The
    price: while a call runs, the workflow task is held, so a kill, query or update reaches
    the agent only at the next workflow-task heartbeat (every ~8 s of a call, each ~0.3 KB of
    history: a call of minutes adds more history than a regular activity); the Web UI shows
    no pending activity, only the call's result once it is done. `auto`, for models that
    answer in about a second: an agent's first call is regular, and a call after one that
    took less than `auto_local_under_s` is local, capped at 5 s; a local call that runs over
    or fails is sent again as a regular activity, and the agent's later calls stay regular
    (workflows/model_call.py). Leave local calls off for runs served by workers with
    `max_cached_workflows=0` (temporalio/sdk-rust#1482)."""
    auto_local_under_s: float = Field(default=1.0, gt=0, le=5)
    """`local_activity: auto`: a previous call shorter than this makes the next one local."""
    context_window: int = Field(default=200_000, ge=40_000)
    """The model's context window in tokens: auto-compaction keeps the conversation below it."""
    auto_compact_tokens: int | None = Field(default=None, ge=0)
    """Compact the conversation (the model sums it up and the agent goes on from the summary)
    once a call's context reaches this many tokens. None: the window less the answer's room
    (`max_tokens`, at most 20,000) and a 13,000-token margin, as Claude Code; 0: never
    (`DISABLE_AUTO_COMPACT=1`), and a long agent then fails when its conversation no longer
    fits."""


BACKGROUND_OUTPUT_CAP = 5 * 1024**3
"""Claude Code's cap on a background command's output file (`MAX_TASK_OUTPUT_BYTES`)."""


class ToolSettings(_Section):
    glob_sort: Literal["mtime_asc", "mtime_desc"] = "mtime_asc"
    heartbeat_timeout_s: float = Field(default=30, ge=5, le=MAX_SECONDS)
    """How soon a tool whose worker died is retried (or, for Bash, re-run after its
    leftover processes are killed)."""
    background_output_max_bytes: int = Field(default=BACKGROUND_OUTPUT_CAP, ge=1024)
    """A background command whose output file grows past this is killed (Claude Code's cap,
    5 GB): a command that writes without end must not fill the host's disk."""
    web_fetch_model: str = "haiku"
    """The small, fast model WebFetch asks about a page (an alias or a model id)."""
    disabled: list[str] = Field(default_factory=list)
    """Tools no agent is offered, e.g. `[WebSearch]` behind a gateway without the API's web
    search, or `[WebFetch, WebSearch]` on hosts without the internet. A name that is no tool
    fails the agent at its start, with the names there are."""
    web_search_model: str | None = None
    """The model WebSearch asks with the API's search tool; None: the agent's own."""
    web_fetch_private_hosts: bool = False
    """Let WebFetch fetch addresses on the worker's machine or a private network (a local
    development server); off, an agent cannot reach what only the worker can."""
    local_tools: bool = True
    """Run Read, Glob and Grep, and an agent's prompt rendering, handoff check and transcript
    export, as local activities when the workflow's worker is the workspace's host
    (activities/local_tools.py, activities/host_steps.py): about half a turn's time saved,
    and three server round trips of every sub-agent. Turn it
    off for workers with `max_cached_workflows=0`, where Temporal Core can evict a run in the
    middle of its local activities and stall it for a workflow-task timeout
    (temporalio/sdk-rust#1482)."""


class OutlastConfig(_Section):
    features: Features = Features()
    agents: AgentSettings = AgentSettings()
    model: ModelSettings = ModelSettings()
    tools: ToolSettings = ToolSettings()
    search_attributes: bool = True
    """Upsert Outlast's search attributes (R95); off where the namespace lacks them."""
    hooks: dict[str, list[HookMatcher]] = Field(default_factory=dict)
    """`SubagentStart` / `SubagentStop` commands, in Claude Code's settings shape (R100,
    agents/hooks.py); they run on the workspace's host, as the worker's user, unsandboxed."""

    @field_validator("hooks")
    @classmethod
    def _known_events(cls, value: dict[str, list[HookMatcher]]) -> dict[str, list[HookMatcher]]:
        check_events(value)
        return value

    def resolve_model(self, name: str | None) -> str:
        """A model alias (`sonnet`) or full id, or the default when `name` is None/inherit."""
        if not name or name == "inherit":
            return self.model.default_model
        return self.model.aliases.get(name, name)


class ConfigError(ValueError):
    """A setting given by name (an environment variable, a CLI option) that Outlast cannot
    read; the message names it and what it accepts."""


MODEL_CALL_MODES: dict[str, ModelCallMode] = {"regular": False, "local": True, "auto": "auto"}
"""How `OUTLAST_MODEL_CALL` and `outlast run --model-call` spell `model.local_activity`."""


def parse_model_call(value: str, given_as: str) -> ModelCallMode:
    """`regular`, `local` or `auto` as a `model.local_activity` value; ConfigError otherwise,
    naming the setting as the user wrote it (`given_as`: `--model-call fast`)."""
    mode = MODEL_CALL_MODES.get(value.strip().lower())
    if mode is None:
        raise ConfigError(f"{given_as}: choose one of {', '.join(MODEL_CALL_MODES)}.")
    return mode


def _events(value: str) -> int:
    """`OUTLAST_CONTINUE_AS_NEW_EVENTS` as a count; ConfigError naming it otherwise."""
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < MIN_HISTORY_EVENTS:
        raise ConfigError(
            f"OUTLAST_CONTINUE_AS_NEW_EVENTS={value}: give a whole number of events, "
            f"{MIN_HISTORY_EVENTS} or more."
        )
    return count


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def from_env(env: Mapping[str, str], base: OutlastConfig | None = None) -> OutlastConfig:
    """Apply the environment overrides Claude Code honours (R1), and Outlast's own
    (`OUTLAST_MODEL`, `OUTLAST_MODEL_CALL`), to `base`; ConfigError for a value it cannot
    read."""
    cfg = base or OutlastConfig()
    agents = cfg.agents.model_dump()
    features = cfg.features.model_dump()
    model = cfg.model.model_dump()
    if _truthy(env.get("CLAUDE_AUTO_BACKGROUND_TASKS")):
        agents["auto_background_ms"] = 120_000
    if _truthy(env.get("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")):
        agents["background_tasks_disabled"] = True
    if _truthy(env.get("CLAUDE_CODE_SIMPLE")):
        agents["simple_worker_tools"] = True
    if _truthy(env.get("CLAUDE_CODE_COORDINATOR_MODE")):
        features["coordinator_mode"] = True
    if _truthy(env.get("CLAUDE_CODE_FORK_SUBAGENT")):
        features["fork_subagent"] = True
    if env.get("CLAUDE_CODE_SUBAGENT_MODEL"):
        agents["subagent_model"] = env["CLAUDE_CODE_SUBAGENT_MODEL"]
    if env.get("OUTLAST_MODEL"):
        model["default_model"] = env["OUTLAST_MODEL"]
    if _truthy(env.get("OUTLAST_DEFINITION_HOOKS")):
        features["definition_hooks"] = True
    if _truthy(env.get("DISABLE_AUTO_COMPACT")):
        model["auto_compact_tokens"] = 0
    if mode := env.get("OUTLAST_MODEL_CALL", "").strip():
        model["local_activity"] = parse_model_call(mode, f"OUTLAST_MODEL_CALL={mode}")
    if events := env.get("OUTLAST_CONTINUE_AS_NEW_EVENTS", "").strip():
        # A team's too: `outlast run --pattern team` had no way to set it (a user test).
        agents["continue_as_new_events"] = _events(events)
    return cfg.model_copy(
        update={
            "agents": AgentSettings(**agents),
            "features": Features(**features),
            "model": ModelSettings(**model),
        }
    )
