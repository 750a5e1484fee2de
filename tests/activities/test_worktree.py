"""Worktree activities (spec R51-R53) on real git repositories: create, refuse, race, clean up."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from temporalio.activity import _Definition
from temporalio.testing import ActivityEnvironment

from activities import heartbeats, worktree_owners
from activities import worktree as worktree_module
from activities.worktree import (
    CleanupWorktreeInput,
    CreateWorktreeInput,
    WorktreeCleanup,
    WorktreeInfo,
    WorktreeRefused,
    create_worktree,
)
from activities.worktree_cleanup import cleanup_forecast, cleanup_worktree
from activities.worktree_git import BASES_DIR, LOCK_FILE
from tests.conftest import GIT_ENV, make_git_repo


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def branches(repo: Path) -> set[str]:
    return set(git(repo, "branch", "--format=%(refname:short)").splitlines())


def worktree_paths(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    # `node_modules/` (trailing slash) ignores directories only, so the symlink in a worktree
    # shows up as untracked: cleanup must recognise it as its own.
    root = make_git_repo(tmp_path / "repo", {"README.md": "# r\n", ".gitignore": "node_modules/\n"})
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1;\n")
    return root


async def create(repo: Path, slug: str, **kw: object) -> WorktreeInfo:
    inp = CreateWorktreeInput(repo_root=str(repo), slug=slug, **kw)
    return await ActivityEnvironment().run(create_worktree, inp)


async def cleanup(info: WorktreeInfo) -> WorktreeCleanup:
    return await ActivityEnvironment().run(cleanup_worktree, CleanupWorktreeInput(info=info))


def test_activity_names_are_permanent() -> None:
    assert _Definition.must_from_callable(create_worktree).name == "workspace.create_worktree"
    assert _Definition.must_from_callable(cleanup_worktree).name == "workspace.cleanup_worktree"


async def test_create_makes_worktree_branch_and_symlinks(repo: Path) -> None:
    info = await create(repo, "agent-a1b2c3d4")
    path = repo / ".claude" / "worktrees" / "agent-a1b2c3d4"
    assert info == WorktreeInfo(
        repo_root=str(repo),
        worktree_path=str(path),
        worktree_branch="worktree-agent-a1b2c3d4",
        head_commit=git(repo, "rev-parse", "HEAD"),
        existed=False,
    )
    assert (path / "README.md").read_text() == "# r\n"
    assert "worktree-agent-a1b2c3d4" in branches(repo)
    assert git(path, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")
    assert git(path, "branch", "--show-current") == "worktree-agent-a1b2c3d4"
    assert (path / "node_modules").is_symlink()
    assert (path / "node_modules").resolve() == repo / "node_modules"
    # Not untracked in the main checkout (`?? .claude/`; `git add -A` took it for an
    # embedded repository: a user test, 2026-12-07), and said once however often.
    await create(repo, "agent-second")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    exclude = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("/.claude/worktrees/") == 1


async def test_an_exclude_file_in_another_encoding_does_not_fail_a_creation(repo: Path) -> None:
    """A Latin-1 comment in `info/exclude` failed the activity after `git worktree add`,
    whose retry then told the model it had switched to an existing worktree (a review)."""
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_bytes(b"# caf\xe9\n*.tmp")
    info = await create(repo, "agent-latin")
    assert not info.existed
    assert exclude.read_bytes() == b"# caf\xe9\n*.tmp\n/.claude/worktrees/\n"


async def test_create_from_a_subdirectory_and_nested_slug(repo: Path) -> None:
    (repo / "src").mkdir()
    info = await create(repo / "src", "user/feature-x")
    assert info.worktree_path == str(repo / ".claude" / "worktrees" / "user" / "feature-x")
    assert info.worktree_branch == "worktree-user+feature-x"
    assert info.repo_root == str(repo)


async def test_create_twice_returns_the_existing_worktree(repo: Path) -> None:
    first = await create(repo, "agent-1")
    git(repo, "commit", "--allow-empty", "-qm", "main moves on")  # the base must not follow
    second = await create(repo, "agent-1")
    assert second.existed
    assert second.model_copy(update={"existed": False}) == first
    assert len(worktree_paths(repo)) == 2


async def test_eight_concurrent_creations_all_succeed(repo: Path) -> None:
    slugs = [f"agent-{i:08x}" for i in range(8)]
    infos = await asyncio.gather(*(create(repo, s) for s in slugs))
    assert [i.existed for i in infos] == [False] * 8
    listed = worktree_paths(repo)[1:]
    assert sorted(listed) == sorted(i.worktree_path for i in infos)
    assert len(set(listed)) == 8
    assert {f"worktree-{s}" for s in slugs} <= branches(repo)


async def test_racing_attempts_for_the_same_slug_agree(repo: Path) -> None:
    # A retry can start while its timed-out first attempt is still running: without the
    # repository lock both would try `git worktree add -b` for the same branch.
    slugs = [f"agent-{i:08x}" for i in range(8)]
    infos = await asyncio.gather(*(create(repo, s) for s in slugs for _ in range(2)))
    for slug in slugs:
        mine = [i for i in infos if i.worktree_branch == f"worktree-{slug}"]
        assert sorted(i.existed for i in mine) == [False, True]
        assert len({i.head_commit for i in mine}) == 1
    assert len(worktree_paths(repo)) == 9


async def test_creation_waits_for_the_lock_and_heartbeats(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heartbeats, "HEARTBEAT_INTERVAL_S", 0.5)  # 5 s in production
    beats: list[object] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)
    inp = CreateWorktreeInput(repo_root=str(repo), slug="agent-w")
    fd = os.open(repo / ".git" / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        task = asyncio.create_task(env.run(create_worktree, inp))
        await asyncio.sleep(1.5)
        assert not task.done()
        assert beats, "no heartbeat while waiting for the lock"
    finally:
        os.close(fd)
    assert (await task).existed is False


async def test_cancelled_while_waiting_creates_nothing(repo: Path) -> None:
    env = ActivityEnvironment()
    inp = CreateWorktreeInput(repo_root=str(repo), slug="agent-c")
    fd = os.open(repo / ".git" / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        task = asyncio.create_task(env.run(create_worktree, inp))
        await asyncio.sleep(0.3)
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        os.close(fd)
    await asyncio.sleep(0.5)  # the abandoned thread gets the lock and must give up
    assert not (repo / ".claude").exists()
    assert branches(repo) == {"main"}


@pytest.mark.parametrize(
    ("slug", "message"),
    [
        ("../x", 'Invalid worktree name "../x": must not contain "." or ".." path segments'),
        ("a..b", 'Invalid worktree name "a..b": must not contain "." or ".." path segments'),
        ("/abs", 'Invalid worktree name "/abs": each "/"-separated segment must be non-empty'),
        ("a" * 65, "Invalid worktree name: must be 64 characters or fewer (got 65)"),
        ("x.lock", "worktree-x.lock is not a valid git branch name"),
    ],
)
async def test_refused_slug_creates_nothing(repo: Path, slug: str, message: str) -> None:
    before = branches(repo)
    with pytest.raises(WorktreeRefused) as err:
        await create(repo, slug)
    assert err.value.message.startswith(message)
    assert err.value.non_retryable and err.value.type == "WorktreeRefused"
    assert not (repo / ".claude").exists()
    assert branches(repo) == before
    assert worktree_paths(repo) == [str(repo)]
    assert not (repo.parent / "x").exists()


async def test_refused_symlink_dir_entry(repo: Path) -> None:
    with pytest.raises(WorktreeRefused, match="symlink_dirs"):
        await create(repo, "agent-s", symlink_dirs=["../outside"])
    assert not (repo / ".claude").exists()


@pytest.mark.parametrize("where", ["plain", "missing"])
async def test_not_a_repository_is_refused(tmp_path: Path, where: str) -> None:
    root = tmp_path / where
    if where == "plain":
        root.mkdir()
    with pytest.raises(WorktreeRefused) as err:
        await create(root, "agent-1")
    assert err.value.message == f"{root} is not a git repository; isolation: worktree needs one"
    assert err.value.non_retryable
    assert not (root / ".claude").exists()


async def test_repository_without_commits_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    with pytest.raises(WorktreeRefused, match="no commits"):
        await create(root, "agent-1")


async def test_path_taken_by_a_plain_directory_is_refused(repo: Path) -> None:
    taken = repo / ".claude" / "worktrees" / "agent-t"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("mine\n")
    with pytest.raises(WorktreeRefused, match="not a worktree"):
        await create(repo, "agent-t")
    assert (taken / "notes.txt").read_text() == "mine\n"


async def test_branch_left_without_its_worktree_is_reused(repo: Path) -> None:
    first = await create(repo, "agent-b")
    git(repo, "worktree", "remove", "--force", first.worktree_path)  # as if add had crashed
    git(repo, "commit", "--allow-empty", "-qm", "main moves on")
    again = await create(repo, "agent-b")
    assert again == first
    assert git(Path(again.worktree_path), "rev-parse", "HEAD") == first.head_commit


async def test_deleted_directory_is_recreated(repo: Path) -> None:
    first = await create(repo, "agent-d")
    shutil.rmtree(first.worktree_path)
    again = await create(repo, "agent-d")
    assert again == first
    assert (Path(again.worktree_path) / "README.md").exists()


async def test_interrupted_add_is_redone(repo: Path) -> None:
    first = await create(repo, "agent-i")
    path = Path(first.worktree_path)
    (repo / ".git" / "worktrees" / "agent-i" / "locked").write_text("initializing")
    (path / "README.md").unlink()  # the checkout never finished
    again = await create(repo, "agent-i")
    assert again == first
    assert (path / "README.md").read_text() == "# r\n"


async def test_cleanup_removes_an_add_that_never_finished(repo: Path) -> None:
    """The worker was killed inside `git worktree add` and the owner then terminated, so no
    retry came: git's own `initializing` lock was taken for a person's, the half-made
    worktree kept for good and its record forgotten. A person's lock still keeps one."""
    first = await create(repo, "agent-j")
    (repo / ".git" / "worktrees" / "agent-j" / "locked").write_text("initializing")
    (Path(first.worktree_path) / "README.md").unlink()  # the checkout never finished
    assert (await cleanup(first)).kept is False
    assert not Path(first.worktree_path).exists() and "worktree-agent-j" not in branches(repo)
    mine = await create(repo, "agent-k")
    git(repo, "worktree", "lock", "--reason", "mine", mine.worktree_path)
    kept = await cleanup(mine)
    assert kept.kept is True and "locked mine" in kept.reason


