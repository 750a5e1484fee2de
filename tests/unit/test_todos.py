import pytest
from pydantic import ValidationError

from agents.todos import (
    MAX_SHOWN,
    MAX_TODOS,
    TodoItem,
    TodoWriteInput,
    apply_todo_write,
    in_progress,
    render_todos,
)
from outlast.converter import OutlastPayloadConverter
from workflows.loop_types import LoopState
from workflows.turns import describe_validation_error


def item(content: str, status: str = "pending") -> dict:
    return {"content": content, "status": status, "activeForm": content + "ing"}


def write(*items: dict) -> TodoWriteInput:
    return TodoWriteInput.model_validate({"todos": list(items)})


def test_each_call_replaces_the_list_and_says_what_it_was():
    first = apply_todo_write([], write(item("Run"), item("Fix", "in_progress")))
    assert first.old_todos == [] and [t.content for t in first.new_todos] == ["Run", "Fix"]
    second = apply_todo_write(first.kept, write(item("Ship", "in_progress")))
    assert second.old_todos == first.new_todos  # T7's test: oldTodos is the first list
    assert [t.content for t in second.kept] == ["Ship"]


def test_a_list_with_every_item_completed_is_not_kept_but_an_empty_one_is_just_empty():
    done = apply_todo_write([], write(item("Run", "completed"), item("Fix", "completed")))
    assert len(done.new_todos) == 2 and done.kept == []
    assert apply_todo_write(done.new_todos, write()).kept == []


@pytest.mark.parametrize(
    ("todos", "expected"),
    [
        ([{"content": "Run", "status": "pending"}], "`todos.0.activeForm` is missing"),
        ([item("Run", "started")], "`todos.0.status` is invalid"),
        ([{**item("Run"), "priority": "high"}], "unexpected parameter `todos.0.priority`"),
        ([item("")], "`todos.0.content` is invalid"),
        ([item("x")] * (MAX_TODOS + 1), "at most 100 items"),
    ],
)
def test_a_call_that_does_not_fit_says_what_to_fix(todos, expected):
    with pytest.raises(ValidationError) as bad:
        TodoWriteInput.model_validate({"todos": todos})
    assert expected in describe_validation_error("TodoWrite", bad.value)


def test_the_checklist_shows_progress_and_the_item_in_progress_by_its_active_form():
    todos = write(item("Read", "completed"), item("Test", "in_progress"), item("Fix")).todos
    assert render_todos(todos).splitlines() == [
        "**Todos** (1 of 3 done)",
        "",
        "- [x] Read",
        "- [ ] **Testing** (in progress)",
        "- [ ] Fix",
    ]
    assert in_progress(todos) == "Testing" and in_progress(todos[:1]) is None
    assert render_todos([]) == ""


def test_model_written_markdown_is_shown_as_text():
    todos = write(item("Fix **all** [docs](http://x) # | `rm`", "in_progress")).todos
    [line] = render_todos(todos).splitlines()[2:]
    assert line == (r"- [ ] **Fix \*\*all\*\* \[docs\]\(http://x\) \# \| \`rm\`ing** (in progress)")


def test_a_long_list_is_cut_and_a_long_item_shortened_on_one_line():
    todos = write(*[item(f"step {i}") for i in range(MAX_SHOWN + 5)], item("a\nb " * 60)).todos
    lines = render_todos(todos).splitlines()
    assert lines[-1] == "- … 6 more"
    assert len(lines) == 2 + MAX_SHOWN + 1
    long = render_todos(todos[-1:]).splitlines()[-1]
    assert "\n" not in long and long.endswith("…") and len(long) <= len("- [ ] ") + 100


def test_the_list_survives_continue_as_new_through_the_data_converter():
    todos = write(item("Run", "in_progress"), item("Fix")).todos
    converter = OutlastPayloadConverter()
    (payload,) = converter.to_payloads([LoopState(todos=todos)])
    (back,) = converter.from_payloads([payload], [LoopState])
    assert back.todos == todos and isinstance(back.todos[0], TodoItem)


def test_the_list_survives_the_carry_s_json_dump_too():
    """AgentWorkflow hands its state on as `model_dump(mode="json")`, by field name."""
    todos = write(item("Run", "in_progress")).todos
    dumped = LoopState(todos=todos).model_dump(mode="json")
    assert dumped["todos"][0]["active_form"] == "Runing"
    assert LoopState.model_validate(dumped).todos == todos
