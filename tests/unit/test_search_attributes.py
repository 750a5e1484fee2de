"""What a parent starts a child agent with (`child_start`): its search attributes, and the
input field that tells the child it need not upsert them."""

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
    start, attrs = sa.child_start(child(**FULL))
    assert attrs is not None and start.attributes_at_start
    assert attrs.get(sa.AGENT_ID) == "a1" and attrs.get(sa.AGENT_TYPE) == "worker"
    assert attrs.get(sa.SESSION_ID) == "s1" and attrs.get(sa.AGENT_DEPTH) == 1
    assert attrs == sa.for_agent(child(**FULL))  # what the child would upsert itself
    assert start.model_copy(update={"attributes_at_start": False}) == child(**FULL)


def test_none_where_the_child_draws_its_own_ids_or_none_are_recorded():
    for missing in ("agent_id", "chain_id", "session_id"):
        bare = child(**{**FULL, missing: ""})
        assert sa.child_start(bare) == (bare, None), missing
    off = child(**FULL).model_copy(update={"config": OutlastConfig(search_attributes=False)})
    assert sa.child_start(off) == (off, None)


def test_a_teammate_carries_its_team_s_name():
    from workflows.contracts import TeamLink

    link = TeamLink(workflow_id="t-1", team_name="core", members=["lead", "b"])
    member = child(**FULL).model_copy(update={"team": link})
    assert sa.for_agent(member).get(sa.TEAM_NAME) == "core"
    assert sa.for_agent(child(**FULL)).get(sa.TEAM_NAME) is None


def verdict_of(updates: list) -> str | None:
    found = [u.value for u in updates if u.key == sa.VERIFICATION_VERDICT]
    return found[0] if found else None


def test_a_verifier_s_verdict_is_the_one_its_task_acts_on():
    """`VerificationVerdict="PASS"` listed verifiers whose PASS their task had thrown out
    (no executed check; no tool run at all): a user test, 2026-12-07."""
    ran = "### Check: tests\n**Command run:** pytest\n**Output observed:** 3 passed\n"
    ran += "**Result: PASS**\n\nVERDICT: PASS"
    skipped = "### Check: tests\n**Result: SKIP**\n\nVERDICT: PASS"
    verifier = "verification"
    assert verdict_of(sa.at_end("completed", verifier, ran, tool_uses=2)) == "PASS"
    assert verdict_of(sa.at_end("completed", verifier, ran, tool_uses=0)) == "FAIL"
    assert verdict_of(sa.at_end("completed", verifier, skipped, tool_uses=2)) == "FAIL"
    assert verdict_of(sa.at_end("completed", verifier, "VERDICT: FAIL", tool_uses=2)) == "FAIL"
    # No verdict line, or no verifier: no verdict attribute, as before.
    assert verdict_of(sa.at_end("completed", verifier, "I looked.", tool_uses=2)) is None
    assert verdict_of(sa.at_end("completed", "general-purpose", ran, tool_uses=0)) is None