async def test_cleanup_without_changes_removes_worktree_and_branch(repo: Path) -> None:
    info = await create(repo, "agent-clean")
    result = await cleanup(info)
    assert result.kept is False
    assert not Path(info.worktree_path).exists()
    assert "worktree-agent-clean" not in branches(repo)
    assert worktree_paths(repo) == [str(repo)]
    assert (repo / "node_modules" / "left-pad" / "index.js").exists()  # link removed, not target
    assert not (repo / ".git" / BASES_DIR / "worktree-agent-clean").exists()


async def test_cleanup_keeps_a_worktree_with_new_commits(repo: Path) -> None:
    info = await create(repo, "agent-commit")
    path = Path(info.worktree_path)
    (path / "feature.py").write_text("x = 1\n")
    git(path, "add", "feature.py")
    git(path, "commit", "-qm", "feature")
    result = await cleanup(info)
    assert result.kept is True
    assert "1 new commit" in result.reason
    assert path.is_dir()
    assert "worktree-agent-commit" in branches(repo)


@pytest.mark.parametrize(
    ("change", "word"), [("untracked", "1 untracked file"), ("modified", "1 modified file")]
)
async def test_cleanup_keeps_a_worktree_with_file_changes(
    repo: Path, change: str, word: str
) -> None:
    info = await create(repo, f"agent-{change}")
    path = Path(info.worktree_path)
    target = path / ("new.txt" if change == "untracked" else "README.md")
    target.write_text("changed\n")
    result = await cleanup(info)
    assert result.kept is True
    assert word in result.reason
    assert "commit" not in result.reason
    assert target.read_text() == "changed\n"


