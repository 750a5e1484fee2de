"""Outlast's side of the scenario (driver side; the worker is Outlast's own `python -m worker`).

Outlast runs its real `AgentWorkflow` with its real tools: every turn the scripted model
(`outlast fake-model`, over HTTP) asks for `Read` of data.txt in a git repo, the host worker
reads it, and the final turn answers "done". The fan-out is Claude Code's own sub-agent
pattern: the parent's first answer holds F parallel `Agent` calls, each a child
`AgentWorkflow` of T turns, and its second answer is "done".

The same server also answers the peer rows that call a real HTTP model (minimal b-http,
pydantic-ai c-http, openai-agents d-http), matched by the turn-count marker in their first
user message; the openai-agents orchestrator has a fan-out marker of its own.
"""

from __future__ import annotations

from common import (
    FINAL_TEXT,
    fanout_marker,
    fanout_prompt,
    oai_fanout_marker,
    turns_marker,
    user_prompt,
)

from agents.config import AgentSettings, ModelCallMode, ModelSettings, OutlastConfig
from workflows.contracts import AgentInput, AgentResult, Workspace


def child_name(i: int) -> str:
    return f"w{i}"


def script(path: str, turn_counts: list[int], fanouts: list[tuple[int, int]]) -> dict:
    """A fake-model script: N Read turns then "done" for every N, and the fan-out parents.

    Fan-out parents come first: `prompt_contains` only looks at the first user message, and
    a child's prompt carries a turn marker while the parent's does not."""
    read = {"tool_use": {"name": "Read", "input": {"file_path": path}}}
    agents = []
    for f, t in fanouts:
        calls = [
            {
                "name": "Agent",
                "input": {
                    "description": f"bench worker {i}",
                    "prompt": user_prompt(t, path, worker=i),
                    "subagent_type": "general-purpose",
                    "name": child_name(i),
                },
            }
            for i in range(f)
        ]
        agents.append(
            {
                "name": f"fanout{f}x{t}",
                "match": {"prompt_contains": fanout_marker(f, t)},
                "turns": [{"tool_use": calls}, {"text": FINAL_TEXT}],
            }
        )
        # openai-agents' agent-as-tool pattern: one `sub_agent` call per child, whose input
        # becomes the child agent's prompt.
        subs = [
            {"name": "sub_agent", "input": {"input": user_prompt(t, path, worker=i)}}
            for i in range(f)
        ]
        agents.append(
            {
                "name": f"oai_fanout{f}x{t}",
                "match": {"prompt_contains": oai_fanout_marker(f, t)},
                "turns": [{"tool_use": subs}, {"text": FINAL_TEXT}],
            }
        )
    for n in sorted(set(turn_counts)):
        agents.append(
            {
                "name": f"seq{n}",
                "match": {"prompt_contains": turns_marker(n)},
                "turns": [read] * n + [{"text": FINAL_TEXT}],
            }
        )
    return {"agents": agents}


def _config(max_concurrent: int, local_model: ModelCallMode) -> OutlastConfig:
    # One attempt per model call: a broken scenario fails at once instead of retrying for
    # hours (the default); the successful path is the same either way.
    return OutlastConfig(
        model=ModelSettings(max_attempts=1, local_activity=local_model),
        agents=AgentSettings(max_concurrent=max(16, max_concurrent)),
    )


def seq_input(
    n_turns: int,
    path: str,
    repo: str,
    host_queue: str,
    *,
    local_model: ModelCallMode = False,
) -> AgentInput:
    return AgentInput(
        prompt=user_prompt(n_turns, path),
        workspace=Workspace(root=repo, host_queue=host_queue),
        config=_config(1, local_model),
    )


def fan_input(
    n_children: int,
    child_turns: int,
    path: str,
    repo: str,
    host_queue: str,
    *,
    local_model: ModelCallMode = False,
) -> AgentInput:
    return AgentInput(
        prompt=fanout_prompt(n_children, child_turns, path),
        workspace=Workspace(root=repo, host_queue=host_queue),
        config=_config(n_children, local_model),
    )


def check(result: AgentResult, turns: int | None) -> None:
    """The run did what the script says: `turns` Read turns plus the final answer."""
    ok = result.status == "completed" and result.final_text.strip() == FINAL_TEXT
    if turns is not None:
        ok = ok and result.turns == turns + 1
    if not ok:
        raise RuntimeError(f"unexpected Outlast result: {result!r}"[:2000])
