"""A tool call cut off by max_tokens (reliability row 9), end to end through the real SDK
stream: the half-written call is an error result the model sees, and it does nothing."""

from __future__ import annotations

import pytest

from tests.support import agent_input, running_workers, scripted_model, start, tool_results

pytestmark = pytest.mark.reliability

CUT_OFF = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Writing the file.",
                    "tool_use": {
                        "name": "Write",
                        "input": {"file_path": "{{cwd}}/cut.txt", "content": "x" * 2000},
                    },
                    "stop_reason": "max_tokens",
                },
                {"text": "I will write it in smaller parts."},
            ],
        }
    ]
}


async def test_a_tool_call_cut_off_by_max_tokens_is_an_error_and_does_nothing(client, git_repo):
    with scripted_model(CUT_OFF) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("write", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed" and len(model.log) == 2
    (cut,) = tool_results(result)
    assert cut.is_error and "max_tokens" in cut.content, cut.content
    assert not (git_repo / "cut.txt").exists()
