"""A notebook as Read shows it: cells with their outputs, in Claude Code's layout."""

from __future__ import annotations

import json

import pytest

from activities.tools.notebook import MAX_CELL_OUTPUT_CHARS, NotANotebook, render_notebook


def notebook(cells: list, language: str | None = "python") -> bytes:
    meta = {"language_info": {"name": language}} if language else {}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4}).encode()


def test_cells_with_their_types_sources_and_outputs() -> None:
    raw = notebook(
        [
            {"cell_type": "markdown", "id": "intro", "source": ["# Title\n", "Some text"]},
            {
                "cell_type": "code",
                "id": "c1",
                "source": "print(1)\n1 + 1",
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["1\n"]},
                    {
                        "output_type": "execute_result",
                        "data": {"text/plain": ["2"], "image/png": "iVBORw0KGgo="},
                    },
                ],
            },
            {
                "cell_type": "code",
                "source": "1/0",
                "outputs": [
                    {
                        "output_type": "error",
                        "ename": "ZeroDivisionError",
                        "evalue": "division by zero",
                        "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
                    }
                ],
            },
        ]
    )
    assert render_notebook(raw, "/w/n.ipynb") == (
        '<cell id="intro"><cell_type>markdown</cell_type># Title\nSome text</cell id="intro">\n'
        '<cell id="c1">print(1)\n1 + 1</cell id="c1">\n1\n\n2\n[image/png output not shown]\n'
        '<cell id="cell-2">1/0</cell id="cell-2">\n'
        "ZeroDivisionError: division by zero\nZeroDivisionError: division by zero"
    )


def test_a_code_cell_in_another_language_says_which() -> None:
    raw = notebook([{"cell_type": "code", "id": "r", "source": "x <- 1"}], language="R")
    assert (
        render_notebook(raw, "n.ipynb") == '<cell id="r"><language>R</language>x <- 1</cell id="r">'
    )


def test_long_outputs_are_replaced_by_the_command_that_prints_them() -> None:
    big = {"output_type": "stream", "text": "x" * (MAX_CELL_OUTPUT_CHARS + 1)}
    raw = notebook([{"cell_type": "code", "id": "a", "source": "s", "outputs": [big]}])
    out = render_notebook(raw, "/w/n.ipynb")
    assert "xxxx" not in out
    assert "jq '.cells[0].outputs' /w/n.ipynb" in out


def test_a_notebook_without_cells_renders_empty() -> None:
    assert render_notebook(notebook([]), "n.ipynb") == ""


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"{not json", "its JSON does not parse"),
        (b"\xff\xfe", "its JSON does not parse"),
        (b'{"cells": 3}', "it has no list of `cells`"),
        (b"[]", "it has no list of `cells`"),
    ],
)
def test_what_is_not_a_notebook_is_refused_saying_why(raw: bytes, why: str) -> None:
    with pytest.raises(NotANotebook, match=f"n.ipynb is not a valid notebook: {why}"):
        render_notebook(raw, "n.ipynb")


def test_odd_metadata_and_cells_do_not_break_it() -> None:
    raw = json.dumps(
        {"cells": [7, {"source": None}], "metadata": {"language_info": "python"}}
    ).encode()
    assert render_notebook(raw, "n.ipynb") == '<cell id="cell-1"></cell id="cell-1">'
