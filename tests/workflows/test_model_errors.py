"""Model API failures: transient ones retried by Temporal, rejections fail at once, typed."""

from __future__ import annotations

from datetime import datetime

import pytest
from temporalio.client import WorkflowFailureError

from tests.support import activity_attempts, agent_input, running_workers, scripted_model, start


async def test_529_then_429_then_answer_completes_on_attempt_3(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [{"fail": [529, {"status": 429, "retry_after": 1}], "text": "ok"}],
            }
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("hi", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and result.final_text == "ok"
    calls = [
        attempt for name, attempt in await activity_attempts(handle) if name == "llm.call_model"
    ]
    assert calls == [3]
    assert [r["status"] for r in model.log] == [529, 429, 200]
    # The 429 asked for 1 s: the third attempt must not come sooner.
    t429, t200 = (datetime.fromisoformat(model.log[i]["ts"]) for i in (1, 2))
    assert (t200 - t429).total_seconds() >= 0.9


async def test_400_fails_the_workflow_after_one_attempt_with_a_typed_error(client, git_repo):
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "error": {
                            "status": 400,
                            "type": "invalid_request_error",
                            "message": "prompt is too long",
                        }
                    }
                ],
            }
        ]
    }
    with scripted_model(script) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("hi", git_repo, queues), queues)
            with pytest.raises(WorkflowFailureError) as failure:
                await handle.result()
    cause = failure.value.cause
    assert cause.type == "ModelRequestRejected"
    assert "400" in cause.message and "prompt is too long" in cause.message
    assert cause.details[0]["status"] == 400
    assert cause.details[0]["error_type"] == "invalid_request_error"
    assert len(model.log) == 1
    calls = [a for n, a in await activity_attempts(handle) if n == "llm.call_model"]
    assert calls == [1]