def _commit_in(path: Path) -> None:
    (path / "feature.py").write_text("x = 1\n")
    git(path, "add", "feature.py")
    git(path, "commit", "-qm", "feature")


STATES = {
    "clean": lambda path, repo: None,
    "untracked": lambda path, repo: (path / "new.txt").write_text("new\n"),
    "commit": lambda path, repo: _commit_in(path),
    "branch only": lambda path, repo: (
        _commit_in(path),
        git(repo, "worktree", "remove", "--force", str(path)),
    ),
    "add never finished": lambda path, repo: (
        repo / ".git" / "worktrees" / path.name / "locked"
    ).write_text("initializing"),
    "locked": lambda path, repo: git(repo, "worktree", "lock", "--reason", "mine", str(path)),
}


@pytest.mark.parametrize("state", list(STATES))
async def test_the_forecast_says_what_the_cleanup_then_does_and_changes_nothing(
    repo: Path, state: str
) -> None:
    """`outlast reap --dry-run` said "would clean up" of every worktree, and the real run
    then kept the ones with work in them (a user test, 2026-12-05)."""
    info = await create(repo, f"agent-{state.replace(' ', '-')}")
    STATES[state](Path(info.worktree_path), repo)
    before = (worktree_paths(repo), branches(repo), git(repo, "worktree", "list", "--porcelain"))
    would = await asyncio.to_thread(cleanup_forecast, info)
    assert (worktree_paths(repo), branches(repo), git(repo, "worktree", "list", "--porcelain")) == (
        before
    )
    done = await cleanup(info)
    assert would.kept == done.kept, (would, done)
    if done.kept:
        assert done.reason.split(": ", 1)[-1] in would.reason, (would, done)


