from rich.console import Console

from outlast.live_tree import status_tree
from tests.unit.test_details import child, status


def render(tree) -> str:
    console = Console(record=True, width=140, color_system=None)
    console.print(tree)
    return console.export_text()


def test_tree_shows_the_agent_and_each_child_with_its_own_progress():
    running, done = child(1), child(2, "completed")
    own = status(agent_id="c1", agent_type="worker", state="calling_model", turn=1)
    text = render(status_tree(status(children=[running, done]), {running.workflow_id: own}))
    lines = text.splitlines()
    assert lines[0].startswith("coordinator turn 3: running Agent, SendMessage · 1,500 tokens")
    assert "… task 1 | with a pipe (worker, background) turn 2: calling claude-x" in lines[1]
    assert "✓ task 2 | with a pipe (worker, background) completed" in lines[2]


def test_a_running_child_without_its_status_shows_no_progress():
    text = render(status_tree(status(children=[child(1)]), {}))
    assert text.splitlines()[1].endswith("(worker, background)")
