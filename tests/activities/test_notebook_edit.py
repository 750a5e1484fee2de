"""NotebookEdit (spec T14) on real notebooks through a real activity context: cells named as
Read shows them, the read-before-write rule, and the notebook kept in nbformat's layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.tools.base import ToolContext, ToolOutput
from activities.tools.notebook_edit import NotebookEditInput, NotebookEditRequest, notebook_edit
from activities.tools.read import ReadInput, ReadRequest, read_file
from activities.tools.write import MODIFIED, NOT_READ
from workflows.turns import describe_validation_error


def notebook(minor: int = 5, ids: bool = True) -> dict:
    cells = [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# Title\n", "Intro"],
        },
        {
            "cell_type": "code",
            "execution_count": 3,
            "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["4\n"]}],
            "source": ["print(2 + 2)"],
        },
    ]
    if ids:
        cells[0]["id"], cells[1]["id"] = "intro", "calc"
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


async def read_stamp(root: Path, path: Path):
    ctx = ToolContext(workspace_root=str(root), cwd=str(root))
    out = await ActivityEnvironment().run(
        read_file, ReadRequest(ctx=ctx, input=ReadInput(file_path=str(path)))
    )
    return out.stamps[str(path)]


async def edit(root: Path, path: Path, stamp=None, **kw) -> ToolOutput:
    ctx = ToolContext(workspace_root=str(root), cwd=str(root), read_stamp=stamp)
    inp = NotebookEditInput(notebook_path=str(path), **kw)
    return await ActivityEnvironment().run(notebook_edit, NotebookEditRequest(ctx=ctx, input=inp))


async def test_replacing_a_code_cell_drops_its_stale_outputs(ws: Path):
    path = ws / "nb.ipynb"
    path.write_text(json.dumps(notebook()))
    out = await edit(ws, path, await read_stamp(ws, path), cell_id="calc", new_source="x = 1\ny")
    assert not out.is_error and out.content == "Updated cell calc with x = 1\ny"
    cell = json.loads(path.read_text())["cells"][1]
    assert cell["source"] == ["x = 1\n", "y"]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    # The new stamp licenses the next edit without reading again, as Edit's does.
    again = await edit(ws, path, out.stamps[str(path)], cell_id="calc", new_source="z")
    assert not again.is_error
    assert path.read_text().startswith('{\n "cells": [\n  {\n') and path.read_text()[-1] == "\n"


async def test_a_cell_becomes_markdown_and_loses_what_only_code_has(ws: Path):
    path = ws / "nb.ipynb"
    path.write_text(json.dumps(notebook()))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, cell_id="calc", new_source="Now prose", cell_type="markdown")
    assert not out.is_error
    cell = json.loads(path.read_text())["cells"][1]
    assert cell["cell_type"] == "markdown" and "outputs" not in cell
    assert "execution_count" not in cell


async def test_insert_after_a_cell_or_at_the_start_and_delete(ws: Path):
    path = ws / "nb.ipynb"
    path.write_text(json.dumps(notebook()))
    stamp = await read_stamp(ws, path)
    out = await edit(
        ws,
        path,
        stamp,
        cell_id="intro",
        new_source="import os",
        edit_mode="insert",
        cell_type="code",
    )
    assert not out.is_error and out.content.startswith("Inserted cell ")
    cells = json.loads(path.read_text())["cells"]
    assert [c.get("id") for c in cells][::2] == ["intro", "calc"]
    new = cells[1]
    assert new["source"] == ["import os"] and new["outputs"] == [] and len(new["id"]) == 8
    first = await edit(
        ws,
        path,
        out.stamps[str(path)],
        new_source="# Top",
        edit_mode="insert",
        cell_type="markdown",
    )
    assert json.loads(path.read_text())["cells"][0]["source"] == ["# Top"]
    gone = await edit(
        ws, path, first.stamps[str(path)], cell_id="calc", new_source="", edit_mode="delete"
    )
    assert gone.content == "Deleted cell calc"
    ids = [c.get("id") for c in json.loads(path.read_text())["cells"]]
    assert "calc" not in ids and ids[1:] == ["intro", new["id"]]


async def test_cells_without_ids_are_named_by_their_place_as_read_shows_them(ws: Path):
    path = ws / "old.ipynb"
    path.write_text(json.dumps(notebook(minor=4, ids=False)))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, cell_id="cell-1", new_source="1")
    assert not out.is_error
    inserted = await edit(
        ws,
        path,
        out.stamps[str(path)],
        cell_id="cell-1",
        new_source="2",
        edit_mode="insert",
        cell_type="code",
    )
    assert inserted.content == "Inserted cell cell-2 with 2"  # no ids before nbformat 4.5
    assert all("id" not in c for c in json.loads(path.read_text())["cells"])


async def test_read_first_unchanged_since_and_a_cell_that_exists(ws: Path):
    path = ws / "nb.ipynb"
    path.write_text(json.dumps(notebook()))
    assert (await edit(ws, path, None, cell_id="calc", new_source="x")).content == NOT_READ
    stamp = await read_stamp(ws, path)
    missing = await edit(ws, path, stamp, cell_id="nope", new_source="x")
    assert missing.is_error and 'Cell with ID "nope" not found' in missing.content
    assert "Cells: intro, calc" in missing.content
    path.write_text(json.dumps(notebook()) + " ")
    assert (await edit(ws, path, stamp, cell_id="calc", new_source="x")).content == MODIFIED
    plain = ws / "notes.txt"
    plain.write_text("x")
    wrong = await edit(ws, plain, stamp, cell_id="calc", new_source="x")
    assert wrong.is_error and "use Edit" in wrong.content


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"edit_mode": "insert"}, "cell_type is required when using edit_mode=insert"),
        ({"edit_mode": "replace"}, "cell_id is required when using edit_mode=replace"),
        ({"cell_id": "a", "edit_mode": "move"}, "`edit_mode` is invalid"),
    ],
)
def test_an_input_that_does_not_fit_says_what_to_fix(fields: dict, expected: str):
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as bad:
        NotebookEditInput.model_validate(
            {"notebook_path": "/w/a.ipynb", "new_source": "", **fields}
        )
    assert expected in describe_validation_error("NotebookEdit", bad.value)


async def test_inserted_cells_never_share_an_id_and_edits_stay_within_the_format(ws: Path):
    nb = notebook()
    nb["cells"][0]["attachments"] = {"a.png": {"image/png": "iVBORw=="}}
    path = ws / "nb.ipynb"
    path.write_text(json.dumps(nb))
    stamp = await read_stamp(ws, path)
    for _ in range(2):  # the same empty cell at the same place, twice
        out = await edit(ws, path, stamp, new_source="", edit_mode="insert", cell_type="code")
        assert not out.is_error
        stamp = out.stamps[str(path)]
    ids = [c["id"] for c in json.loads(path.read_text())["cells"]]
    assert len(set(ids)) == len(ids) == 4
    first = json.loads(path.read_text())["cells"][0]
    assert list(first) == sorted(first)  # nbformat's key order: its next save changes nothing
    out = await edit(ws, path, stamp, cell_id="intro", new_source="x = 1", cell_type="code")
    assert not out.is_error
    intro = json.loads(path.read_text())["cells"][2]
    assert intro["cell_type"] == "code" and "attachments" not in intro


async def test_a_place_named_cell_s_neighbours_are_said_to_have_moved(ws: Path):
    path = ws / "old.ipynb"
    path.write_text(json.dumps(notebook(minor=4, ids=False)))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, cell_id="cell-0", new_source="", edit_mode="delete")
    assert out.content.startswith("Deleted cell cell-0\nCells without ids are named by their place")


async def test_what_edit_would_break_and_what_the_file_holds_are_answers(ws: Path):
    from activities.tools.edit import EditInput, EditRequest, edit_file

    path = ws / "nb.ipynb"
    path.write_text(json.dumps(notebook()))
    stamp = await read_stamp(ws, path)
    ctx = ToolContext(workspace_root=str(ws), cwd=str(ws), read_stamp=stamp)
    req = EditRequest(ctx=ctx, input=EditInput(file_path=str(path), old_string="2", new_string="3"))
    refused = await ActivityEnvironment().run(edit_file, req)
    assert refused.is_error and "Use the NotebookEdit" in refused.content
    weird = {"cells": [["not a cell"]], "nbformat": 4}
    path.write_text(json.dumps(weird))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, new_source="x", edit_mode="insert", cell_type="code")
    assert out.is_error and "no list of cells" in out.content
    surrogate = notebook()
    surrogate["cells"][1]["outputs"][0]["text"] = ["\udcff\n"]
    path.write_text(json.dumps(surrogate))  # escaped in the file, a lone surrogate in Python
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, cell_id="intro", new_source="# T")
    assert not out.is_error and "\\udcff" in path.read_text()


async def test_a_cell_id_that_is_a_number_is_named_not_a_crash(ws: Path):
    """A malformed notebook with numeric cell ids: a cell that is not there is named among
    the others (joining them failed with a TypeError the tool did not catch)."""
    path = ws / "nb.ipynb"
    book = notebook()
    book["cells"][0]["id"] = 7
    path.write_text(json.dumps(book))
    stamp = await read_stamp(ws, path)
    out = await edit(ws, path, stamp, cell_id="nope", new_source="x")
    assert out.is_error and 'Cell with ID "nope" not found' in out.content and "7" in out.content
    found = await edit(ws, path, stamp, cell_id="7", new_source="# seven")
    assert not found.is_error, found.content