async def test_cleanup_twice_is_harmless(repo: Path) -> None:
    info = await create(repo, "agent-twice")
    assert (await cleanup(info)).kept is False
    again = await cleanup(info)
    assert again.kept is False
    assert worktree_paths(repo) == [str(repo)]


async def test_cleanup_after_a_crash_between_its_steps_deletes_the_branch(repo: Path) -> None:
    info = await create(repo, "agent-half")
    git(repo, "worktree", "remove", "--force", info.worktree_path)
    assert (await cleanup(info)).kept is False
    assert "worktree-agent-half" not in branches(repo)


async def test_cleanup_keeps_worktrees_outlast_did_not_create(repo: Path) -> None:
    path = repo / ".claude" / "worktrees" / "by-hand"
    git(repo, "worktree", "add", "-q", "-b", "worktree-by-hand", str(path), "HEAD")
    info = await create(repo, "by-hand")
    assert info.existed
    result = await cleanup(info)
    assert result.kept is True and "no recorded base" in result.reason
    assert path.is_dir() and "worktree-by-hand" in branches(repo)


async def test_cleanup_refuses_a_path_outside_the_worktrees_dir(repo: Path) -> None:
    info = await create(repo, "agent-x")
    for path in (repo, repo / ".claude" / "worktrees", repo / ".claude/worktrees/../.."):
        with pytest.raises(WorktreeRefused, match="is not a worktree under"):
            await cleanup(info.model_copy(update={"worktree_path": str(path)}))
        # The dry run's forecast refuses it as the cleanup does (a review, 2026-12-05).
        with pytest.raises(WorktreeRefused, match="is not a worktree under"):
            cleanup_forecast(info.model_copy(update={"worktree_path": str(path)}))
    assert Path(info.worktree_path).is_dir()


HOSTILE_SLUGS = ["-rf", "--upload-pack=touch${IFS}PWNED", "a;rm -rf ~", "x" * 300, "../x", "x.lock"]


