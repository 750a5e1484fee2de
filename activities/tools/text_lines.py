"""The lines of a text file as Read shows them, with the stamp of the whole file.

UTF-8 is read as bytes, line by line. A file that starts with a UTF-16 or UTF-32 byte order
mark (Windows tools write them: exported CSVs, .reg files, PowerShell output) is decoded by
that mark; without this it was "binary" (its NUL bytes), where Claude Code reads it.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from activities.tools.base import FileStamp
from agents.canonical import REF_HEX_DIGITS

MAX_LINE_CHARS = 2000
BINARY_SNIFF_BYTES = 8192
# UTF-32's little-endian mark starts with UTF-16's: it is looked for first.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def cut_line(line: str) -> str:
    """A line without its line ending, cut to MAX_LINE_CHARS."""
    line = line.removesuffix("\n").removesuffix("\r")
    if len(line) > MAX_LINE_CHARS:
        return line[:MAX_LINE_CHARS] + "... [line truncated]"
    return line


def decode_line(raw: bytes) -> str:
    """One UTF-8 line of the file without its line ending, cut to MAX_LINE_CHARS."""
    return cut_line(raw.decode("utf-8", errors="replace"))


@dataclass(frozen=True)
class FileSlice:
    lines: list[str]
    total_lines: int
    stamp: FileStamp


def marked_encoding(f: BinaryIO) -> str | None:
    """ "utf-16" or "utf-32" if the file starts with that byte order mark, else None."""
    head = f.read(4)
    f.seek(0)
    return next((name for mark, name in _MARKS if head.startswith(mark)), None)


def looks_binary(f: BinaryIO) -> bool:
    """A NUL byte near the start is how git and grep tell binary from text too (a file with
    a UTF-16 or UTF-32 mark is text: its NULs are half its characters)."""
    if marked_encoding(f) is not None:
        return False
    head = f.read(BINARY_SNIFF_BYTES)
    f.seek(0)
    return b"\0" in head


class _Hashing(io.RawIOBase):
    """The file's bytes as read, each also fed to `digest`."""

    def __init__(self, f: BinaryIO, digest: hashlib._Hash) -> None:
        self._f, self._digest = f, digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._f.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n or 0


def _lines(f: BinaryIO, digest: hashlib._Hash) -> Iterator[str]:
    encoding = marked_encoding(f)
    if encoding is None:
        for raw in f:
            digest.update(raw)
            yield raw  # type: ignore[misc]  # decoded only if shown
        return
    # newline="": lines end where the file's do (LF, CRLF or CR), nothing translated.
    text = io.TextIOWrapper(
        io.BufferedReader(_Hashing(f, digest)), encoding=encoding, errors="replace", newline=""
    )
    yield from text


def read_slice(f: BinaryIO, start: int, count: int) -> FileSlice:
    """Lines `start` (0-based) to `start + count` of the open file and the stamp of all of it.

    One pass: the hash covers every byte, not just the lines shown, because Write and Edit
    compare it against the whole file later.
    """
    digest = hashlib.sha256()
    lines: list[str] = []
    total = 0
    for line in _lines(f, digest):
        if start <= total < start + count:
            lines.append(decode_line(line) if isinstance(line, bytes) else cut_line(line))
        total += 1
    st = os.fstat(f.fileno())
    stamp = FileStamp(
        sha256=digest.hexdigest()[:REF_HEX_DIGITS], mtime_ns=st.st_mtime_ns, size=st.st_size
    )
    return FileSlice(lines=lines, total_lines=total, stamp=stamp)
