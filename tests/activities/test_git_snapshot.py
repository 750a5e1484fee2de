"""The git status block from one `git status --short --branch` says what the three commands
it replaced said (`rev-parse --is-inside-work-tree`, `branch --show-current`, `status
--short`), in every state a checkout can be in."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from activities.context import branch_of, git_snapshot


def git(cwd: Path, *args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def as_three_commands_say(cwd: Path) -> tuple[bool, str | None, str | None]:
    if git(cwd, "rev-parse", "--is-inside-work-tree") != "true":
        # Inside .git, `branch --show-current` answered "" and gave a status block to a
        # directory the env block called no repository; now neither is there.
        return (False, None, None)
    return (True, git(cwd, "branch", "--show-current"), git(cwd, "status", "--short"))


def as_the_snapshot_says(cwd: Path) -> tuple[bool, str | None, str | None]:
    snap = git_snapshot(str(cwd))
    return (snap is not None, snap and snap.branch, snap and snap.status)


def commit(repo: Path, message: str) -> None:
    who = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", *who, "commit", "-qam", message], cwd=repo, check=True)


def states(tmp_path: Path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    yield "unborn, empty", repo
    (repo / "a.txt").write_text("a\n")
    yield "unborn, untracked file", repo
    subprocess.run(["git", "add", "a.txt"], cwd=repo, check=True)
    commit(repo, "one")
    yield "clean", repo
    (repo / "a.txt").write_text("changed\n")
    (repo / "new file.txt").write_text("n\n")
    (repo / "sub").mkdir()
    yield "modified and untracked, from a subdirectory", repo / "sub"
    subprocess.run(["git", "checkout", "-q", "-b", "feature/x-1"], cwd=repo, check=True)
    subprocess.run(["git", "remote", "add", "origin", str(repo)], cwd=repo, check=True)
    subprocess.run(["git", "fetch", "-q", "origin"], cwd=repo, check=True)
    subprocess.run(["git", "branch", "-q", "-u", "origin/feature/x-1"], cwd=repo, check=True)
    commit(repo, "two")
    yield "ahead of its upstream", repo
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=repo, check=True)
    yield "detached", repo
    yield "the .git directory itself", repo / ".git"
    outside = tmp_path / "plain"
    outside.mkdir()
    yield "not a repository", outside


def test_one_command_says_what_three_said(tmp_path):
    seen = []
    for name, cwd in states(tmp_path):
        assert as_the_snapshot_says(cwd) == as_three_commands_say(cwd), name
        seen.append(name)
    assert len(seen) == 8


@pytest.mark.parametrize(
    ("header", "branch"),
    [
        ("## main", "main"),
        ("## main...origin/main [ahead 1, behind 2]", "main"),
        ("## feature/x...origin/feature/x", "feature/x"),
        ("## No commits yet on trunk", "trunk"),
        ("## Initial commit on trunk", "trunk"),
        ("## HEAD (no branch)", ""),
    ],
)
def test_branch_of_the_header(header, branch):
    assert branch_of(header) == branch
