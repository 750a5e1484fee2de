"""Definition loading (R6) and context rendering (R15) as activities on real files."""

from __future__ import annotations

import asyncio
import json
import os

from temporalio.testing import ActivityEnvironment

from activities.context import (
    CLAUDE_MD_MAX_CHARS,
    RenderContextInput,
    claude_md_block,
    render_context,
)
from activities.definitions import (
    MAX_DEFINITION_BYTES,
    LoadDefinitionsInput,
    definition_names,
    load_definitions,
)
from activities.store import default_store


def write_agent(directory, name, description, body):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}-{description}.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    )


async def test_project_definition_beats_user_and_bad_files_are_reported(git_repo, tmp_path):
    home = tmp_path / "home"
    write_agent(home / ".claude" / "agents", "reviewer", "user", "USER PROMPT")
    write_agent(git_repo / ".claude" / "agents" / "nested", "reviewer", "project", "PROJECT PROMPT")
    (git_repo / ".claude" / "agents" / "broken.md").write_text("no frontmatter here")
    loaded = await ActivityEnvironment().run(
        load_definitions, LoadDefinitionsInput(workspace_root=str(git_repo), user_home=str(home))
    )
    assert loaded.get("reviewer").system_prompt == "PROJECT PROMPT"
    assert loaded.get("reviewer").source == "projectSettings"
    assert {"general-purpose", "Explore", "Plan", "reviewer"} <= set(loaded.names())
    assert len(loaded.errors) == 1 and "broken.md" in loaded.errors[0]


async def test_two_files_of_one_directory_defining_one_name_are_reported(git_repo, tmp_path):
    """The last by path was used, and which one was said nowhere (a user test, 2026-12-07)."""
    agents = git_repo / ".claude" / "agents"
    write_agent(agents, "dup", "one", "FIRST")
    write_agent(agents, "dup", "two", "SECOND")
    loaded = await ActivityEnvironment().run(
        load_definitions,
        LoadDefinitionsInput(workspace_root=str(git_repo), user_home=str(tmp_path / "home")),
    )
    assert loaded.get("dup").system_prompt == "SECOND"
    (line,) = loaded.errors
    assert line == (
        f"{agents}/dup-one.md: not used: {agents}/dup-two.md defines 'dup' too (the last by "
        "path is used)"
    )


async def test_the_names_a_pattern_checks_are_those_the_definitions_load_with(git_repo, tmp_path):
    home = tmp_path / "home"
    write_agent(git_repo / ".claude" / "agents", "reviewer", "project", "PROJECT PROMPT")
    (git_repo / ".claude" / "agents" / "broken.md").write_text("no frontmatter here")
    req = LoadDefinitionsInput(workspace_root=str(git_repo), user_home=str(home))
    env = ActivityEnvironment()
    loaded = await env.run(load_definitions, req)
    named = await env.run(definition_names, req)
    assert named.names == loaded.names() and "reviewer" in named.names
    assert named.errors == loaded.errors and "broken.md" in named.errors[0]


