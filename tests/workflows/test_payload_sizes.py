"""Big outputs never make big history payloads (R93): tools cut their output, and anything
still large is claim-checked into external storage; the agent goes on."""

from __future__ import annotations

from activities import transcripts
from activities.store import default_store
from agents.messages import ToolResultBlock
from tests.support import agent_input, running_workers, scripted_model, start

LIMIT = 512 * 1024
BIG_CONTENT = "0123456789abcdef" * (3 * 1024 * 1024 // 16)  # 3 MiB, written by the model


async def test_huge_outputs_and_files(client, git_repo):
    (git_repo / "big.log").write_text(("x" * 199 + "\n") * (10 * 1024 * 1024 // 200))  # 10 MiB
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {
                        "tool_use": [
                            {
                                "name": "Bash",
                                "input": {"command": "head -c 5000000 /dev/zero | tr '\\\\0' y"},
                            },
                            {"name": "Read", "input": {"file_path": "{{cwd}}/big.log"}},
                            {
                                "name": "Read",
                                "input": {
                                    "file_path": "{{cwd}}/big.log",
                                    "offset": 1000,
                                    "limit": 50,
                                },
                            },
                            {
                                "name": "Grep",
                                "input": {
                                    "pattern": "x",
                                    "path": "{{cwd}}/big.log",
                                    "output_mode": "content",
                                    "head_limit": 0,
                                },
                            },
                        ]
                    },
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": "{{cwd}}/blob.txt", "content": BIG_CONTENT},
                        }
                    },
                    {"text": "done with the big stuff"},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("go", git_repo, queues), queues)
            result = await handle.result()
            sizes = [e.ByteSize() async for e in handle.fetch_history_events()]
    assert result.status == "completed" and result.final_text == "done with the big stuff"
    assert max(sizes) < LIMIT, max(sizes)
    assert (git_repo / "blob.txt").read_text() == BIG_CONTENT
    messages = transcripts.load(default_store(), result.transcript)
    bash, whole, part, grep, write = [
        b for m in messages for b in m.content if isinstance(b, ToolResultBlock)
    ]
    assert "truncated" in bash.content.lower() and len(bash.content) < 31_000
    assert whole.is_error and "exceeds maximum allowed size" in whole.content
    assert not part.is_error and part.content.count("\n") == 49
    # A Grep with no limit stops at one result's size and says where the next page starts.
    assert "as many as one result holds; continue with offset:" in grep.content
    assert len(grep.content) < 100_000
    assert not write.is_error
