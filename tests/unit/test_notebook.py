"""A notebook as Read shows it: cells with their outputs, in Claude Code's layout."""

from __future__ import annotations

import base64
import json

import pytest

from activities.tools.notebook import (
    MAX_CELL_OUTPUT_CHARS,
    MAX_IMAGES,
    NotANotebook,
    render_notebook,
)


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
    rendered = render_notebook(raw, "/w/n.ipynb")
    assert rendered.images == [base64.b64decode("iVBORw0KGgo=")]
    assert rendered.text == (
        '<cell id="intro"><cell_type>markdown</cell_type># Title\nSome text</cell id="intro">\n'
        '<cell id="c1">print(1)\n1 + 1</cell id="c1">\n1\n\n2\n'
        "[image/png output: image 1, shown after the cells]\n"
        '<cell id="cell-2">1/0</cell id="cell-2">\n'
        "ZeroDivisionError: division by zero\nZeroDivisionError: division by zero"
    )


def test_a_code_cell_in_another_language_says_which() -> None:
    raw = notebook([{"cell_type": "code", "id": "r", "source": "x <- 1"}], language="R")
    assert (
        render_notebook(raw, "n.ipynb").text
        == '<cell id="r"><language>R</language>x <- 1</cell id="r">'
    )


def test_long_outputs_are_replaced_by_the_command_that_prints_them() -> None:
    big = {"output_type": "stream", "text": "x" * (MAX_CELL_OUTPUT_CHARS + 1)}
    raw = notebook([{"cell_type": "code", "id": "a", "source": "s", "outputs": [big]}])
    out = render_notebook(raw, "/w/n.ipynb").text
    assert "xxxx" not in out
    assert "jq '.cells[0].outputs' /w/n.ipynb" in out


def test_a_notebook_without_cells_renders_empty() -> None:
    assert render_notebook(notebook([]), "n.ipynb").text == ""


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
    assert render_notebook(raw, "n.ipynb").text == '<cell id="cell-1"></cell id="cell-1">'


def plot(mime: str, data: object) -> dict:
    return {"output_type": "display_data", "data": {mime: data}}


def test_images_past_the_first_ten_or_not_png_or_jpeg_or_not_base64_are_only_named() -> None:
    outputs = [
        plot("image/svg+xml", "<svg/>"),
        plot("image/jpeg", "not base64!"),
        *[plot("image/png", ["aVZC", "T1J3\n"])] * 11,
    ]
    rendered = render_notebook(notebook([{"id": "p", "source": "", "outputs": outputs}]), "n")
    assert rendered.images == [b"iVBORw"] * MAX_IMAGES  # lines joined, as nbformat splits them
    assert rendered.text.count("shown after the cells") == MAX_IMAGES
    assert "[image/png output not shown: a Read shows 10 images of a notebook]" in rendered.text
    assert "[image/svg+xml output not shown]" in rendered.text
    assert "[image/jpeg output not shown: its data is not base64]" in rendered.text


def test_a_cell_whose_outputs_are_too_long_shows_none_of_its_images() -> None:
    big = {"output_type": "stream", "text": "x" * MAX_CELL_OUTPUT_CHARS}
    cells = [
        {"id": "a", "source": "", "outputs": [plot("image/png", "aVZC"), big]},
        {"id": "b", "source": "", "outputs": [plot("image/png", "T1J3")]},
    ]
    rendered = render_notebook(notebook(cells), "n")
    assert rendered.images == [b"ORw"]
    assert "image 1, shown" in rendered.text and "image 2" not in rendered.text


def test_a_cell_of_the_wrong_shape_is_not_a_notebook_rather_than_a_crash() -> None:
    """An output whose `data` is a list, a source that is a number: the Read says the file
    is not a valid notebook (the activity failed three times, then "Read could not run")."""
    listed = notebook(
        [{"cell_type": "code", "source": "x", "outputs": [
            {"output_type": "display_data", "data": ["image/png"]}]}]
    )  # fmt: skip
    with pytest.raises(NotANotebook, match="a cell does not have the notebook format's shape"):
        render_notebook(listed, "nb.ipynb")
