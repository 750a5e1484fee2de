"""A team's members' agent types are checked before any member starts (R13's sentence):
started from a raw client with a lead of a type no definition has, the lead failed at its
start, its teammates started and ran all the same, and the team ended "the lead failed"
(a user test of the API, 2026-12-07)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from tests.conftest import make_git_repo
from tests.support import fast_config, running_workers, scripted_model
from tests.workflows.test_team import start_team
from workflows.pattern_contracts import TeammateSpec

TEAM_SCRIPT = {"agents": [{"name": "any", "turns": [{"text": "ran"}]}]}


async def refuse_an_unknown_member_type(
    client: Client, repo, wf_id: str | None = None
) -> tuple[WorkflowHandle, WorkflowFailureError | None, list]:
    """The trio team with lead `a` of type 'Exlpore' and teammate `c` of type 'verification'
    (a built-in its config's flag leaves off): its end, and the model's requests."""
    with scripted_model(TEAM_SCRIPT) as model:
        async with running_workers(client) as queues:
            handle = await start_team(
                client,
                queues,
                repo,
                wf_id,
                lead=TeammateSpec(name="a", prompt="Lead.", agent_type="Exlpore"),
                teammates=[
                    TeammateSpec(name="b", prompt="Help."),
                    TeammateSpec(name="c", prompt="Check.", agent_type="verification"),
                ],
                config=fast_config(),
            )
            try:
                await asyncio.wait_for(handle.result(), 120)
                ended = None  # as the code before this check had it
            except WorkflowFailureError as e:
                ended = e
    return handle, ended, model.log


async def test_a_team_with_a_member_of_an_unknown_type_is_refused_before_any_starts(
    client: Client, tmp_path
):
    repo = make_git_repo(tmp_path / "repo", {"src/app.py": "def greet():\n    return 'hello'\n"})
    handle, error, log = await refuse_an_unknown_member_type(
        client, repo, f"team-{uuid.uuid4().hex[:8]}"
    )
    assert error is not None, "the team ran"
    said = error.cause.message
    assert said.startswith(
        "TeamWorkflow refused: agent type 'Exlpore' (member a; did you mean 'Explore'?) not "
        "found; nor 'verification' (member c; 'verification' is there only with "
        "features.verification_agent). Available agents: "
    ), said
    assert "general-purpose" in said and "late_agent_types" not in said, said
    assert getattr(error.cause, "type", None) == "AgentTypeNotFound", error.cause
    assert log == []  # no member called the model
    for name in ("a", "b", "c"):
        with pytest.raises(RPCError):  # nor started
            await client.get_workflow_handle(f"{handle.id}/{name}").describe()