async def test_files_that_cannot_be_read_are_reported_and_the_rest_load(git_repo, tmp_path):
    agents = git_repo / ".claude" / "agents"
    write_agent(agents, "good", "fine", "GOOD PROMPT")
    os.mkfifo(agents / "fifo.md")  # would block a plain read forever
    (agents / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (agents / "dir.md").mkdir()
    (agents / "loop.md").symlink_to(agents / "loop.md")
    (agents / "crlf.md").write_bytes(b"---\r\nname: crlf\r\ndescription: d\r\n---\r\nA\r\nB\r\n")
    big = "---\nname: big\ndescription: d\n---\n" + "x" * MAX_DEFINITION_BYTES
    (agents / "big.md").write_text(big)
    loaded = await asyncio.wait_for(
        ActivityEnvironment().run(
            load_definitions,
            LoadDefinitionsInput(workspace_root=str(git_repo), user_home=str(tmp_path / "h")),
        ),
        timeout=30,
    )
    assert loaded.get("good").system_prompt == "GOOD PROMPT"
    assert loaded.get("crlf").system_prompt == "A\nB"
    problems = sorted(loaded.errors)
    assert len(problems) == 4, problems
    assert "big.md" in problems[0] and "over 256 KB" in problems[0]
    assert "dangling.md" in problems[1] and "fifo.md" in problems[2]
    assert "not a regular file" in problems[2]
    assert "loop.md" in problems[3]


async def test_the_scan_runs_off_the_worker_s_event_loop(git_repo, tmp_path, monkeypatch):
    """Up to 500 files a directory are read and parsed: on the event loop that would hold
    every workflow task and heartbeat of the worker meanwhile."""
    import threading

    import activities.definitions as definitions

    write_agent(git_repo / ".claude" / "agents", "good", "fine", "GOOD PROMPT")
    threads = []
    real_scan = definitions.scan

    def scan(directory, source):
        threads.append(threading.get_ident())
        return real_scan(directory, source)

    monkeypatch.setattr(definitions, "scan", scan)
    loaded = await ActivityEnvironment().run(
        load_definitions,
        LoadDefinitionsInput(workspace_root=str(git_repo), user_home=str(tmp_path / "h")),
    )
    assert loaded.get("good").system_prompt == "GOOD PROMPT"
    assert len(threads) == 2 and threading.get_ident() not in threads


def test_claude_md_is_read_only_as_far_as_it_is_used(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("é" * (CLAUDE_MD_MAX_CHARS + 10))
    (tmp_path / ".claude").mkdir()
    os.mkfifo(tmp_path / ".claude" / "CLAUDE.md")  # not a file: passed over, never blocks
    block = claude_md_block(str(tmp_path))
    assert block is not None and block.count("é") == CLAUDE_MD_MAX_CHARS
    assert ".claude/CLAUDE.md" not in block
    looped = tmp_path / "looped"
    looped.mkdir()
    (looped / "CLAUDE.md").symlink_to(looped / "CLAUDE.md")
    assert claude_md_block(str(looped)) is None
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    (crlf / "CLAUDE.md").write_bytes(b"one\r\ntwo\r\n")
    assert "one\ntwo" in (claude_md_block(str(crlf)) or "")
    big = tmp_path / "big"
    big.mkdir()
    with (big / "CLAUDE.md").open("wb") as f:
        f.truncate(2 * 1024**3)  # 2 GB, sparse: reading it whole would take that much memory
    block = claude_md_block(str(big))
    assert block is not None and len(block) < CLAUDE_MD_MAX_CHARS + 1000


async def render(repo, **kw) -> list[str]:
    rendered = await ActivityEnvironment().run(
        render_context,
        RenderContextInput(
            system_prompt="PROMPT",
            tool_names=["Read"],
            workspace_root=str(repo),
            cwd=str(repo),
            **kw,
        ),
    )
    assert json.loads(default_store().get(rendered.tools_ref))[0]["name"] == "Read"
    return json.loads(default_store().get(rendered.system_ref))


async def test_claude_md_and_git_status_only_where_wanted(git_repo, state_root):
    (git_repo / "CLAUDE.md").write_text("Always use tabs. MARKER-7731")
    full = "\n".join(await render(git_repo))
    assert "MARKER-7731" in full and "Current branch: main" in full
    assert f"Working directory: {git_repo}" in full
    slim = "\n".join(await render(git_repo, include_claude_md=False, include_git_status=False))
    assert "MARKER-7731" not in slim and "Current branch" not in slim
    assert slim.startswith("PROMPT")


async def test_the_agent_tool_offers_only_the_fields_the_agent_may_use(git_repo, state_root):
    """R16: no `run_in_background` when background tasks are disabled; R73: neither it nor
    `name` for a teammate. Every other field stays, and an agent with none hidden sees both."""

    async def agent_schema(hidden: list[str]) -> dict:
        rendered = await ActivityEnvironment().run(
            render_context,
            RenderContextInput(
                system_prompt="PROMPT",
                tool_names=["Agent"],
                workspace_root=str(git_repo),
                cwd=str(git_repo),
                agent_fields_hidden=hidden,
            ),
        )
        (tool,) = json.loads(default_store().get(rendered.tools_ref))
        return tool["input_schema"]

    full = await agent_schema([])
    assert {"run_in_background", "name"} <= set(full["properties"])
    teammate = await agent_schema(["run_in_background", "name"])
    assert set(full["properties"]) - set(teammate["properties"]) == {"run_in_background", "name"}
    assert teammate["required"] == full["required"]
    again = await agent_schema([])
    assert again == full  # the cached schema is not changed by a hiding
