"""Pure decisions of the agent loop."""

from pydantic import BaseModel, ConfigDict, Field

from agents.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    merge_user_messages,
)
from workflows.contracts import AgentUsage
from workflows.turns import (
    ValidCall,
    add_usage,
    batch_calls,
    plan_calls,
)


class ReadIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str
    limit: int | None = Field(default=None, ge=1)


MODELS = {"Read": ReadIn, "Edit": ReadIn}


def use(i: int, name: str, **inp) -> ToolUseBlock:
    return ToolUseBlock(id=f"t{i}", name=name, input=inp)


def reply(*blocks) -> Message:
    return Message(role="assistant", content=list(blocks))


def test_unknown_tool_invalid_input_and_cutoff_become_error_results():
    msg = reply(
        use(1, "Nope"),
        use(2, "Read"),
        use(3, "Read", file_path="/a", limit=0),
        use(4, "Read", file_path="/a", extra=1),
        use(5, "Read", file_path="/a"),
    )
    planned = plan_calls(msg, "max_tokens", MODELS)
    assert [type(p) for p in planned] == [ToolResultBlock] * 5
    texts = [p.content for p in planned]
    assert "No such tool available: Nope" in texts[0]
    assert "The required parameter `file_path` is missing" in texts[1]
    assert "`limit` is invalid" in texts[2]
    assert "unexpected parameter `extra`" in texts[3]
    assert "cut off" in texts[4]  # the last tool_use of a max_tokens response
    assert all(p.is_error and p.content.startswith("<tool_use_error>") for p in planned)


def test_valid_calls_keep_their_order_and_ids():
    planned = plan_calls(
        reply(TextBlock(text="x"), use(1, "Read", file_path="/a")), "tool_use", MODELS
    )
    assert isinstance(planned[0], ValidCall) and planned[0].block.id == "t1"


def test_batches_group_consecutive_read_only_calls():
    safe = {"Read", "Grep"}.__contains__
    calls = [
        ValidCall(use(i, n), ReadIn(file_path="/a"))
        for i, n in enumerate(["Read", "Grep", "Edit", "Read", "Read", "Edit", "Edit"])
    ]
    err = ToolResultBlock(tool_use_id="e", content="x", is_error=True)
    batches = batch_calls([*calls[:2], err, *calls[2:]], safe)
    names = [[getattr(i, "block", None) and i.block.name or "err" for i in b] for b in batches]
    assert names == [["Read", "Grep"], ["err"], ["Edit"], ["Read", "Read"], ["Edit"], ["Edit"]]


def test_a_message_waits_for_the_agent_call_that_spawns_its_recipient():
    """`Agent{name: carol}` then `SendMessage{to: carol}` in one response: run together, the
    message found no carol (a user test). It waits for that Agent call; Agent calls still
    run together, and a call naming another agent, or a TaskOutput, does not wait (a sync
    Agent call holds its batch until its child ends)."""
    from types import SimpleNamespace as In

    safe = {"Agent", "SendMessage", "TaskStop", "TaskOutput", "Read"}.__contains__
    calls = [
        ("SendMessage", In(to="carol")),
        ("Agent", In(name="carol")),
        ("Agent", In(name=None)),
        ("SendMessage", In(to="dave")),
        ("TaskOutput", In(task_id="carol")),
        ("SendMessage", In(to="carol")),
        ("TaskStop", In(task_id="carol")),
        ("Agent", In(name="erin")),
        ("TaskStop", In(task_id="erin")),
    ]
    planned = [ValidCall(use(i, n), inp) for i, (n, inp) in enumerate(calls)]

    def names(batches):
        return [[i.block.name for i in b] for b in batches]

    assert names(batch_calls(planned, safe)) == [
        ["SendMessage", "Agent", "Agent", "SendMessage", "TaskOutput"],
        ["SendMessage", "TaskStop", "Agent"],
        ["TaskStop"],
    ]
    assert names(batch_calls(planned, safe, after_spawns=False)) == [[n for n, _ in calls]]


def test_usage_total_is_latest_prompt_plus_all_output():
    u = add_usage(
        AgentUsage(), Usage(input_tokens=100, output_tokens=10), tool_uses=2, duration_ms=5
    )
    u = add_usage(u, Usage(input_tokens=5, cache_read_input_tokens=110, output_tokens=20), 1, 9)
    assert u.total_tokens == 115 + 30
    assert u.tool_uses == 3 and u.duration_ms == 9
    assert u.tokens.output_tokens == 30 and u.tokens.input_tokens == 105


def test_consecutive_user_messages_merge():
    tool = Message(role="user", content=[ToolResultBlock(tool_use_id="a", content="r")])
    merged = merge_user_messages([tool, Message.user_text("note")])
    assert len(merged) == 1 and len(merged[0].content) == 2
    a = Message(role="assistant", content=[TextBlock(text="x")])
    assert len(merge_user_messages([Message.user_text("1"), a, Message.user_text("2")])) == 3


def test_stamps_of_results_the_model_has_not_seen_stay_behind():
    from activities.tools.base import FileStamp
    from workflows.loop_types import LoopState, seen_read_state

    stamp = FileStamp(sha256="0" * 64, mtime_ns=1, size=1)
    state = LoopState(
        read_state={"/r/seen": stamp, "/r/unseen": stamp}, unseen_stamps=["/r/unseen"]
    )
    assert seen_read_state(state) == {"/r/seen": stamp}


def test_the_glob_sort_setting_reaches_glob_calls_only():
    from activities.tools.glob import GlobInput
    from agents.config import OutlastConfig, ToolSettings
    from workflows.loop_tools import tool_options

    desc = OutlastConfig(tools=ToolSettings(glob_sort="mtime_desc"))
    glob = ValidCall(use(0, "Glob"), GlobInput(pattern="*"))
    assert tool_options(glob, desc) == {"newest_first": True}
    assert tool_options(glob, OutlastConfig()) == {}  # the default adds nothing to the input
    assert tool_options(ValidCall(use(1, "Read"), ReadIn(file_path="/a")), desc) == {}
