"""NotebookEdit in an agent (T14): read the notebook, change a cell, the stamp carries on."""

from __future__ import annotations

import json

from tests.activities.test_notebook_edit import notebook
from tests.support import agent_input, running_workers, scripted_model, start, tool_results


async def test_an_agent_reads_a_notebook_and_edits_its_cells(client, git_repo):
    (git_repo / "nb.ipynb").write_text(json.dumps(notebook()))
    path = "{{cwd}}/nb.ipynb"
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    # Before reading it: refused, and the model reads first.
                    {
                        "tool_use": {
                            "name": "NotebookEdit",
                            "input": {"notebook_path": path, "cell_id": "calc", "new_source": "1"},
                        }
                    },
                    {"tool_use": {"name": "Read", "input": {"file_path": path}}},
                    {
                        "tool_use": {
                            "name": "NotebookEdit",
                            "input": {"notebook_path": path, "cell_id": "calc", "new_source": "2"},
                        }
                    },
                    {
                        "tool_use": {
                            "name": "NotebookEdit",
                            "input": {
                                "notebook_path": path,
                                "cell_id": "intro",
                                "new_source": "",
                                "edit_mode": "delete",
                            },
                        }
                    },
                    {"text": "Done."},
                ],
            }
        ]
    }
    with scripted_model(script):
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("edit nb", git_repo, queues), queues)
            result = await handle.result()
    assert result.status == "completed"
    refused, read, replaced, deleted = tool_results(result)
    assert refused.is_error and "has not been read yet" in refused.content
    assert '<cell id="calc">print(2 + 2)</cell id="calc">' in read.content
    assert replaced.content == "Updated cell calc with 2" and not replaced.is_error
    assert deleted.content == "Deleted cell intro" and not deleted.is_error
    cells = json.loads((git_repo / "nb.ipynb").read_text())["cells"]
    assert [(c["id"], c["source"]) for c in cells] == [("calc", ["2"])]
