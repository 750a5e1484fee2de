"""The blob store on disk: a blob is what its name says, or it is refused and written again."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from activities import transcripts
from activities.errors import StoreCorrupt, StoreMissing
from activities.store import LocalBlobStore
from activities.workspace import file_digest, is_digest_of
from agents.canonical import REF_HEX_DIGITS, names
from agents.messages import Message
from agents.transcript import TranscriptRef


def blob_path(store: LocalBlobStore, ref: str) -> Path:
    return store.root / ref[:2] / ref[2:]


def test_a_blob_reads_back_as_written_and_leaves_no_temporary_file(tmp_path):
    store = LocalBlobStore(tmp_path)
    ref = store.put(b"the conversation so far")
    assert store.get(ref) == b"the conversation so far"
    assert store.put(b"the conversation so far") == ref
    assert [p.name for p in blob_path(store, ref).parent.iterdir()] == [ref[2:]]


def test_a_torn_blob_is_refused_as_damaged_not_read_as_something_else(tmp_path):
    # A machine that goes down as a blob is written can leave its name with no bytes, or
    # some: reading it must not hand a parser half a conversation (a JSONDecodeError the
    # model call retried for six hours).
    store = LocalBlobStore(tmp_path)
    ref = store.put(b'{"prev": null, "messages": []}')
    blob_path(store, ref).write_bytes(b'{"prev": nu')
    with pytest.raises(StoreCorrupt) as raised:
        store.get(ref)
    assert raised.value.non_retryable
    assert "damaged" in str(raised.value) and str(blob_path(store, ref)) in str(raised.value)
    assert isinstance(raised.value, StoreMissing)  # what catches a missing blob catches this


def test_putting_the_content_again_mends_a_torn_blob(tmp_path):
    # A retried activity writes the same content: it must not skip the damaged file because
    # a file of that name exists.
    store = LocalBlobStore(tmp_path)
    ref = store.put(b"a tool's output")
    blob_path(store, ref).write_bytes(b"")
    assert store.put(b"a tool's output") == ref
    assert store.get(ref) == b"a tool's output"


def test_a_transcript_with_a_torn_node_says_which_blob(tmp_path):
    store = LocalBlobStore(tmp_path)
    first = transcripts.append(store, TranscriptRef(), [Message.user_text("do the task")])
    second = transcripts.append(store, first, [Message.user_text("and then this")])
    blob_path(store, first.head).write_bytes(b"")
    transcripts._cache.clear()
    with pytest.raises(StoreCorrupt, match=first.head):
        transcripts.load(store, second)


def test_a_missing_blob_names_the_store(tmp_path):
    store = LocalBlobStore(tmp_path)
    with pytest.raises(StoreMissing, match="OUTLAST_STORE_DIR"):
        store.get("0" * 64)


def test_a_name_is_half_the_digest_and_a_full_digest_of_an_older_history_still_reads(tmp_path):
    store = LocalBlobStore(tmp_path)
    ref = store.put(b"a tool's output")
    full = hashlib.sha256(b"a tool's output").hexdigest()
    assert ref == full[:REF_HEX_DIGITS] == full[:32]
    # What a release before 2026-12-07 wrote: the file named by the whole digest.
    older = blob_path(store, full)
    older.parent.mkdir(parents=True, exist_ok=True)
    older.write_bytes(b"an older output")
    with pytest.raises(StoreCorrupt):
        store.get(full)
    older.write_bytes(b"a tool's output")
    assert store.get(full) == b"a tool's output"
    with pytest.raises(StoreMissing, match="Not a blob reference"):
        store.get(full[:40])


def test_a_short_name_reads_a_blob_an_older_release_wrote_under_the_whole_digest(tmp_path):
    # A run that went on across the upgrade names an ended agent's stamps itself, short,
    # where the activity of the release before stored them under the whole digest.
    store = LocalBlobStore(tmp_path)
    full = hashlib.sha256(b"stamps").hexdigest()
    blob_path(store, full).parent.mkdir(parents=True)
    blob_path(store, full).write_bytes(b"stamps")
    assert store.get(full[:REF_HEX_DIGITS]) == b"stamps"
    blob_path(store, full).write_bytes(b"torn")
    with pytest.raises(StoreMissing, match="is not in the store"):
        store.get(full[:REF_HEX_DIGITS])


def test_an_empty_or_cut_name_names_nothing():
    assert names(hashlib.sha256(b"x").hexdigest()[:32], b"x")
    assert not names("", b"x") and not names(hashlib.sha256(b"x").hexdigest()[:8], b"x")
    assert not is_digest_of("", b"x") and is_digest_of(file_digest(b"x"), b"x")
