"""Reliability row 15, writers: a writer's Bash changes its workspace and commits, but cannot
touch git's hooks or config, the main checkout of its worktree, or anything else on disk."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.sandbox import (
    WRITER_BWRAP_REQUIRED,
    WRITER_SANDBOX_ENV,
    forget_bwrap_probe,
    git_dirs,
)
from activities.tools.base import ToolContext
from activities.tools.bash import BashInput, BashRequest, run_bash
from tests.activities.test_tool_bash import snapshot

pytestmark = pytest.mark.reliability

GIT_ID = "-c user.name=t -c user.email=t@t"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = (tmp_path / "repo").resolve()
    root.mkdir()
    git(root, "init", "-q")
    (root / "inside.txt").write_text("a line\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("OUTSIDE\n")
    return root


async def bash(workspace: Path, command: str) -> tuple[bool, str]:
    ctx = ToolContext(workspace_root=str(workspace), cwd=str(workspace))
    out = await ActivityEnvironment().run(
        run_bash, BashRequest(ctx=ctx, input=BashInput(command=command))
    )
    return out.is_error, out.content


def protected(repo: Path) -> dict[str, str]:
    """What no writer command may change: git's hooks and config, and the world outside."""
    git_dir = repo / ".git"
    return {
        **{f"hooks/{k}": v for k, v in snapshot(git_dir / "hooks").items()},
        "config": (git_dir / "config").read_text(),
        **{f"outside/{k}": v for k, v in snapshot(repo.parent / "outside").items()},
    }


ESCAPES = [
    "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
    "cp .git/hooks/pre-commit.sample .git/hooks/pre-commit",
    "rm -rf .git/hooks",
    "git config core.hooksPath .githooks",
    "git config core.fsmonitor 'touch /tmp/pwned'",
    "echo '[alias] st = !touch pwned' >> .git/config",
    "echo x > ../outside/secret.txt",
    "touch ../outside/planted",
    "python3 -c \"open('../outside/planted', 'w').write('x')\"",
]


@pytest.mark.parametrize("command", ESCAPES)
async def test_a_writer_cannot_touch_git_hooks_config_or_outside(repo: Path, command: str) -> None:
    before = protected(repo)
    # The same shell does change the workspace and commit: the sandbox is not read-only.
    is_error, content = await bash(
        repo, f"echo more >> inside.txt && git add -A && git {GIT_ID} commit -qm two && echo ok"
    )
    assert (is_error, content) == (False, "ok")
    await bash(repo, command)
    assert protected(repo) == before
    settings = git(repo, "config", "--list", "--local")
    assert "hookspath" not in settings and "fsmonitor" not in settings, settings


async def test_a_worktree_writer_commits_but_leaves_the_main_checkout_alone(repo: Path) -> None:
    worktree = (repo.parent / "wt").resolve()
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    dirs = git_dirs(worktree)
    assert dirs is not None and dirs.common == (repo / ".git").resolve()
    main_files = snapshot(repo)
    before = protected(repo)
    is_error, content = await bash(
        worktree, f"echo wt > new.txt && git add -A && git {GIT_ID} commit -qm wt && echo ok"
    )
    assert (is_error, content) == (False, "ok")
    assert git(repo, "log", "-1", "--format=%s", "side").strip() == "wt"
    for command in (
        f"echo x > {repo}/inside.txt",
        "printf 'echo pwned\\n' > \"$(git rev-parse --git-common-dir)/hooks/post-commit\"",
        "git config --local core.hooksPath /tmp",
    ):
        await bash(worktree, command)
    assert protected(repo) == before
    # The main checkout's files are unchanged; its .git took only the new commit.
    assert {k: v for k, v in snapshot(repo).items() if not k.startswith(".git")} == {
        k: v for k, v in main_files.items() if not k.startswith(".git")
    }


async def test_tmp_lasts_between_calls_and_is_not_the_hosts(repo: Path) -> None:
    assert await bash(repo, "echo kept > /tmp/outlast-test-note && echo ok") == (False, "ok")
    assert await bash(repo, "cat /tmp/outlast-test-note") == (False, "kept")
    assert not Path("/tmp/outlast-test-note").exists()


async def test_the_bubblewrap_probe_does_not_hold_up_the_event_loop(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first writer calls probe bubblewrap, once; a probe that takes a second must not
    stall the worker's other coroutines meanwhile."""
    real = shutil.which("bwrap")
    assert real is not None
    slow, probes = tmp_path / "bin" / "bwrap", tmp_path / "probes"
    slow.parent.mkdir()
    # The probe's command is `true`; a real command's is `bash -c <script>`.
    slow.write_text(
        f'#!/bin/bash\n[ "${{!#}}" = true ] && echo probe >> {probes} && sleep 1\n'
        f'exec {real} "$@"\n'
    )
    slow.chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow.parent}:{os.environ['PATH']}")
    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    forget_bwrap_probe()
    ticker = asyncio.create_task(tick())
    try:
        started = time.monotonic()
        calls = [bash(repo, f"echo hi {i}") for i in range(3)]
        assert await asyncio.gather(*calls) == [(False, f"hi {i}") for i in range(3)]
        assert time.monotonic() - started >= 1.0  # the slow probe ran
    finally:
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
        forget_bwrap_probe()
    assert max(gaps) < 0.5
    assert probes.read_text() == "probe\n"


async def test_the_operator_chooses(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WRITER_SANDBOX_ENV, "off")
    outside = repo.parent / "outside" / "planted"
    assert await bash(repo, f"touch {outside} && echo ok") == (False, "ok")
    assert outside.exists()
    monkeypatch.setenv(WRITER_SANDBOX_ENV, "bwrap")
    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap to be found
    forget_bwrap_probe()
    try:
        assert await bash(repo, "echo hi") == (True, WRITER_BWRAP_REQUIRED)
    finally:
        forget_bwrap_probe()
