"""Reliability rows 12, 15 and 16 at the tool level: odd paths are refused as data, writer
tools never touch `.git`, the read-only sandbox refuses every way of writing, and sandboxed
shells reach no network."""

from __future__ import annotations

import asyncio
import shlex
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError
from temporalio.testing import ActivityEnvironment

from activities.tools.base import ToolContext
from activities.tools.bash import BashInput, BashRequest, run_bash
from activities.tools.edit import EditInput, EditRequest, edit_file
from activities.tools.glob import GlobInput, GlobRequest, glob_files
from activities.tools.grep import GrepInput, GrepRequest, grep_files
from activities.tools.read import ReadInput, ReadRequest, read_file
from activities.tools.write import WriteInput, WriteRequest, write_file
from tests.activities.test_tool_bash import snapshot

pytestmark = pytest.mark.reliability


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "inside.txt").write_text("a line\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    # A sibling whose name starts with the workspace's: a prefix test would let it in.
    sibling = tmp_path / "ws-evil"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("SIBLING-SECRET\n")
    return root


def ctx(root: Path, **kw) -> ToolContext:
    return ToolContext(workspace_root=str(root), cwd=str(root), **kw)


async def run(activity, request):
    return await ActivityEnvironment().run(activity, request)


def everything(root: Path) -> dict[str, str]:
    """The workspace and its sibling, .git included: what no refused call may change."""
    sibling = snapshot(root.parent / "ws-evil")
    return {**snapshot(root), **{f"../{k}": v for k, v in sibling.items()}}


async def every_file_tool(c: ToolContext, path: str) -> list:
    """Read, Write, Edit, Glob and Grep, each given `path`."""
    return [
        await run(read_file, ReadRequest(ctx=c, input=ReadInput(file_path=path))),
        await run(write_file, WriteRequest(ctx=c, input=WriteInput(file_path=path, content="x"))),
        await run(
            edit_file,
            EditRequest(ctx=c, input=EditInput(file_path=path, old_string="a", new_string="b")),
        ),
        await run(glob_files, GlobRequest(ctx=c, input=GlobInput(pattern="*", path=path))),
        await run(grep_files, GrepRequest(ctx=c, input=GrepInput(pattern="SECRET", path=path))),
    ]


ODD_PATHS = [
    "bad\x00name.txt",
    "../ws-evil/secret.txt",
    "{sibling}/secret.txt",
    "~/../../etc/hosts",
]


@pytest.mark.parametrize("path", ODD_PATHS)
async def test_odd_paths_are_refused_as_tool_errors(ws: Path, path: str) -> None:
    path = path.format(sibling=ws.parent / "ws-evil")
    before = everything(ws)
    c = ctx(ws)
    outs = await every_file_tool(c, path)
    for out in outs:
        assert out.is_error, out
        assert "SIBLING-SECRET" not in out.content
    assert everything(ws) == before


@pytest.mark.parametrize("path", ["loop", "loop/x.txt", "a", "a/b/c", "long" * 80])
async def test_a_symlink_loop_or_an_overlong_name_is_a_tool_error(ws: Path, path: str) -> None:
    # Python 3.11 resolves a looping link with RuntimeError, which no tool caught: every call
    # on such a path failed its activity, retried, and told the model nothing it could fix.
    (ws / "loop").symlink_to("loop")
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    before = everything(ws)
    c = ctx(ws)
    outs = await every_file_tool(c, path)
    for out in outs:
        assert out.is_error, out
        assert path[:40] in out.content, out
    if "/" in path or path == "loop":
        assert all("cannot be resolved" in o.content for o in outs), outs
    assert everything(ws) == before


async def test_a_shell_whose_directory_became_a_loop_starts_at_the_root(ws: Path) -> None:
    (ws / "loop").symlink_to("loop")
    c = ctx(ws).model_copy(update={"cwd": str(ws / "loop")})
    out = await run(run_bash, BashRequest(ctx=c, input=BashInput(command="pwd")))
    assert not out.is_error, out
    assert out.content == f"{ws}\nShell cwd was reset to {ws}"


@pytest.mark.parametrize(
    "model, field",
    [(GrepInput, "pattern"), (GlobInput, "pattern"), (BashInput, "command")],
)
def test_a_nul_byte_in_a_pattern_or_command_is_an_input_error(model, field) -> None:
    # The workflow validates every tool call with these models: the model gets an is_error
    # result naming the field, and no process is started (a NUL crashed the spawn before).
    with pytest.raises(ValidationError, match="NUL byte"):
        model(**{field: "a\x00b"})


@pytest.mark.parametrize(
    "target",
    [
        ".git/hooks/pre-commit",
        ".git/config",
        "sub/../.git/HEAD",
        ".GIT/hooks/pre-commit",  # the same directory on a case-insensitive disk
        "vendor/lib/.git/hooks/pre-commit",  # a submodule's
        "wt/.git",  # a worktree's `.git` file: repointed, it steers the worker's git calls
    ],
)
async def test_writer_tools_never_write_git_metadata(ws: Path, target: str) -> None:
    (ws / "vendor/lib/.git/hooks").mkdir(parents=True)
    (ws / "vendor/lib/.git/hooks/pre-commit").write_text("[ok]\n")
    (ws / "wt").mkdir()
    (ws / "wt/.git").write_text("gitdir: [elsewhere]\n")
    before = everything(ws)
    c = ctx(ws)
    wrote = await run(
        write_file, WriteRequest(ctx=c, input=WriteInput(file_path=target, content="#!/bin/sh\n"))
    )
    edited = await run(
        edit_file,
        EditRequest(ctx=c, input=EditInput(file_path=target, old_string="[", new_string="#[")),
    )
    assert wrote.is_error and edited.is_error
    assert "git's own metadata" in wrote.content and "git's own metadata" in edited.content
    assert everything(ws) == before


WRITES = [
    "echo x > new.txt",
    "echo x >> inside.txt",
    "sed -i s/a/b/ inside.txt",
    "echo x | tee new.txt",
    "python3 -c \"open('new.txt', 'w').write('x')\"",
    "bash -c 'echo x > new.txt'",
    "sh -c 'echo x > new.txt'",
    "find . -name inside.txt -exec sh -c 'echo x > {}' \\;",
    "cp inside.txt copy.txt",
    "mv inside.txt moved.txt",
    "rm inside.txt",
    "touch new.txt",
    "mkdir newdir",
    "ln -s inside.txt link.txt",
    "chmod 777 inside.txt",
    "dd if=/dev/zero of=new.txt count=1",
    "git add inside.txt && git -c user.name=x -c user.email=x@x commit -qm x",
    "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
    "git config user.name evil",
    "echo x > ../ws-evil/secret.txt",
]


@pytest.mark.parametrize("command", WRITES)
async def test_the_read_only_shell_refuses_every_write(ws: Path, command: str) -> None:
    # The sandbox runs at all (else every refusal below would pass for the wrong reason).
    read = await run(
        run_bash,
        BashRequest(ctx=ctx(ws, sandbox="read_only"), input=BashInput(command="cat inside.txt")),
    )
    assert not read.is_error and read.content == "a line", read.content
    before = everything(ws)
    out = await run(
        run_bash, BashRequest(ctx=ctx(ws, sandbox="read_only"), input=BashInput(command=command))
    )
    # `find -exec` exits 0 when the command it runs fails: the refusal shows in the output.
    assert out.is_error or "Read-only file system" in out.content, out.content
    assert everything(ws) == before


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections that reach it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    async def reached(self, count: int, within: float = 2.0) -> bool:
        """Whether `count` connections were accepted: the thread counts one a moment after
        the client's connect returns."""
        deadline = time.monotonic() + within
        while self.accepted < count and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.accepted == count

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


def network_attempts(port: int) -> list[str]:
    connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    return [
        f"curl -s --max-time 2 http://127.0.0.1:{port}/",
        # python3 from PATH, not sys.executable: a sandbox hides a venv under the host's /tmp
        # (a CI checkout there), and the attempt would then fail for the wrong reason.
        f"python3 -c {shlex.quote(connect)}",
        f"bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'",
    ]


@pytest.mark.parametrize("sandbox", ["read_only", "copy"])
async def test_sandboxed_shells_reach_no_network(ws: Path, sandbox: str) -> None:
    listener = Listener()
    try:
        control = await run(
            run_bash,
            BashRequest(ctx=ctx(ws), input=BashInput(command=network_attempts(listener.port)[2])),
        )
        assert not control.is_error and await listener.reached(1)  # reachable unsandboxed
        works = await run(
            run_bash, BashRequest(ctx=ctx(ws, sandbox=sandbox), input=BashInput(command="echo ok"))
        )
        assert not works.is_error and works.content == "ok"  # the sandbox itself runs
        for command in network_attempts(listener.port):
            out = await run(
                run_bash,
                BashRequest(ctx=ctx(ws, sandbox=sandbox), input=BashInput(command=command)),
            )
            assert out.is_error, (command, out.content)
    finally:
        listener.close()
    assert listener.accepted == 1, "a sandboxed shell reached the listener"


async def test_links_to_outside_and_to_home_expose_and_change_nothing(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row 13: Glob and Grep do not walk a link out of the workspace, and Read, Write and
    Edit through a link to $HOME (the process's own, here a temporary one) are refused."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("HOME-CANARY\n")
    monkeypatch.setenv("HOME", str(home))
    (ws / "home").symlink_to(Path.home())
    (ws / "etc").symlink_to("/etc")
    before = {**everything(ws), **snapshot(home)}
    c = ctx(ws)
    listed = [
        await run(glob_files, GlobRequest(ctx=c, input=GlobInput(pattern=pattern)))
        for pattern in ("**/*", "home/*", "home/.*", "etc/*", "*/passwd")
    ]
    grep = await run(
        grep_files,
        GrepRequest(ctx=c, input=GrepInput(pattern="CANARY|root:", output_mode="content")),
    )
    read = await run(read_file, ReadRequest(ctx=c, input=ReadInput(file_path="home/.bashrc")))
    write = await run(
        write_file, WriteRequest(ctx=c, input=WriteInput(file_path="home/.bashrc", content="x"))
    )
    edit = await run(
        edit_file,
        EditRequest(
            ctx=c, input=EditInput(file_path="home/.bashrc", old_string="HOME", new_string="X")
        ),
    )
    for out in (*listed, grep):
        assert ".bashrc" not in out.content and "passwd" not in out.content, out.content
        assert "HOME-CANARY" not in out.content and "root:" not in out.content
    assert read.is_error and write.is_error and edit.is_error
    assert "HOME-CANARY" not in read.content
    assert {**everything(ws), **snapshot(home)} == before


async def test_tilde_is_a_name_inside_and_home_is_untouched(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Row 12: `~` is not expanded by the file tools (it names a directory in the workspace),
    and a writer's shell, which does expand it, cannot write $HOME."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("HOME-CANARY\n")
    monkeypatch.setenv("HOME", str(home))
    before = snapshot(home)
    c = ctx(ws)
    wrote = await run(
        write_file, WriteRequest(ctx=c, input=WriteInput(file_path="~/.bashrc", content="x\n"))
    )
    read = await run(read_file, ReadRequest(ctx=c, input=ReadInput(file_path="~/.bashrc")))
    shell = await run(run_bash, BashRequest(ctx=c, input=BashInput(command="echo x >> ~/.bashrc")))
    assert not wrote.is_error and (ws / "~" / ".bashrc").read_text() == "x\n"
    assert "HOME-CANARY" not in read.content
    # Read-only, or (a $HOME under /tmp, as here) not even visible in the sandbox.
    assert shell.is_error, shell.content
    assert snapshot(home) == before


@pytest.mark.parametrize("command", [c.replace("../ws-evil/", "../original/") for c in WRITES])
async def test_the_copy_sandbox_writes_its_copy_and_nothing_else(
    ws: Path, tmp_path: Path, command: str
) -> None:
    """Row 15, the verifier's `copy` sandbox: its workspace (a disposable copy) is writable,
    the original checkout next to it is not, whatever the command aims at."""
    original = tmp_path / "original"
    original.mkdir()
    (original / "inside.txt").write_text("a line\n")
    (original / "secret.txt").write_text("ORIGINAL\n")
    before = snapshot(original)
    copy = ctx(ws, sandbox="copy")
    made = await run(
        run_bash, BashRequest(ctx=copy, input=BashInput(command="echo ok > made.txt && echo ok"))
    )
    assert (made.is_error, made.content) == (False, "ok")
    for aimed in (command, f"cd {original} && {command}"):
        await run(run_bash, BashRequest(ctx=copy, input=BashInput(command=aimed)))
    assert snapshot(original) == before


async def test_the_verifier_keeps_its_tmp_between_calls_and_a_reader_does_not(
    ws: Path, tmp_path: Path
) -> None:
    """R81: the verifier (`copy` sandbox) may write a test script to /tmp and run it in its
    next call; it had a fresh, empty /tmp every call. A read-only agent still gets a fresh
    one each call, and neither /tmp is the host's."""
    probe = f"probe-{tmp_path.name}.sh"
    for sandbox, kept in (("copy", True), ("read_only", False)):
        first = await run(
            run_bash,
            BashRequest(
                ctx=ctx(ws, sandbox=sandbox),
                input=BashInput(command=f"echo 'echo PROBE-RAN' > /tmp/{probe}; echo written"),
            ),
        )
        assert first.content.endswith("written"), first.content
        second = await run(
            run_bash,
            BashRequest(ctx=ctx(ws, sandbox=sandbox), input=BashInput(command=f"sh /tmp/{probe}")),
        )
        assert ("PROBE-RAN" in second.content) is kept, (sandbox, second.content)
    assert not (Path("/tmp") / probe).exists()
