"""An ended agent's read-file stamps, kept in the blob store for the run that resumes it (R66).

The stamps say which files the agent has seen and as what (R27): its Edits and Writes of
those files need no new Read as long as the file is unchanged. A resumed run continues the
same agent, so it starts with the stamps its previous run ended with, not with none. They go
by reference: a parent keeps one reference per child, not every child's file list.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import TypeAdapter, ValidationError
from temporalio import activity

from activities.errors import StoreMissing
from activities.store import default_store
from activities.tools.base import FileStamp
from agents.canonical import blob_ref, canonical_bytes

_STAMPS = TypeAdapter(dict[str, FileStamp])


def read_state_bytes(stamps: Mapping[str, FileStamp]) -> bytes:
    return canonical_bytes({path: stamp.model_dump(mode="json") for path, stamp in stamps.items()})


def read_state_ref(stamps: Mapping[str, FileStamp]) -> str | None:
    """The blob reference the stamps are stored under (None for none); pure, so a workflow
    can name the blob an activity writes."""
    return blob_ref(read_state_bytes(stamps)) if stamps else None


def store_read_state(stamps: Mapping[str, FileStamp]) -> str | None:
    if not stamps:
        return None
    return default_store().put(read_state_bytes(stamps))


@activity.defn(name="resume.read_state")
async def load_read_state(ref: str) -> dict[str, FileStamp]:
    """The stamps stored under `ref`; none when the blob is gone (a pruned store) or cannot
    be read: the resumed agent then reads files again before editing them, as a new one
    would, where failing would fail the resume over a convenience."""
    try:
        return _STAMPS.validate_json(default_store().get(ref))
    except (StoreMissing, ValidationError, OSError) as e:
        activity.logger.warning("read state %s not loaded (%s); resuming without it", ref, e)
        return {}
