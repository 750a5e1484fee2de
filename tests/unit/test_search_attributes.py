"""Which search attributes a parent starts a child agent with (`for_child`)."""

from __future__ import annotations

from agents.config import OutlastConfig
from workflows import search_attributes as sa
from workflows.contracts import AgentInput, Lineage, Workspace


def child(**lineage) -> AgentInput:
    return AgentInput(
        prompt="p",
        workspace=Workspace(root="/r", host_queue="h"),
        agent_type="worker",
        lineage=Lineage(**lineage),
    )


FULL = {"agent_id": "a1", "chain_id": "c1", "session_id": "s1", "depth": 1, "pattern": "single"}


def test_a_child_with_its_whole_lineage_starts_with_its_attributes():
    attrs = sa.for_child(child(**FULL))
    assert attrs is not None
    assert attrs.get(sa.AGENT_ID) == "a1" and attrs.get(sa.AGENT_TYPE) == "worker"
    assert attrs.get(sa.SESSION_ID) == "s1" and attrs.get(sa.AGENT_DEPTH) == 1
    assert attrs == sa.for_agent(child(**FULL))  # what the child would upsert itself


def test_none_where_the_child_draws_its_own_ids_or_none_are_recorded():
    for missing in ("agent_id", "chain_id", "session_id"):
        assert sa.for_child(child(**{**FULL, missing: ""})) is None, missing
    off = child(**FULL).model_copy(update={"config": OutlastConfig(search_attributes=False)})
    assert sa.for_child(off) is None
