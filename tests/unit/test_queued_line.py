"""How `outlast show` lists a coordinator's queued worker."""

from outlast.tree_text import queued_line
from workflows.contracts import QueuedWorker


def test_a_queued_worker_says_what_it_waits_for():
    q = QueuedWorker(
        agent_id="a1",
        label="doc",
        phase="implementation",
        files=["a.py", "b.py"],
        waits_for=["fix", "lint"],
    )
    assert queued_line(q) == "doc (a1), implementation of a.py, b.py: waits for fix, lint"


def test_one_that_waits_only_for_a_slot_says_so():
    q = QueuedWorker(agent_id="a2", label="", phase="research")
    assert queued_line(q) == "a2 (a2), research: waits for a free slot"
