"""Secrets and the history (reliability row 18). The API key never enters a workflow; what a
tool reads (a `.env`) is in the history in clear unless OUTLAST_PAYLOAD_KEY turns on the
AES-GCM codec, with which no payload the project writes is readable without the key."""

from __future__ import annotations

import dataclasses

import pytest
from temporalio.client import Client

from outlast.client import data_converter
from outlast.codec import ENCODING, PayloadKeyError, new_key
from tests.support import agent_input, running_workers, scripted_model, start

pytestmark = pytest.mark.reliability

KEY_CANARY = "sk-ant-KEYCANARY-7f3a9c"
FILE_CANARY = "DOTENV-CANARY-51d2e8"

READ_ENV = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {"tool_use": {"name": "Read", "input": {"file_path": ".env"}}},
                {"tool_use": {"name": "Bash", "input": {"command": "env; cat .env"}}},
                {"text": "I read the settings."},
            ],
        }
    ]
}


async def raw_history_bytes(address: str, workflow_id: str) -> bytes:
    """The history as the server stores it: fetched by a client with no codec at all."""
    raw = await Client.connect(address)
    history = await raw.get_workflow_handle(workflow_id).fetch_history()
    return b"".join(e.SerializeToString() for e in history.events)


async def run_reading_env(client: Client, git_repo, monkeypatch) -> tuple[str, object]:
    (git_repo / ".env").write_text(f"TOKEN={FILE_CANARY}\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY_CANARY)
    with scripted_model(READ_ENV) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("read the settings", git_repo, queues), queues)
            result = await handle.result()
    assert len(model.log) == 3  # the worker called the model with the canary key
    return handle.id, result


async def test_without_a_codec_the_key_is_absent_and_tool_output_is_in_clear(
    client, dev_server, git_repo, monkeypatch
):
    wid, result = await run_reading_env(client, git_repo, monkeypatch)
    assert result.status == "completed"
    blob = await raw_history_bytes(dev_server.address, wid)
    assert KEY_CANARY.encode() not in blob, "the API key reached the history"
    # What a tool reads is the tool's result: in clear, which is what the codec is for.
    assert FILE_CANARY.encode() in blob


async def test_with_the_codec_no_canary_is_readable_in_the_raw_history(
    dev_server, git_repo, monkeypatch
):
    converter = await data_converter({"OUTLAST_PAYLOAD_KEY": new_key()})
    client = await Client.connect(dev_server.address, data_converter=converter)
    wid, result = await run_reading_env(client, git_repo, monkeypatch)
    assert result.status == "completed" and result.final_text == "I read the settings."
    blob = await raw_history_bytes(dev_server.address, wid)
    assert KEY_CANARY.encode() not in blob and FILE_CANARY.encode() not in blob
    assert ENCODING in blob
    # A client with another key is told so; one without a codec cannot decode the result.
    other_key = await data_converter({"OUTLAST_PAYLOAD_KEY": new_key()})
    stranger = await Client.connect(dev_server.address, data_converter=other_key)
    with pytest.raises(PayloadKeyError, match="encrypted with key"):
        await stranger.get_workflow_handle(wid).result()
    no_codec = dataclasses.replace(converter, payload_codec=None)
    plain = await Client.connect(dev_server.address, data_converter=no_codec)
    with pytest.raises(KeyError, match="Unknown payload encoding binary/encrypted"):
        await plain.get_workflow_handle(wid).result()