@pytest.mark.reliability
async def test_hostile_slugs_never_reach_git_as_options(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reliability row 14: whatever the slug, git sees it only inside a branch name or a path,
    never as an option; the refused ones create nothing."""
    calls = tmp_path / "git-calls.log"
    shim = tmp_path / "shim"
    shim.mkdir()
    real_git = shutil.which("git")
    (shim / "git").write_text(
        f'#!/bin/sh\nprintf "%s\\0" "$@" >> {calls}\nprintf "\\n" >> {calls}\n'
        f'exec {real_git} "$@"\n'
    )
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}:{os.environ['PATH']}")
    for slug in HOSTILE_SLUGS:
        before = branches(repo)
        try:
            info = await create(repo, slug)
        except WorktreeRefused:
            assert branches(repo) == before, slug
            continue
        # Accepted only as a name that git cannot take for an option.
        assert info.worktree_branch == f"worktree-{slug}"
        await cleanup(info)
    argvs = [line.split("\0")[:-1] for line in calls.read_text().splitlines() if line]
    # The accepted slug reached `git worktree add` through the shim: the check below bites.
    assert any(argv[:2] == ["worktree", "add"] for argv in argvs), argvs
    for argv in argvs:
        for arg in argv:
            if arg.startswith("-"):
                assert not any(slug in arg for slug in HOSTILE_SLUGS), argv
    assert not list(repo.rglob("PWNED")) and not (repo.parent / "x").exists()


# ExitWorktree's actions (T18): keep, remove only what loses nothing, discard.


async def leave(info: WorktreeInfo, action: str) -> WorktreeCleanup:
    inp = CleanupWorktreeInput(info=info, action=action)  # type: ignore[arg-type]
    return await ActivityEnvironment().run(cleanup_worktree, inp)


def owned(info: WorktreeInfo) -> bool:
    return any(o.worktree_path == info.worktree_path for o in worktree_owners.recorded())


def commit_in(path: Path, name: str) -> None:
    (path / name).write_text(f"{name}\n")
    git(path, "add", name)
    git(path, "commit", "-qm", name)


async def test_the_default_action_is_not_in_the_payload(repo: Path) -> None:
    info = await create(repo, "agent-payload")
    # An agent's end schedules the same input as before ExitWorktree existed.
    assert "action" not in CleanupWorktreeInput(info=info).model_dump()
    assert "refused" not in WorktreeCleanup(kept=False, reason="x").model_dump()


async def test_keep_leaves_it_and_drops_the_reapers_record(repo: Path) -> None:
    info = await ActivityEnvironment().run(
        create_worktree,
        CreateWorktreeInput(repo_root=str(repo), slug="kept", owner_workflow_id="wf-1"),
    )
    assert owned(info)
    result = await leave(info, "keep")
    assert result.kept is True and not result.refused
    assert Path(info.worktree_path).is_dir() and "worktree-kept" in branches(repo)
    assert not owned(info)  # kept on purpose: the reaper must not remove it later


async def test_remove_of_an_unchanged_worktree_removes_it_and_its_branch(repo: Path) -> None:
    info = await create(repo, "plain")
    result = await leave(info, "remove")
    assert result == WorktreeCleanup(kept=False, reason="worktree and branch removed")
    assert worktree_paths(repo) == [str(repo)] and "worktree-plain" not in branches(repo)


async def test_remove_refuses_uncommitted_files_and_unmerged_commits(repo: Path) -> None:
    info = await create(repo, "busy")
    path = Path(info.worktree_path)
    commit_in(path, "one.py")
    commit_in(path, "two.py")
    (path / "README.md").write_text("changed\n")
    (path / "scratch.txt").write_text("new\n")
    result = await leave(info, "remove")
    assert result.refused and result.kept
    assert result.unsaved == ["2 commits on no other branch", "1 modified file", "1 untracked file"]
    assert path.is_dir() and (path / "scratch.txt").exists()
    assert "worktree-busy" in branches(repo)


async def test_remove_takes_a_worktree_whose_commits_were_merged(repo: Path) -> None:
    info = await create(repo, "merged")
    commit_in(Path(info.worktree_path), "feature.py")
    main = git(repo, "branch", "--show-current")
    git(repo, "merge", "-q", "--ff-only", "worktree-merged")
    assert git(repo, "branch", "--show-current") == main
    result = await leave(info, "remove")
    assert result.kept is False, result
    assert "worktree-merged" not in branches(repo)
    assert (repo / "feature.py").exists()  # the merged work stays on the main branch


async def test_discard_removes_it_whatever_it_holds(repo: Path) -> None:
    info = await create(repo, "throwaway")
    path = Path(info.worktree_path)
    commit_in(path, "experiment.py")
    (path / "README.md").write_text("changed\n")
    result = await leave(info, "discard")
    assert result.kept is False and not result.refused
    assert not path.exists() and "worktree-throwaway" not in branches(repo)
    assert not owned(info)


async def test_remove_refuses_one_outlast_did_not_create(repo: Path) -> None:
    path = repo / ".claude" / "worktrees" / "by-hand"
    git(repo, "worktree", "add", "-q", "-b", "worktree-by-hand", str(path), "HEAD")
    info = await create(repo, "by-hand")
    for action in ("remove", "discard"):
        result = await leave(info, action)
        assert result.refused and "not created by Outlast" in result.reason
        assert result.unsaved == []
    assert path.is_dir() and "worktree-by-hand" in branches(repo)


async def test_remove_of_a_branch_left_without_its_directory_checks_the_branch(
    repo: Path,
) -> None:
    info = await create(repo, "gone")
    commit_in(Path(info.worktree_path), "kept.py")
    git(repo, "worktree", "remove", "--force", info.worktree_path)
    result = await leave(info, "remove")
    assert result.refused and result.unsaved == ["1 commit on no other branch"]
    assert (await leave(info, "discard")).kept is False
    assert "worktree-gone" not in branches(repo)


async def test_an_exclusive_creation_takes_only_its_own(repo: Path) -> None:
    def exclusive(owner: str) -> CreateWorktreeInput:
        return CreateWorktreeInput(
            repo_root=str(repo), slug="mine", owner_workflow_id=owner, exclusive=True
        )

    env = ActivityEnvironment()
    info = await env.run(create_worktree, exclusive("wf-a"))
    again = await env.run(create_worktree, exclusive("wf-a"))  # a retry of its own
    assert again.existed and again.worktree_path == info.worktree_path
    with pytest.raises(WorktreeRefused, match="already exists .* not this session's"):
        await env.run(create_worktree, exclusive("wf-b"))
    await leave(info, "keep")  # kept: nobody's now, not even its creator's
    with pytest.raises(WorktreeRefused, match="already exists"):
        await env.run(create_worktree, exclusive("wf-a"))
    assert "exclusive" not in CreateWorktreeInput(repo_root="/r", slug="s").model_dump()


async def test_a_worktree_holding_another_is_neither_cleaned_up_nor_removed(repo: Path) -> None:
    outer = await create(repo, "outer")
    inner = await create(Path(outer.worktree_path), "inner")  # made from inside it
    assert Path(inner.worktree_path).is_relative_to(outer.worktree_path)
    (Path(inner.worktree_path) / "work.txt").write_text("unsaved\n")
    cleaned = await cleanup(outer)
    assert cleaned.kept and "holds other worktrees" in cleaned.reason
    for action in ("remove", "discard"):
        refused = await leave(outer, action)
        assert refused.refused and "would go with it" in refused.reason
    assert (Path(inner.worktree_path) / "work.txt").read_text() == "unsaved\n"


async def test_another_worktrees_branch_does_not_hold_a_commit_for_removal(repo: Path) -> None:
    outer = await create(repo, "holder")
    commit_in(Path(outer.worktree_path), "only-here.py")
    tip = git(Path(outer.worktree_path), "rev-parse", "HEAD")
    # Another worktree's branch comes to hold the same commit; it is as temporary as this
    # one's (it goes with its worktree), so the commit is still on no other branch.
    sibling = await create(repo, "sibling")
    git(Path(sibling.worktree_path), "reset", "-q", "--hard", tip)
    result = await leave(outer, "remove")
    assert result.refused and result.unsaved == ["1 commit on no other branch"], result
    git(repo, "branch", "made-by-hand", tip)  # a branch of the user's does hold it
    assert (await leave(outer, "remove")).kept is False
    assert git(repo, "rev-parse", "made-by-hand") == tip


async def test_an_exclusive_creation_that_failed_half_way_is_its_own_on_retry(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inp = CreateWorktreeInput(
        repo_root=str(repo), slug="retried", owner_workflow_id="wf-r", exclusive=True
    )
    real_add = worktree_module._add

    def add_then_crash(*args: object) -> None:
        real_add(*args)  # type: ignore[arg-type]
        raise OSError("worker lost mid-creation")

    monkeypatch.setattr(worktree_module, "_add", add_then_crash)
    with pytest.raises(OSError):
        await ActivityEnvironment().run(create_worktree, inp)
    # Owned already (the reaper can find it), and the retry takes it as its own.
    assert worktree_owners.owner_of(str(repo / ".claude/worktrees/retried")) is not None
    monkeypatch.setattr(worktree_module, "_add", real_add)
    info = await ActivityEnvironment().run(create_worktree, inp)
    assert info.existed and Path(info.worktree_path).is_dir()
