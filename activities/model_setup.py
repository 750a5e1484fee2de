"""The part of a model request that is the same on every call of an agent, by reference.

The model, `max_tokens`, the prompt's and the tool list's blobs and the caller's tag were in
every `llm.call_model` input, ~230 bytes of history a turn that said nothing new (issue 9).
An agent's first call carries them; the activity stores them as one blob and answers with its
name (`ModelResponse.setup_ref`), which the agent's later calls send instead
(`ModelRequest.setup_ref`). The first call's input in the Web UI shows them, and every call's
summary names the model.
"""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from activities.store import BlobStore, default_store
from agents.canonical import blob_ref, canonical_bytes


class AgentTag(BaseModel):
    """Who is calling; sent as `x-outlast-agent-*` headers so a scripted model can tell agents
    apart, and used for nothing else."""

    model_config = ConfigDict(frozen=True)

    agent_id: str = ""
    agent_type: str = ""
    name: str = Field(default="", exclude_if=lambda v: not v)
    """Left out of the payload when empty (an unnamed agent), as in `ModelRequest`."""


class ModelSetup(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    max_tokens: int
    system_ref: str
    tools_ref: str | None = None
    thinking_budget: int | None = Field(default=None, exclude_if=lambda v: v is None)
    agent: AgentTag = AgentTag()


SETUP_FIELDS = tuple(ModelSetup.model_fields)


def setup_bytes(setup: ModelSetup) -> bytes:
    return canonical_bytes(setup.model_dump(mode="json"))


def setup_ref_of(setup: ModelSetup) -> str:
    """The name the activity stores `setup` under; pure, so the workflow can tell whether the
    name it was answered with is still its setup's (a later change sends it inline again)."""
    return blob_ref(setup_bytes(setup))


def store_setup(setup: ModelSetup, store: BlobStore) -> str:
    return store.put(setup_bytes(setup))


@functools.lru_cache(maxsize=256)
def load_setup(ref: str) -> ModelSetup:
    """A stored setup; blobs never change, so caching is safe (every call of an agent names
    the same one)."""
    return ModelSetup.model_validate_json(default_store().get(ref))
