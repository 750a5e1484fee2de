"""An ended agent's read stamps in the blob store (R66): the workflow names the blob the
export step writes, and a resume survives a blob that is gone."""

from __future__ import annotations

import asyncio

from activities.read_state import load_read_state, read_state_ref, store_read_state
from activities.store import default_store
from activities.tools.base import FileStamp

STAMPS = {
    "/repo/b.py": FileStamp(sha256="b" * 64, mtime_ns=2, size=20),
    "/repo/a.py": FileStamp(sha256="a" * 64, mtime_ns=1, size=10),
}


def test_the_workflow_names_the_blob_the_activity_stores():
    stored = store_read_state(STAMPS)
    assert stored == read_state_ref(STAMPS) == read_state_ref(dict(reversed(STAMPS.items())))
    assert default_store().get(stored)
    assert asyncio.run(load_read_state(stored)) == STAMPS


def test_no_stamps_store_nothing():
    assert store_read_state({}) is None and read_state_ref({}) is None


def test_a_missing_blob_resumes_without_stamps():
    assert asyncio.run(load_read_state("0" * 64)) == {}


def test_an_unreadable_blob_resumes_without_stamps():
    ref = default_store().put(b"not the stamps")
    assert asyncio.run(load_read_state(ref)) == {}
