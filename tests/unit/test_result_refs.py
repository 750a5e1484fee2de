"""A long tool output is in history once: the model request refers to the blob its tool
activity stored, and the model activity fills it back in before sending and recording."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from activities.llm import ModelRequest, ModelResponse
from activities.result_refs import resolve_refs
from activities.store import LocalBlobStore
from activities.tools.base import (
    MAX_TOOL_RESULT_CHARS,
    STORE_OUTPUT_FROM_CHARS,
    ToolOutput,
    with_content_ref,
)
from agents.messages import Message, TextBlock, ToolResultBlock, Usage
from agents.transcript import TranscriptRef
from workflows.turns import by_reference

LONG = "x" * 2000


def ref_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def test_a_full_digest_of_an_older_history_still_names_its_result():
    # Histories recorded before the store's names were cut to 32 digits hold 64.
    message = Message(role="user", content=[ToolResultBlock(tool_use_id="a", content=LONG)])
    full = hashlib.sha256(LONG.encode()).hexdigest()
    (thin,), used = by_reference([message], {"a": full})
    assert thin.content[0].content == "" and used == {"a": full}
    (kept,), used = by_reference([message], {"a": full[:-1] + "0"})
    assert kept.content[0].content == LONG and used == {}


def test_results_go_by_reference_only_while_unchanged():
    message = Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id="a", content=LONG),
            ToolResultBlock(tool_use_id="b", content=LONG + " and a note added later"),
            ToolResultBlock(tool_use_id="c", content="short"),
            TextBlock(text="a reminder"),
        ],
    )
    refs = {"a": ref_of(LONG), "b": ref_of(LONG)}
    (thin,), used = by_reference([message], refs)
    a, b, c, text = thin.content
    assert a.content == "" and used == {"a": ref_of(LONG)}
    assert b.content.endswith("added later") and c.content == "short"
    assert text == TextBlock(text="a reminder")
    assert by_reference([Message.user_text("hi")], refs) == ([Message.user_text("hi")], {})


def test_the_model_activity_fills_them_back(tmp_path: Path):
    store = LocalBlobStore(tmp_path)
    ref = store.put(LONG.encode())
    sent = Message(role="user", content=[ToolResultBlock(tool_use_id="a", content="")])
    filled = resolve_refs(sent, {"a": ref}, store)
    assert filled.content[0].content == LONG
    assert resolve_refs(sent, {}, store) is sent


def test_only_long_outputs_are_stored(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OUTLAST_STORE_DIR", str(tmp_path))
    short = ToolOutput(content="y" * (STORE_OUTPUT_FROM_CHARS - 1))
    assert with_content_ref(short).stored_ref() is None
    long = with_content_ref(ToolOutput(content=LONG))
    assert long.stored_ref() == ref_of(LONG)
    assert LocalBlobStore(tmp_path).get(long.stored_ref()) == LONG.encode()
    # History gets a flag, not the name: the workflow works that out from the content.
    assert json.loads(long.model_dump_json()) == {"content": LONG, "stored": True}
    older = ToolOutput.model_validate({"content": LONG, "content_ref": "f" * 64})
    assert older.stored_ref() == "f" * 64  # as outputs recorded before 2026-12-07 name it


def test_a_stored_output_cut_to_the_cap_decodes_to_what_was_stored(tmp_path, monkeypatch):
    # Decoding caps `content` again: a cap that grew an output past its own limit gave the
    # workflow a different text, and so a name no blob has.
    monkeypatch.setenv("OUTLAST_STORE_DIR", str(tmp_path))
    huge = with_content_ref(ToolOutput(content="z" * (MAX_TOOL_RESULT_CHARS * 2)))
    assert len(huge.content) <= MAX_TOOL_RESULT_CHARS and "omitted" in huge.content
    decoded = ToolOutput.model_validate_json(huge.model_dump_json())
    assert decoded.content == huge.content
    assert LocalBlobStore(tmp_path).get(decoded.stored_ref()) == huge.content.encode()


def test_a_result_by_reference_goes_into_history_as_its_id_alone():
    referenced = ToolResultBlock(tool_use_id="a", content="")
    empty = ToolResultBlock(tool_use_id="b", content="")  # an empty result, not a reference
    failed = ToolResultBlock(tool_use_id="c", content="", is_error=True)
    request = ModelRequest(
        model="m",
        append=[Message(role="user", content=[referenced, empty, failed])],
        append_refs={"a": ref_of(LONG), "c": ref_of(LONG)},
    )
    sent = json.loads(request.model_dump_json())
    a, b, c = sent["append"][0]["content"]
    assert a == {"type": "tool_result", "tool_use_id": "a"}
    assert b == {"type": "tool_result", "tool_use_id": "b", "content": "", "is_error": False}
    assert c == {"type": "tool_result", "tool_use_id": "c", "is_error": True}
    assert sent["append_refs"] == [ref_of(LONG), ref_of(LONG)]  # the ids are said once
    assert ModelRequest.model_validate_json(request.model_dump_json()) == request
    # As histories recorded before 2026-12-07 hold it.
    older = {**copy.deepcopy(sent), "append_refs": {"a": ref_of(LONG), "c": ref_of(LONG)}}
    older["append"][0]["content"][0]["content"] = ""
    assert ModelRequest.model_validate(older) == request
    with pytest.raises(ValidationError, match="names 1 results, and the append has 2"):
        ModelRequest.model_validate({**sent, "append_refs": [ref_of(LONG)]})


def test_an_answer_goes_into_history_without_saying_whose_it_is():
    answer = ModelResponse(
        message=Message(role="assistant", content=[TextBlock(text="done")]),
        stop_reason="end_turn",
        usage=Usage(),
        transcript=TranscriptRef(),
    )
    recorded = json.loads(answer.model_dump_json())
    assert recorded["message"] == {"content": [{"type": "text", "text": "done"}]}
    assert ModelResponse.model_validate_json(answer.model_dump_json()) == answer
    older = {**recorded, "message": {"role": "assistant", **recorded["message"]}}
    assert ModelResponse.model_validate(older) == answer
