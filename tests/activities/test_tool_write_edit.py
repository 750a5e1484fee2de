"""Write and Edit on real files (spec T2, T3): read-before-write, exact messages, retries."""

from __future__ import annotations

import codecs
import dataclasses
import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.base import FileStamp, ToolContext, ToolOutput
from activities.tools.edit import EditInput, EditRequest, edit_file
from activities.tools.read import ReadInput, ReadRequest, read_file
from activities.tools.write import (
    CRLF_KEPT,
    MODIFIED,
    NOT_READ,
    WriteInput,
    WriteRequest,
    write_file,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def ctx(root: Path, stamp: FileStamp | None = None) -> ToolContext:
    return ToolContext(workspace_root=str(root), cwd=str(root), read_stamp=stamp)


async def read_stamp(root: Path, path: Path) -> FileStamp:
    req = ReadRequest(ctx=ctx(root), input=ReadInput(file_path=str(path)))
    out = await ActivityEnvironment().run(read_file, req)
    return out.stamps[str(path)]


async def write(root: Path, path: Path, content: str, stamp: FileStamp | None) -> ToolOutput:
    req = WriteRequest(ctx=ctx(root, stamp), input=WriteInput(file_path=str(path), content=content))
    return await ActivityEnvironment().run(write_file, req)


async def edit(root: Path, path: Path, stamp: FileStamp | None, **kw: object) -> ToolOutput:
    req = EditRequest(ctx=ctx(root, stamp), input=EditInput(file_path=str(path), **kw))
    return await ActivityEnvironment().run(edit_file, req)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:32]


# --- Write -----------------------------------------------------------------------------------


