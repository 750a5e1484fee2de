"""Outlast's directory under the host's /tmp is used only if it is this user's own: the
coordinators' scratchpads (and the writer sandboxes' /tmp, tests/activities/test_sandbox_tmp.py)
would otherwise be readable, or planted, by another user of the machine."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.host_tmp import HostTmpRefused, host_tmp_root
from activities.scratchpad import ScratchpadRequest, create_scratchpad, scratchpad_path


@pytest.fixture(autouse=True)
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    host = tmp_path / "host-tmp"
    host.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(host))
    return host


async def scratchpad(session_id: str) -> str:
    return await ActivityEnvironment().run(
        create_scratchpad, ScratchpadRequest(session_id=session_id)
    )


async def test_a_scratchpad_is_made_private() -> None:
    path = Path(await scratchpad("coord/1"))
    assert str(path) == str(Path(scratchpad_path("coord/1")).resolve()) and path.is_dir()
    for level in (host_tmp_root(), path.parent, path):
        assert stat.S_IMODE(level.stat().st_mode) & 0o077 == 0, level


@pytest.mark.parametrize("squatted", ["open-to-all", "a-link", "a-file"])
async def test_a_scratchpad_under_a_directory_someone_else_could_control_is_refused(
    tmp_path: Path, squatted: str
) -> None:
    root = host_tmp_root()
    if squatted == "open-to-all":
        root.mkdir()
        root.chmod(0o777)
    elif squatted == "a-link":
        (tmp_path / "theirs").mkdir()
        root.symlink_to(tmp_path / "theirs")
    else:
        root.write_text("")
    with pytest.raises(HostTmpRefused) as refused:
        await scratchpad("coord-2")
    assert str(root) in str(refused.value) and refused.value.non_retryable
    assert not (tmp_path / "theirs").exists() or not list((tmp_path / "theirs").iterdir())
