"""A Read of an image: the model sees the image, on every later turn too; history never holds
its bytes, only what the Web UI shows for it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from agents.messages import ImageBlock, TextBlock
from tests.support import agent_input, running_workers, scripted_model, start, tool_results

IMAGES = Path(__file__).resolve().parents[1] / "activities" / "images"

SCRIPT = {
    "agents": [
        {
            "name": "main",
            "turns": [
                {
                    "text": "Looking at both.",
                    "tool_use": [
                        {"name": "Read", "input": {"file_path": "{{cwd}}/shot.png"}},
                        {"name": "Read", "input": {"file_path": "{{cwd}}/notes.txt"}},
                    ],
                },
                {"text": "And the list.", "tool_use": {"name": "Glob", "input": {"pattern": "*"}}},
                {"text": "A red image with a blue line."},
            ],
        }
    ]
}


def image_parts(body: dict) -> list[dict]:
    """The image blocks inside the tool results of a request's messages."""
    return [
        part
        for m in body["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list)
        for part in block["content"]
        if part.get("type") == "image"
    ]


async def test_the_model_sees_the_image_and_history_only_its_description(client, git_repo):
    png = (IMAGES / "red.png").read_bytes()
    (git_repo / "shot.png").write_bytes(png)
    (git_repo / "notes.txt").write_text("a note\n")
    with scripted_model(SCRIPT, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(
                client, agent_input("What is in shot.png?", git_repo, queues), queues
            )
            result = await handle.result()
            history = await handle.fetch_history()
    assert result.status == "completed" and result.final_text == "A red image with a blue line."
    data = base64.b64encode(png).decode()
    sent = {"type": "base64", "media_type": "image/png", "data": data}
    # The turn after the Read and the one after that (from the stored conversation).
    assert [p["source"] for p in image_parts(model.log[1]["body"])] == [sent]
    assert [p["source"] for p in image_parts(model.log[2]["body"])] == [sent]
    texts = [b.content for b in tool_results(result) if isinstance(b.content, str)]
    assert any("a note" in t for t in texts)
    described = f"[image: {git_repo / 'shot.png'}, PNG 37x21, {len(png)} bytes]"
    [stored] = [b for b in tool_results(result) if isinstance(b.content, list)]
    assert stored.content == [
        TextBlock(text=described),
        ImageBlock.model_validate({"type": "image", "source": sent}),
    ]
    events = b"".join(e.SerializeToString() for e in history.events)
    assert data.encode() not in events and png not in events
    assert described.encode() in events


async def test_a_long_notebook_with_a_plot_reaches_the_model_whole(client, git_repo):
    """Its text is long enough to go by reference, and its plot goes after it."""
    png = (IMAGES / "red.png").read_bytes()
    plot = {"output_type": "display_data", "data": {"image/png": base64.b64encode(png).decode()}}
    source = "".join(f"print('line {i}')\n" for i in range(60))
    book = {"cells": [{"cell_type": "code", "id": "c", "source": source, "outputs": [plot]}]}
    (git_repo / "plots.ipynb").write_text(json.dumps(book))
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"tool_use": {"name": "Read", "input": {"file_path": "{{cwd}}/plots.ipynb"}}},
                    {"text": "One red plot."},
                ],
            }
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            inp = agent_input("What does plots.ipynb plot?", git_repo, queues)
            result = await (await start(client, inp, queues)).result()
    assert result.status == "completed"
    [block] = [
        b
        for m in model.log[1]["body"]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    text, image = block["content"]
    assert len(source) > 512 and "print('line 59')" in text["text"]
    assert "[image/png output: image 1, shown after the cells]" in text["text"]
    assert image["source"]["data"] == base64.b64encode(png).decode()


async def test_the_model_reads_the_pages_of_a_pdf_asked_for_and_history_only_their_name(
    client, git_repo
):
    from tests.activities.test_read_pdf import make_pdf, widths

    pdf = make_pdf(12)
    (git_repo / "spec.pdf").write_bytes(pdf)
    read = {"name": "Read", "input": {"file_path": "{{cwd}}/spec.pdf"}}
    script = {
        "agents": [
            {
                "name": "main",
                "turns": [
                    {"text": "Reading it.", "tool_use": read},
                    {
                        "text": "Too long; pages.",
                        "tool_use": {**read, "input": {**read["input"], "pages": "2-3"}},
                    },
                    {"text": "Two blank pages."},
                ],
            }
        ]
    }
    with scripted_model(script, log_bodies=True) as model:
        async with running_workers(client) as queues:
            handle = await start(client, agent_input("Read spec.pdf", git_repo, queues), queues)
            result = await handle.result()
            history = await handle.fetch_history()
    assert result.status == "completed"
    refused, shown = tool_results(result)
    assert refused.is_error and "has 12 pages" in refused.content
    described = f"[pdf: {git_repo / 'spec.pdf'}, 12 pages, {len(pdf)} bytes; shown: pages 2-3]"
    assert shown.content[0] == TextBlock(text=described)
    [document] = [
        part
        for m in model.log[2]["body"]["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list)
        for part in block["content"]
        if part.get("type") == "document"
    ]
    assert document["source"]["media_type"] == "application/pdf"
    sent = base64.b64decode(document["source"]["data"])
    assert widths(sent) == [102, 103]
    events = b"".join(e.SerializeToString() for e in history.events)
    assert sent not in events and document["source"]["data"].encode() not in events
    assert described.encode() in events