async def test_write_creates_file_and_parent_dirs(ws: Path) -> None:
    path = ws / "new" / "deep" / "file.txt"
    out = await write(ws, path, "hello\n", None)
    assert not out.is_error
    assert out.content == f"File created successfully at: {path}"
    assert path.read_text() == "hello\n"
    assert out.stamps[str(path)].sha256 == sha(path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0o600
    assert [p.name for p in path.parent.iterdir()] == ["file.txt"]  # no temp file left


async def test_write_to_existing_unread_file_is_refused(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("original\n")
    out = await write(ws, path, "replaced\n", None)
    assert out.is_error
    assert out.content == NOT_READ
    assert path.read_text() == "original\n"


async def test_write_after_read_succeeds_with_new_stamp(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    path.chmod(0o755)
    stamp = await read_stamp(ws, path)
    out = await write(ws, path, "one\nTWO\nthree\n", stamp)
    assert not out.is_error
    assert out.content.startswith(f"The file {path} has been updated. Here's the result of")
    assert "     2\tTWO" in out.content
    assert path.read_text() == "one\nTWO\nthree\n"
    assert out.stamps[str(path)].sha256 == sha(path) != stamp.sha256
    assert path.stat().st_mode & 0o777 == 0o755


async def test_write_after_file_changed_since_read_is_refused(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("v1\n")
    stamp = await read_stamp(ws, path)
    path.write_text("v2 by the user\n")
    out = await write(ws, path, "v3\n", stamp)
    assert out.is_error
    assert out.content == MODIFIED
    assert path.read_text() == "v2 by the user\n"


async def test_write_retried_after_it_already_wrote_succeeds(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("before\n")
    stamp = await read_stamp(ws, path)
    first = await write(ws, path, "after\n", stamp)
    retry = await write(ws, path, "after\n", stamp)  # same input: the stale stamp again
    assert not first.is_error and not retry.is_error
    assert retry.stamps[str(path)].sha256 == first.stamps[str(path)].sha256 == sha(path)
    assert path.read_text() == "after\n"


async def test_a_stamp_of_the_whole_digest_from_an_older_history_still_counts(ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("one\n")
    stamp = await read_stamp(ws, path)
    older = stamp.model_copy(update={"sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    assert len(stamp.sha256) == 32 and len(older.sha256) == 64
    out = await edit(ws, path, older, old_string="one", new_string="two")
    assert not out.is_error and path.read_text() == "two\n"
    out = await write(ws, path, "three\n", older)  # the file changed since that stamp
    assert out.is_error and out.content == MODIFIED


async def test_write_to_a_directory_is_an_error(ws: Path) -> None:
    (ws / "d").mkdir()
    out = await write(ws, ws / "d", "x", None)
    assert out.is_error and "directory" in out.content


async def test_write_below_a_file_is_an_error_not_a_crash(ws: Path) -> None:
    (ws / "a.txt").write_text("x")
    out = await write(ws, ws / "a.txt" / "b.txt", "y", None)
    assert out.is_error
    assert out.content.startswith(f"Cannot write {ws / 'a.txt' / 'b.txt'}:")


# --- Edit ------------------------------------------------------------------------------------


async def test_edit_non_unique_gives_exact_message(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("alpha = 1\nalpha = 2\n")
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="alpha", new_string="beta")
    assert out.is_error
    assert out.content == (
        "Found 2 matches of the string to replace, but replace_all is false. To replace all "
        "occurrences, set replace_all to true. To replace only one occurrence, please provide "
        "more context to uniquely identify the instance.\nString: alpha"
    )
    assert path.read_text() == "alpha = 1\nalpha = 2\n"


async def test_edit_replace_all(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("alpha = 1\nalpha = 2\n")
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="alpha", new_string="beta", replace_all=True)
    assert not out.is_error
    assert path.read_text() == "beta = 1\nbeta = 2\n"
    assert out.stamps[str(path)].sha256 == sha(path)


async def test_edit_unique_match_and_snippet(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("".join(f"line{i}\n" for i in range(1, 21)))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="line10\n", new_string="ten\nTEN\n")
    assert not out.is_error
    assert out.content.startswith(f"The file {path} has been updated. Here's the result of")
    snippet = out.content.split("\n")[1:]
    assert snippet[0] == "     6\tline6"
    assert "    10\tten" in snippet and "    11\tTEN" in snippet
    assert snippet[-1] == "    15\tline14"


async def test_edit_not_found(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("alpha\n")
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="gamma", new_string="delta")
    assert out.is_error
    assert out.content == "String to replace not found in file.\nString: gamma"


async def test_edit_same_strings(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("alpha\n")
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="alpha", new_string="alpha")
    assert out.is_error
    assert out.content == "No changes to make: old_string and new_string are exactly the same."


async def test_edit_matches_curly_quotes_and_keeps_them(ws: Path) -> None:
    path = ws / "quote.txt"
    path.write_text("She said \u201chello\u201d and left.\n")
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string='said "hello"', new_string='said "goodbye"')
    assert not out.is_error, out.content
    assert path.read_text() == "She said \u201cgoodbye\u201d and left.\n"


async def test_edit_unread_or_changed_file_is_refused(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("alpha\n")
    unread = await edit(ws, path, None, old_string="alpha", new_string="beta")
    assert unread.is_error and unread.content == NOT_READ
    stamp = await read_stamp(ws, path)
    path.write_text("alpha changed\n")
    changed = await edit(ws, path, stamp, old_string="alpha", new_string="beta")
    assert changed.is_error and changed.content == MODIFIED
    assert path.read_text() == "alpha changed\n"


async def test_edit_already_applied_by_an_earlier_attempt_succeeds(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\ny = 2\n")
    stamp = await read_stamp(ws, path)
    first = await edit(ws, path, stamp, old_string="y = 2", new_string="y = 3")
    retry = await edit(ws, path, stamp, old_string="y = 2", new_string="y = 3")
    assert not first.is_error and not retry.is_error, retry.content
    assert path.read_text() == "x = 1\ny = 3\n"
    assert retry.stamps[str(path)] == first.stamps[str(path)]


async def test_edit_replace_all_already_applied_succeeds(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("a a b a\n")
    stamp = await read_stamp(ws, path)
    first = await edit(ws, path, stamp, old_string="a", new_string="c", replace_all=True)
    retry = await edit(ws, path, stamp, old_string="a", new_string="c", replace_all=True)
    assert not first.is_error and not retry.is_error
    assert path.read_text() == "c c b c\n"


async def test_edit_retry_does_not_mask_a_different_change(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("x = 1\ny = 2\n")
    stamp = await read_stamp(ws, path)
    await edit(ws, path, stamp, old_string="y = 2", new_string="y = 3")
    path.write_text("x = 100\ny = 3\n")  # someone else changed another line too
    retry = await edit(ws, path, stamp, old_string="y = 2", new_string="y = 3")
    assert retry.is_error and retry.content == MODIFIED


async def test_edit_with_empty_old_string_creates_a_file(ws: Path) -> None:
    path = ws / "pkg" / "new.py"
    out = await edit(ws, path, None, old_string="", new_string="print('hi')\n")
    assert not out.is_error
    assert path.read_text() == "print('hi')\n"
    assert out.stamps[str(path)].sha256 == sha(path)
    retry = await edit(ws, path, None, old_string="", new_string="print('hi')\n")
    assert not retry.is_error
    other = await edit(ws, path, None, old_string="", new_string="different\n")
    assert other.is_error and "already exists" in other.content


def attempts(n: int, activity_id: str = "edit-1") -> ActivityEnvironment:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, activity_id=activity_id, attempt=n)
    return env


@pytest.mark.parametrize(
    ("before", "fields", "after"),
    [
        # Curly quotes matched and kept: the new text on disk is not new_string.
        ("say \u201chello\u201d\n", {"old_string": '"hello"', "new_string": '"bye"'},
         "say \u201cbye\u201d\n"),
        # The new text was in the file before: undoing a replace_all cannot tell which.
        ("x = foo\ny = bar\n", {"old_string": "foo", "new_string": "bar", "replace_all": True},
         "x = bar\ny = bar\n"),
        # A deletion leaves nothing to undo.
        ("keep\ndrop me\nkeep\n", {"old_string": "drop me\n", "new_string": ""},
         "keep\nkeep\n"),
        # A creation with CRLF in the new text.
        (None, {"old_string": "", "new_string": "a\r\nb\r\n"}, "a\r\nb\r\n"),
    ],
)  # fmt: skip
async def test_an_edit_retried_after_it_wrote_answers_as_it_did(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before, fields, after
) -> None:
    """The worker died after the write, before reporting: the retry (attempt 2 of the same
    activity) finds its write noted on the host and gives the first attempt's answer. Each
    case here got an error from the undo check alone."""
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    path = ws / "f.txt"
    stamp = None
    if before is not None:
        path.write_bytes(before.encode())
        stamp = await read_stamp(ws, path)
    req = EditRequest(ctx=ctx(ws, stamp), input=EditInput(file_path=str(path), **fields))
    first = await attempts(1).run(edit_file, req)
    retry = await attempts(2).run(edit_file, req)
    assert not first.is_error, first.content
    assert path.read_bytes() == after.encode()
    assert retry == first
    # Another activity with the same input is a new edit, not a retry of this one.
    again = await attempts(2, activity_id="edit-2").run(edit_file, req)
    assert again.is_error


async def test_a_write_retried_after_it_created_says_created(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    path = ws / "new.txt"
    req = WriteRequest(ctx=ctx(ws), input=WriteInput(file_path=str(path), content="hi\n"))
    first = await attempts(1).run(write_file, req)
    retry = await attempts(2).run(write_file, req)
    assert retry == first and first.content == f"File created successfully at: {path}"


async def test_a_retry_after_another_change_is_no_retry(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OUTLAST_HOME", str(tmp_path / "state"))
    path = ws / "a.py"
    path.write_text("x = 1\ny = 2\n")
    stamp = await read_stamp(ws, path)
    req = EditRequest(
        ctx=ctx(ws, stamp),
        input=EditInput(file_path=str(path), old_string="y = 2", new_string="y = 3"),
    )
    await attempts(1).run(edit_file, req)
    path.write_text("x = 100\ny = 3\n")  # changed after the first attempt wrote
    retry = await attempts(2).run(edit_file, req)
    assert retry.is_error and retry.content == MODIFIED


async def test_edit_missing_file(ws: Path) -> None:
    out = await edit(ws, ws / "nope.py", None, old_string="a", new_string="b")
    assert out.is_error and out.content.startswith("File does not exist.")


async def edited(ws: Path, path: Path, old: str, new: str) -> bytes:
    """The file's bytes after an Edit of what was just read; the edit must succeed."""
    out = await edit(ws, path, await read_stamp(ws, path), old_string=old, new_string=new)
    assert not out.is_error, out.content
    assert "\r" not in out.content  # the snippet shows lines as Read does
    return path.read_bytes()


async def test_edit_keeps_crlf_line_endings(ws: Path) -> None:
    path = ws / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert await edited(ws, path, "one\ntwo", "1\n2") == b"1\r\n2\r\nthree\r\n"
    # Strings the model wrote with CRLF itself match, and no "\r\r\n" reaches the disk.
    assert await edited(ws, path, "2\r\nthree", "two\r\n3") == b"1\r\ntwo\r\n3\r\n"


async def test_write_over_a_crlf_file_keeps_crlf(ws: Path) -> None:
    """The model writes `\n`: a Windows file came out LF throughout, where Edit kept its CRLF
    (a user test, 2026-12-07). A file of mixed or LF endings, or content with its own CRs,
    is written as given."""
    path = ws / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    out = await write(ws, path, "brand\nnew\n", await read_stamp(ws, path))
    assert not out.is_error and "\r" not in out.content, out.content
    assert out.content.endswith(CRLF_KEPT), out.content
    assert path.read_bytes() == b"brand\r\nnew\r\n"
    mixed = ws / "mixed.txt"
    mixed.write_bytes(b"one\r\ntwo\n")
    await write(ws, mixed, "a\nb\n", await read_stamp(ws, mixed))
    assert mixed.read_bytes() == b"a\nb\n"
    out = await write(ws, path, "x\r\ny\n", await read_stamp(ws, path))
    assert path.read_bytes() == b"x\r\ny\n" and CRLF_KEPT not in out.content


async def test_edit_on_a_file_that_mixes_line_endings(ws: Path) -> None:
    """Mostly CRLF with one LF line: Read shows the lines without their CR, so the model's
    multi-line string (LF) matched nothing; it matches now, and each line keeps its own
    ending (the replacement ends its lines as the text it replaces did)."""
    path = ws / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\nfour\r\n")
    after = await edited(ws, path, "one\ntwo", "1\n2\n2b")
    assert after == b"1\r\n2\r\n2b\r\nthree\nfour\r\n"
    assert await edited(ws, path, "2b\nthree\nfour", "3\n4") == b"1\r\n2\r\n3\n4\r\n"


async def test_edit_of_a_utf_16_file_says_what_it_is(ws: Path) -> None:
    """Read shows a UTF-16 file as text; Edit, which writes UTF-8, says why it will not."""
    path = ws / "win.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "a = 1\n".encode("utf-16-le"))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, old_string="a = 1", new_string="a = 2")
    assert out.is_error and "UTF-16 or UTF-32 text" in out.content, out.content


async def test_a_file_made_after_the_check_is_not_replaced_unread(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process creates the file between Write's look and its write (here: the look
    is made to miss it): the write refuses, as for any file the agent has not read."""
    path = ws / "late.txt"
    path.write_text("theirs\n")
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda p: False if p == path else real_exists(p))
    out = await write(ws, path, "mine\n", None)
    assert out.is_error and out.content == NOT_READ
    created = await edit(ws, path, None, old_string="", new_string="mine\n")
    assert created.is_error and "already exists" in created.content
    assert path.read_text() == "theirs\n"
    assert [p.name for p in ws.iterdir() if p.name.endswith(".tmp")] == []


async def test_creating_a_file_where_the_filesystem_has_no_hard_links(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vfat, exFAT and some network mounts refuse `link`: a create falls back to a look and
    a rename instead of failing every Write of a new file."""
    import errno as errno_

    def no_links(*args, **kwargs):
        raise OSError(errno_.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = ws / "new.txt"
    out = await write(ws, path, "hi\n", None)
    assert not out.is_error, out.content
    assert path.read_text() == "hi\n"
    again = await edit(ws, ws / "other.txt", None, old_string="", new_string="x\n")
    assert not again.is_error and (ws / "other.txt").read_text() == "x\n"
    assert [p.name for p in ws.iterdir() if p.name.endswith(".tmp")] == []
