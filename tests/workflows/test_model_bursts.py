"""Model server failures end to end (reliability row 6): 500s and a slow answer are retried
per the policy; a burst longer than the policy, and a 401, end the agent with a typed failure
after exactly the attempts the policy allows."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowFailureError

from agents.config import ModelSettings, OutlastConfig
from tests.support import activity_attempts, agent_input, running_workers, scripted_model, start

pytestmark = pytest.mark.reliability


def one_turn(**turn) -> dict:
    return {"agents": [{"name": "main", "turns": [turn]}]}


def config(**model) -> OutlastConfig:
    settings = {"heartbeat_timeout_s": 10, "max_attempts": 3, **model}
    return OutlastConfig(model=ModelSettings(**settings))


async def model_attempts(handle) -> list[int]:
    return [a for name, a in await activity_attempts(handle) if name == "llm.call_model"]


async def test_500s_then_an_answer_complete_on_the_third_attempt(client, git_repo):
    with scripted_model(one_turn(fail=[500, 500], text="ok")) as model:
        async with running_workers(client) as queues:
            inp = agent_input("hi", git_repo, queues, config=config())
            handle = await start(client, inp, queues)
            result = await handle.result()
    assert result.final_text == "ok"
    assert [r["status"] for r in model.log] == [500, 500, 200]
    assert await model_attempts(handle) == [3]


async def test_answers_slower_than_the_call_timeout_are_retried_then_fail_typed(client, git_repo):
    script = {"agents": [{"name": "main", "turns": [{"delay_ms": 4000, "text": "late"}]}]}
    script["agents"][0]["after_last"] = "repeat_last"
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            inp = agent_input("hi", git_repo, queues, config=config(call_timeout_s=2))
            handle = await start(client, inp, queues)
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
    # Every attempt ran into the 2 s call timeout; the policy allowed three.
    assert await model_attempts(handle) == [] and len(model.log) == 3
    cause = failed.value.cause
    assert cause.type == "ModelCallFailed" and "timed out" in cause.message, cause.message


async def test_a_burst_longer_than_the_policy_fails_typed_after_exactly_its_attempts(
    client, git_repo
):
    with scripted_model(one_turn(fail=[529, 529, 529, 529], text="never")) as model:
        async with running_workers(client) as queues:
            inp = agent_input("hi", git_repo, queues, config=config())
            handle = await start(client, inp, queues)
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
    assert [r["status"] for r in model.log] == [529, 529, 529]
    cause = failed.value.cause
    assert cause.non_retryable and cause.type == "ModelUnavailable", (cause.type, cause.message)
    assert "529" in cause.message


async def test_401_fails_after_one_attempt_with_a_typed_error(client, git_repo):
    error = {"status": 401, "type": "authentication_error", "message": "invalid x-api-key"}
    with scripted_model(one_turn(error=error)) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("hi", git_repo, queues), queues)
            with pytest.raises(WorkflowFailureError) as failed:
                await handle.result()
    assert len(model.log) == 1
    assert failed.value.cause.type == "ModelRequestRejected"
    assert "401" in failed.value.cause.message
