"""A request carries the newest images that fit; older ones give way to a note."""

from __future__ import annotations

from activities import request_images
from activities.request_images import GAVE_WAY, images_to_drop, within_image_limits
from agents.messages import ImageBlock, ImageSource, Message, TextBlock, ToolResultBlock


def image_turn(first: int, images: int = 1, size: int = 8) -> list[Message]:
    """One turn Reading `images` images: the assistant's calls and the user's results."""
    ids = [f"toolu_{first + k}" for k in range(images)]
    uses = [{"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]
    image = ImageBlock(source=ImageSource(media_type="image/png", data="A" * size))
    results = [
        ToolResultBlock(tool_use_id=i, content=[TextBlock(text=f"[image {first + k}]"), image])
        for k, i in enumerate(ids)
    ]
    return [
        Message.model_validate({"role": "assistant", "content": uses}),
        Message(role="user", content=results),
    ]


def conversation(turns: int, size: int = 8) -> list[Message]:
    messages = [Message.user_text("look")]
    for n in range(turns):
        messages += image_turn(n, size=size)
    return messages


def shown(messages: list[Message]) -> str:
    """One character per image result, oldest first: + shown, - gave way."""
    marks = ""
    for m in messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock) and isinstance(b.content, list):
                text, part = b.content
                assert text.text.startswith("[image ")
                marks += "+" if isinstance(part, ImageBlock) else "-"
                assert part == GAVE_WAY or isinstance(part, ImageBlock)
    return marks


def test_a_conversation_within_the_limits_is_the_very_same_list() -> None:
    messages = conversation(request_images.MAX_REQUEST_IMAGES)
    assert within_image_limits(messages) is messages


def test_past_the_count_the_oldest_give_way_ten_at_a_time() -> None:
    assert [images_to_drop([1] * n) for n in (20, 21, 29, 30, 31, 45)] == [0, 10, 10, 10, 20, 30]
    messages = conversation(21)
    out = within_image_limits(messages)
    assert shown(out) == "-" * 10 + "+" * 11
    # Image k's result is message 2k + 2: from the 11th image's on, the very same messages.
    assert all(a is b for a, b in zip(out[21:], messages[21:], strict=True))
    assert [m.role for m in out] == [m.role for m in messages]


def test_as_the_conversation_grows_the_requests_stay_prefixes_between_steps() -> None:
    """The prompt cache holds only if a request starts with the one before it."""
    previous = within_image_limits(conversation(21))
    for turns in range(22, 31):
        now = within_image_limits(conversation(turns))
        assert now[: len(previous)] == previous
        previous = now


def test_past_the_bytes_the_oldest_give_way_one_by_one(monkeypatch) -> None:
    monkeypatch.setattr(request_images, "MAX_REQUEST_IMAGE_BYTES", 25)
    assert shown(within_image_limits(conversation(4, size=10))) == "--++"


def test_one_turn_with_many_images_keeps_its_newest() -> None:
    """Whole messages do not give way: the turn just read keeps what fits."""
    messages = [Message.user_text("look"), *image_turn(0, images=25)]
    assert shown(within_image_limits(messages)) == "-" * 10 + "+" * 15


def test_pdfs_count_on_their_own_and_give_way_with_the_oldest_images() -> None:
    """At most two PDFs (20 pages each): the third sends the oldest away, with the images
    older than it; images past twenty still go ten at a time."""
    pdf, image = True, False
    assert images_to_drop([1] * 2, [pdf] * 2) == 0
    assert images_to_drop([1] * 3, [pdf] * 3) == 1
    assert images_to_drop([1] * 7, [image] * 4 + [pdf] * 3) == 5
    assert images_to_drop([1] * 26, [pdf] + [image] * 25) == 10
    assert images_to_drop([1] * 21, [image] * 21) == images_to_drop([1] * 21) == 10


def test_a_pdf_that_gives_way_leaves_a_note_of_its_own() -> None:
    from activities.request_images import DOCUMENT_GAVE_WAY
    from agents.messages import DocumentBlock, DocumentSource

    def pdf_turn(n: int) -> list[Message]:
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}
        doc = DocumentBlock(source=DocumentSource(data="JVBERi0="))
        result = ToolResultBlock(tool_use_id=f"toolu_{n}", content=[TextBlock(text="[pdf]"), doc])
        return [
            Message.model_validate({"role": "assistant", "content": [use]}),
            Message(role="user", content=[result]),
        ]

    messages = [Message.user_text("read")]
    for n in range(3):
        messages += pdf_turn(n)
    out = within_image_limits(messages)
    parts = [b.content[1] for m in out for b in m.content if isinstance(b, ToolResultBlock)]
    assert parts[0] == DOCUMENT_GAVE_WAY and all(p.type == "document" for p in parts[1:])


def test_messages_without_images_are_left_alone() -> None:
    messages = [Message.user_text("hi"), Message.user_text("there")]
    assert within_image_limits(messages) is messages


def test_a_result_with_images_gets_them_after_its_text(tmp_path) -> None:
    from activities.result_refs import resolve_refs
    from activities.store import LocalBlobStore
    from activities.tools.base import ImageRef

    store = LocalBlobStore(tmp_path)
    refs = tuple(
        ImageRef(ref=store.put(data), media_type="image/png") for data in (b"\x89PNG1", b"\x89PNG2")
    )
    plain = ToolResultBlock(tool_use_id="t2", content="text only")
    message = Message(
        role="user", content=[ToolResultBlock(tool_use_id="t1", content="[2]"), plain]
    )
    out = resolve_refs(message, {}, store, {"t1": refs})
    first, second = out.content
    assert second == plain
    assert [p.type for p in first.content] == ["text", "image", "image"]
    assert first.content[0] == TextBlock(text="[2]")
    assert [p.source.data for p in first.content[1:]] == ["iVBORzE=", "iVBORzI="]


def test_a_long_result_sent_by_reference_keeps_its_text_before_its_images(tmp_path) -> None:
    """A result of 512 characters or more goes to the model activity empty, its text in the
    store: with images too, the text must still come back (a notebook with plots)."""
    from activities.result_refs import resolve_refs
    from activities.store import LocalBlobStore
    from activities.tools.base import ImageRef

    store = LocalBlobStore(tmp_path)
    text = "<cell>" + "x" * 600
    image = ImageRef(ref=store.put(b"\x89PNG"), media_type="image/png")
    message = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="")])
    out = resolve_refs(message, {"t1": store.put(text.encode())}, store, {"t1": (image,)})
    [block] = out.content
    assert block.content[0] == TextBlock(text=text) and block.content[1].type == "image"
