"""Auto-compaction's decisions and texts (agents/compaction.py) and its store side
(activities/compaction.py)."""

from __future__ import annotations

from activities import transcripts
from activities.compaction import OMITTED, compacted, to_summarize, without_oldest
from activities.store import LocalBlobStore
from agents.compaction import (
    COMPACT_PROMPT,
    IMAGE_TOKENS,
    MAX_FAILURES,
    PDF_TOKENS,
    compact_at,
    context_tokens,
    continuation,
    due,
    estimate_tokens,
    summary_of,
    too_long,
)
from agents.config import ModelSettings, from_env
from agents.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from agents.transcript import TranscriptRef


def test_the_line_is_the_window_less_the_answers_room_and_a_margin():
    # As Claude Code: the answer's room is max_tokens, at most 20,000.
    assert compact_at(ModelSettings(), 32_000) == 200_000 - 20_000 - 13_000
    assert compact_at(ModelSettings(), 8_000) == 200_000 - 8_000 - 13_000
    assert compact_at(ModelSettings(context_window=1_000_000), 32_000) == 967_000
    assert compact_at(ModelSettings(auto_compact_tokens=50_000), 32_000) == 50_000
    assert compact_at(ModelSettings(auto_compact_tokens=0), 32_000) is None


def test_a_compaction_is_due_at_the_line_until_it_has_failed_too_often():
    settings = ModelSettings(auto_compact_tokens=1_000)
    assert not due(899, 100, 0, settings, 32_000)
    assert due(900, 100, 0, settings, 32_000)
    assert due(5_000, 0, MAX_FAILURES - 1, settings, 32_000)
    assert not due(5_000, 0, MAX_FAILURES, settings, 32_000)
    assert not due(10**9, 0, 0, ModelSettings(auto_compact_tokens=0), 32_000)


def test_no_compaction_where_a_summary_cannot_help():
    settings = ModelSettings(auto_compact_tokens=1_000)
    # Nothing measured to sum up: a first call (or the first after a summary).
    assert not due(0, 5_000, 0, settings, 32_000)
    # What waits for the next call is over the line by itself, and goes whole.
    assert not due(500, 1_000, 0, settings, 32_000)
    assert due(500, 999, 0, settings, 32_000)


def test_the_context_counts_every_prompt_token_and_the_answer():
    usage = Usage(
        input_tokens=10,
        cache_creation_input_tokens=200,
        cache_read_input_tokens=3_000,
        output_tokens=40,
    )
    assert context_tokens(usage) == 3_250


def test_disable_auto_compact_turns_it_off():
    assert from_env({"DISABLE_AUTO_COMPACT": "1"}).model.auto_compact_tokens == 0
    assert from_env({}).model.auto_compact_tokens is None


def reply(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def test_the_summary_is_what_the_summary_tags_hold_without_the_analysis():
    text = (
        "<analysis>my notes <summary>not this</summary></analysis>\n<summary>\nTHE GIST\n</summary>"
    )
    assert summary_of(reply(text), "end_turn") == "THE GIST"
    # Cut off by max_tokens before the closing tag: what came is kept.
    assert summary_of(reply("<summary>half of it"), "max_tokens") == "half of it"
    assert summary_of(reply("<analysis>only thinking, cut off"), "max_tokens") == ""
    tool_only = Message(role="assistant", content=[ToolUseBlock(id="t", name="Read", input={})])
    assert summary_of(tool_only, "tool_use") == ""
    assert "THE GIST" in continuation("THE GIST").text()


def test_a_line_or_a_refusal_is_no_summary():
    """It would replace the whole conversation."""
    assert summary_of(reply("I can't help with that."), "end_turn") == ""
    assert summary_of(reply("<summary>THE GIST</summary>"), "refusal") == ""
    long = "An untagged account of the work. " * 20
    assert summary_of(reply(long), "end_turn") == long.strip()


def test_what_waits_for_the_next_call_is_counted_too():
    result = Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="x" * 4_000)])
    assert estimate_tokens([result]) == 1_000
    note = Message.user_text("y" * 400)
    assert estimate_tokens([result, note]) == 1_100
    assert estimate_tokens([], [False, False]) == 2 * IMAGE_TOKENS
    assert estimate_tokens([], [True]) == PDF_TOKENS


