"""The state directory keeps itself out of the checkout's git status."""

from __future__ import annotations

import subprocess

import pytest

from activities.store import StateDirError, make_state_dir


def git(repo, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def test_a_new_state_dir_inside_a_checkout_is_ignored_by_git(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OUTLAST_HOME", raising=False)
    root = make_state_dir()
    assert root == tmp_path / ".outlast"
    (root / "store").mkdir()
    (root / "store" / "blob").write_text("a conversation")
    assert git(tmp_path, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_existing_directory_is_left_as_it_is(tmp_path):
    (tmp_path / "mine").mkdir()
    assert make_state_dir(tmp_path / "mine") == tmp_path / "mine"
    assert not (tmp_path / "mine" / ".gitignore").exists()


def test_a_state_dir_that_cannot_be_made_says_what_to_set(tmp_path):
    (tmp_path / "file").write_text("x")
    for where in (tmp_path / "file" / "state", tmp_path / "file"):
        with pytest.raises(StateDirError, match="set OUTLAST_HOME to a directory"):
            make_state_dir(where)
