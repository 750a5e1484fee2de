"""Coordinator mode texts and worker tool sets (spec R12, R56-R62)."""

import pytest

from agents.builtin import coordinator
from agents.builtin.coordinator import (
    COORDINATOR_TOOLS,
    DEFINITION,
    PROMPT,
    WORKER_DEFINITION,
    WORKER_INSTRUCTIONS,
    unsynthesized_phrase,
    worker_system_prompt,
    worker_tools,
    worker_tools_context,
)

CURRENT_POOL = ["Agent", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "SendMessage", "TaskStop"]

HEADINGS = [
    "## 1. Your Role",
    "## 2. Your Tools",
    "## 3. Workers",
    "## 4. Task Workflow",
    "## 5. Writing Worker Prompts",
    "## 6. Example Session",
]

RULES = [
    "Every message you send is to the user.",
    "Do not use one worker to check on another. Workers will notify you when they are done.",
    "Do not use workers to trivially report file contents or run commands. "
    "Give them higher-level tasks.",
    "Do not set the model parameter.",
    "Workers can't see your conversation. Every prompt must be self-contained.",
    '"based on your findings"',
    '"based on the research"',
    "This research will inform a PR description — focus on user-facing changes",
    "Report findings — do not modify files",
    "Parallelism is your superpower",
    "synthesize results and communicate with the user",
    'subagent_type: "worker"',
    "A continued worker keeps its full prior transcript",
]

PHASE_ROWS = [
    "| Phase | Who | Concurrency |",
    "| Research | workers | free parallelism (read-only, no conflict risk) |",
    "| Synthesis | you (the coordinator) |",
    "| Implementation | workers | serial per set of files",
    "| Verification | workers | may run alongside implementation on different file areas |",
]

CONTINUE_SPAWN_ROWS = [
    "| Situation | Mechanism | Why |",
    "| Research explored exactly the files that need editing | **Continue** (SendMessage) "
    "with synthesised spec | worker already has the files in context |",
    "| Research was broad but implementation is narrow | **Spawn fresh** | avoid exploration "
    "noise |",
    "| Correcting a failure or extending recent work | **Continue** | worker has the error "
    "context |",
    "| Verifying code a different worker just wrote | **Spawn fresh** | fresh eyes, no "
    "implementation assumptions |",
    "| First implementation attempt used the wrong approach entirely | **Spawn fresh** | "
    "wrong context anchors the retry |",
    "| Completely unrelated task | **Spawn fresh** | nothing to reuse |",
]

FAILURE_LINES = (
    "When a worker reports failure:\n"
    "- Continue the same worker with SendMessage — it has the full error context\n"
    "- If a correction attempt fails, try a different approach or report to the user"
)


def test_six_sections_in_order():
    positions = [PROMPT.index(h) for h in HEADINGS]
    assert positions == sorted(positions)


@pytest.mark.parametrize("rule", RULES)
def test_prompt_carries_rule(rule):
    assert rule in PROMPT


@pytest.mark.parametrize("row", PHASE_ROWS + CONTINUE_SPAWN_ROWS)
def test_prompt_tables_are_whole_markdown_rows(row):
    assert any(line.startswith(row) for line in PROMPT.splitlines())


def test_failure_lines_and_stopping():
    assert FAILURE_LINES in PROMPT
    assert "`task_id` from the Agent launch result" in PROMPT
    assert "Stopped workers can be continued with SendMessage" in PROMPT


def test_runtime_phase_and_files_explained():
    for text in ('"research", "implementation", "verification"', "`files`", "queued"):
        assert text in PROMPT
    assert "<task-notification>" in PROMPT


def test_prompt_lines_fit_and_nothing_is_joined_badly():
    assert "  " not in PROMPT.replace("\n  ", "\n")
    assert "\\" not in PROMPT


def test_coordinator_definition():
    assert DEFINITION.agent_type == "coordinator"
    assert DEFINITION.tools == COORDINATOR_TOOLS == ["Agent", "SendMessage", "TaskStop"]
    assert DEFINITION.system_prompt == PROMPT
    assert DEFINITION.is_built_in


def test_worker_tools_for_the_current_pool():
    assert worker_tools(CURRENT_POOL) == ["Bash", "Edit", "Glob", "Grep", "Read", "Write"]


def test_worker_tools_simple_mode():
    assert worker_tools(CURRENT_POOL, simple=True) == ["Bash", "Edit", "Read"]
    assert worker_tools(["Read", "Grep"], simple=True) == ["Read"]


def test_worker_tools_keep_mcp_and_drop_internal():
    tools = worker_tools([*CURRENT_POOL, "mcp__slack__post", "SyntheticOutput", "TeamCreate"])
    assert "mcp__slack__post" in tools
    assert not coordinator.INTERNAL_WORKER_TOOLS & set(tools)


def test_worker_tools_context_golden():
    text = worker_tools_context(
        ["Read", "Bash", "Edit"], mcp_servers=["slack"], scratchpad_dir="/state/s1/scratchpad"
    )
    assert text == (
        "Workers spawned via the Agent tool have access to these tools: Bash, Edit, Read"
        "\n\nWorkers also have access to MCP tools from connected MCP servers: slack"
        "\n\nScratchpad directory: /state/s1/scratchpad\n"
        "Workers can read and write here without permission prompts. Use this for durable "
        "cross-worker knowledge — structure files however fits the work."
    )


def test_worker_tools_context_minimal():
    assert worker_tools_context(["Read"]) == (
        "Workers spawned via the Agent tool have access to these tools: Read"
    )


def test_worker_prompt_has_commit_rule_and_summary():
    prompt = worker_system_prompt("BASE")
    assert prompt.startswith("BASE\n\n") and prompt.endswith(WORKER_INSTRUCTIONS)
    assert "never `git add .` or `git add -A`" in prompt
    assert "Report the commit hash" in prompt
    assert "`Summary:`" in prompt


def test_worker_definition():
    assert WORKER_DEFINITION.agent_type == "worker"
    assert WORKER_DEFINITION.tools is None and WORKER_DEFINITION.allows_all_tools()
    assert WORKER_DEFINITION.system_prompt.endswith(WORKER_INSTRUCTIONS)
    assert WORKER_DEFINITION.is_built_in
    assert "default" in WORKER_DEFINITION.when_to_use


@pytest.mark.parametrize(
    ("prompt", "phrase"),
    [
        ("Based on your findings, fix the auth bug", "based on your findings"),
        ("Fix it BASED ON THE RESEARCH above", "based on the research"),
        ("based on the findings, edit x.py", "based on the findings"),
        ("Implement the plan based on your research.", "based on your research"),
        ("Fix the null check in src/auth/validate.ts:42.", None),
        ("", None),
    ],
)
def test_unsynthesized_phrase(prompt, phrase):
    assert unsynthesized_phrase(prompt) == phrase
