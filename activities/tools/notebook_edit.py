"""NotebookEdit (spec T14): replace, insert or delete one cell of a Jupyter notebook the agent
has read.

Cells are named as Read shows them: the cell's `id`, or `cell-N` (0-based) for a notebook
whose cells have none. Like Edit, the notebook must be unchanged since the agent read it, and
a retried attempt that finds its own write answers as that attempt would have (the write
ledger).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from temporalio import activity

from activities.beneath import read_bytes
from activities.tools.base import ToolOutput, ToolRequest
from activities.tools.write import MODIFIED, NOT_READ
from activities.tools.write_ledger import WriteLedger, run_writing
from activities.workspace import (
    WorkspaceEscape,
    atomic_write,
    is_digest_of,
    resolve_for_write,
    stamp_of_bytes,
)
from agents.paths import normalize_path

DESCRIPTION = """\
Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with \
new source. Jupyter notebooks are interactive documents that combine code, text, and \
visualizations, commonly used for data analysis and scientific computing. The notebook_path \
parameter must be an absolute path, not a relative path. The cell_id is the id Read shows in \
`<cell id="...">`. Use edit_mode=insert to add a new cell after the cell with that id (at the \
start of the notebook when no cell_id is given); cell_type is required then. Use \
edit_mode=delete to delete the cell. The notebook must have been read with Read first, and \
not changed since."""

EditMode = Literal["replace", "insert", "delete"]


class NotebookEditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    notebook_path: str = Field(
        description="The absolute path to the Jupyter notebook file to edit (must be absolute, "
        "not relative)"
    )
    cell_id: str | None = Field(
        default=None,
        description="The ID of the cell to edit. When inserting a new cell, the new cell will "
        "be inserted after the cell with this ID, or at the beginning if not specified.",
    )
    new_source: str = Field(description="The new source for the cell")
    cell_type: Literal["code", "markdown"] | None = Field(
        default=None,
        description="The type of the cell (code or markdown). If not specified, it defaults to "
        "the current cell type. If using edit_mode=insert, this is required.",
    )
    edit_mode: EditMode = Field(
        default="replace",
        description="The type of edit to make (replace, insert, delete). Defaults to replace.",
    )

    @model_validator(mode="after")
    def _fits_the_mode(self) -> NotebookEditInput:
        if self.edit_mode == "insert" and self.cell_type is None:
            raise ValueError("cell_type is required when using edit_mode=insert")
        if self.edit_mode != "insert" and not self.cell_id:
            raise ValueError(f"cell_id is required when using edit_mode={self.edit_mode}")
        return self


class NotebookEditRequest(ToolRequest):
    input: NotebookEditInput


def _error(message: str) -> ToolOutput:
    return ToolOutput(content=message, is_error=True)


def find_cell(cells: list[dict[str, Any]], cell_id: str) -> int | None:
    """The index of the cell Read names `cell_id`: by its id, or `cell-N` for one without."""
    for n, cell in enumerate(cells):
        if str(cell.get("id") or f"cell-{n}") == cell_id:
            return n
    return None


def _source(text: str) -> list[str]:
    """A cell's source as nbformat keeps it: lines, each but the last with its newline."""
    return text.splitlines(keepends=True)


def _new_id(notebook: dict[str, Any], at: int, source: str) -> str | None:
    """An id for an inserted cell where the format has ids (nbformat 4.5+): from its place and
    source, so a retried attempt writes the same bytes; never one a cell already has."""
    version = (notebook.get("nbformat"), notebook.get("nbformat_minor", 0))
    if not all(isinstance(v, int) for v in version) or version < (4, 5):
        return None
    taken = {c.get("id") for c in notebook["cells"]}
    for salt in range(1000):
        cell_id = hashlib.sha256(f"{at}\0{salt}\0{source}".encode()).hexdigest()[:8]
        if cell_id not in taken:
            return cell_id
    raise ValueError("could not find a free cell id")  # 1,000 8-hex-digit clashes: never