def test_the_model_sums_up_what_came_before_its_last_answer_which_is_kept(tmp_path):
    store = LocalBlobStore(tmp_path)
    use = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "a"})
    last = Message(role="assistant", content=[TextBlock(text="Reading b."), use])
    chain = [
        Message.user_text("the task"),
        Message(role="assistant", content=[ToolUseBlock(id="toolu_0", name="Read", input={})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="toolu_0", content="A")]),
        last,
    ]
    ref = transcripts.append(store, TranscriptRef(), chain)
    kept, sent = to_summarize(store, ref)
    assert kept == last
    # The request rides in the user turn that ends the conversation, after its results.
    assert [m.role for m in sent] == ["user", "assistant", "user", "user"]
    assert sent[-1].text() == COMPACT_PROMPT
    assert sent[-2].content[0] == ToolResultBlock(tool_use_id="toolu_0", content="A")
    new = compacted(store, "GIST", kept)
    assert new.length == 2
    messages = transcripts.load(store, new)
    assert "GIST" in messages[0].text() and messages[0].role == "user"
    assert messages[1] == last
    # The old conversation stays as it was (nodes are immutable).
    assert transcripts.load(store, ref) == tuple(chain)


def test_a_conversation_that_ends_with_a_user_turn_is_summed_up_whole(tmp_path):
    store = LocalBlobStore(tmp_path)
    ref = transcripts.append(store, TranscriptRef(), [Message.user_text("only a task")])
    kept, sent = to_summarize(store, ref)
    assert kept is None and len(sent) == 2
    assert transcripts.load(store, compacted(store, "GIST", None))[0].role == "user"


def test_only_a_refusal_for_length_is_mended_by_a_summary():
    def rejected(message: str, status: int = 400) -> dict:
        return {"status": status, "error_type": "invalid_request_error", "api_message": message}

    assert too_long("ModelRequestRejected", rejected("prompt is too long: 210000 > 200000"))
    assert too_long(
        "ModelRequestRejected",
        rejected("input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000"),
    )
    assert not too_long("ModelRequestRejected", rejected("messages.1: roles must alternate"))
    assert not too_long("ModelRequestRejected", rejected("prompt is too long", status=413))
    assert not too_long("ModelUnavailable", rejected("prompt is too long"))
    assert not too_long("ModelRequestRejected", None)


def test_a_summary_request_too_long_leaves_the_oldest_quarter_out_and_says_so():
    def call(i: int) -> Message:
        return Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="Read", input={})])

    def result(i: int) -> Message:
        return Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content=f"R{i}")])

    # A cut that falls between a call and its result drops both.
    messages = [Message.user_text("TASK"), call(1), result(1), call(2), result(2), call(3)]
    messages.append(result(3))
    kept = without_oldest(messages, 1)  # 7 // 4: the task
    assert kept[0].text() == OMITTED and "TASK" not in str(kept)
    assert [m.role for m in kept[1:]] == ["assistant", "user"] * 3
    kept = without_oldest(messages, 2)  # 14 // 4 = 3: the task, the first call and result
    assert "t1" not in str(kept) and [m.role for m in kept[1:]] == ["assistant", "user"] * 2
    kept = without_oldest(messages[:3] + messages[4:], 1)  # a result left without its call
    assert "R2" not in str(kept) and "t1" in str(kept)
    # Fewer messages than quarters: something is left out all the same, but never all.
    assert without_oldest(messages[:3], 1)[1:] == messages[1:3]
    assert without_oldest(messages[:1], 3) == [Message.user_text(OMITTED), messages[0]]


def test_an_earlier_summary_is_never_left_out():
    summary = continuation("EARLIER-GIST")
    call = Message(role="assistant", content=[ToolUseBlock(id="t", name="Read", input={})])
    done = Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="R")])
    kept = without_oldest([summary, Message.user_text("more"), call, done], 1)
    assert kept[0] == summary and kept[1].text() == OMITTED and "more" not in str(kept)