def apply_notebook_edit(notebook: dict[str, Any], inp: NotebookEditInput) -> str:
    """Make the edit in `notebook` (in place); the answer for the model. Raises ValueError with
    the model-facing message when the edit cannot be made."""
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise ValueError("The notebook has no list of cells; it is not a notebook Read can show.")
    at = None if inp.cell_id is None else find_cell(cells, inp.cell_id)
    if inp.cell_id is not None and at is None:
        shown = ", ".join(str(c.get("id") or f"cell-{n}") for n, c in enumerate(cells[:20]))
        raise ValueError(f'Cell with ID "{inp.cell_id}" not found in notebook. Cells: {shown}')
    if inp.edit_mode == "delete":
        assert at is not None
        del cells[at]
        return f"Deleted cell {inp.cell_id}" + _moved(cells, at)
    if inp.edit_mode == "insert":
        place = 0 if at is None else at + 1
        cell: dict[str, Any] = {"cell_type": inp.cell_type}
        if inp.cell_type == "code":
            cell["execution_count"] = None
        if (cell_id := _new_id(notebook, place, inp.new_source)) is not None:
            cell["id"] = cell_id
        cell["metadata"] = {}
        if inp.cell_type == "code":
            cell["outputs"] = []
        cell["source"] = _source(inp.new_source)  # keys in nbformat's (sorted) order
        cells.insert(place, cell)
        return f"Inserted cell {cell_id or f'cell-{place}'} with {inp.new_source}" + _moved(
            cells, place + 1
        )
    assert at is not None
    cell = cells[at]
    cell["source"] = _source(inp.new_source)
    kind = inp.cell_type or cell.get("cell_type", "code")
    if kind == "code":
        # Its outputs were of the old source: stale, so gone, as Jupyter does on an edit.
        cell.update(cell_type="code", execution_count=None, outputs=[])
        cell.pop("attachments", None)  # a markdown cell's; nbformat refuses them on code
    else:
        cell["cell_type"] = kind
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    return f"Updated cell {inp.cell_id} with {inp.new_source}"


def _moved(cells: list[dict[str, Any]], at: int) -> str:
    """For cells named by their place (no ids), the note that those after `at` moved."""
    if all(c.get("id") for c in cells[at:]) or at >= len(cells):
        return ""
    return (
        f"\nCells without ids are named by their place: those from cell-{at} on have moved. "
        "Read the notebook again before editing them by name."
    )


def notebook_edit_sync(req: NotebookEditRequest, ledger: WriteLedger | None = None) -> ToolOutput:
    """NotebookEdit without the activity wrapper (blocking; runs in a thread)."""
    inp, ctx = req.input, req.ctx
    key = normalize_path(ctx.cwd, inp.notebook_path)
    if not key.endswith(".ipynb"):
        return _error("File must be a Jupyter notebook (.ipynb file). For other files, use Edit.")
    try:
        path = resolve_for_write(ctx, inp.notebook_path)
    except WorkspaceEscape as e:
        return _error(str(e))
    if not path.is_file():
        return _error(f"Notebook file does not exist. {key}")
    raw, st = read_bytes(path)
    if ledger and (done := ledger.answer(raw)) is not None:
        return ToolOutput(content=done, stamps={key: stamp_of_bytes(raw, st)})
    if ctx.read_stamp is None:
        return _error(NOT_READ)
    if not is_digest_of(ctx.read_stamp.sha256, raw):
        return _error(MODIFIED)
    try:
        notebook = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return _error(f"{key} is not valid notebook JSON: {e}")
    if not isinstance(notebook, dict):
        return _error(f"{key} is not a notebook: its JSON is not an object.")
    try:
        content = apply_notebook_edit(notebook, inp)
    except ValueError as e:
        return _error(str(e))
    # nbformat's own layout: one-space indent, non-ASCII kept, a final newline; a lone
    # surrogate (it happens in captured outputs) cannot be UTF-8, so then all is escaped.
    try:
        data = (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        data = (json.dumps(notebook, indent=1) + "\n").encode("utf-8")
    if ledger:
        ledger.note(data, content)
    return ToolOutput(content=content, stamps={key: atomic_write(path, data)})


@activity.defn(name="tool.notebook_edit")
async def notebook_edit(req: NotebookEditRequest) -> ToolOutput:
    """Edit one cell of a workspace notebook; see DESCRIPTION for the model-facing contract."""
    return await run_writing(notebook_edit_sync, req, "edit", req.input.notebook_path)
