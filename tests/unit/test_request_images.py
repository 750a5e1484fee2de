"""A request carries the newest images that fit; older ones give way to a note."""

from __future__ import annotations

from activities import request_images
from activities.request_images import GAVE_WAY, within_image_limits
from agents.messages import ImageBlock, ImageSource, Message, TextBlock, ToolResultBlock


def image_turn(n: int, size: int = 8) -> list[Message]:
    """One Read of an image: the assistant's call and the user's result."""
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}
    image = ImageBlock(source=ImageSource(media_type="image/png", data="A" * size))
    result = ToolResultBlock(
        tool_use_id=f"toolu_{n}", content=[TextBlock(text=f"[image {n}]"), image]
    )
    return [
        Message.model_validate({"role": "assistant", "content": [use]}),
        Message(role="user", content=[result]),
    ]


def conversation(turns: int, size: int = 8) -> list[Message]:
    messages = [Message.user_text("look")]
    for n in range(turns):
        messages += image_turn(n, size)
    return messages


def shown(messages: list[Message]) -> list[str]:
    """Per image result: its text, and whether its image is still there."""
    out = []
    for m in messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock) and isinstance(b.content, list):
                text, part = b.content
                out.append(f"{text.text}{'+' if isinstance(part, ImageBlock) else '-'}")
    return out


def test_a_conversation_within_the_limits_is_the_very_same_list() -> None:
    messages = conversation(request_images.MAX_REQUEST_IMAGES)
    assert within_image_limits(messages) is messages


def test_past_the_count_the_oldest_images_give_way_and_their_text_stays(monkeypatch) -> None:
    monkeypatch.setattr(request_images, "MAX_REQUEST_IMAGES", 2)
    messages = conversation(4)
    out = within_image_limits(messages)
    assert shown(out) == ["[image 0]-", "[image 1]-", "[image 2]+", "[image 3]+"]
    gave_way = [b.content[1] for m in out[:5] for b in m.content if isinstance(b, ToolResultBlock)]
    assert gave_way == [GAVE_WAY, GAVE_WAY]
    assert out[-2:] == messages[-2:] and out[-1] is messages[-1]
    assert len(out) == len(messages) and [m.role for m in out] == [m.role for m in messages]


def test_past_the_bytes_the_oldest_images_give_way(monkeypatch) -> None:
    monkeypatch.setattr(request_images, "MAX_REQUEST_IMAGE_BYTES", 25)
    out = within_image_limits(conversation(4, size=10))
    assert shown(out) == ["[image 0]-", "[image 1]-", "[image 2]+", "[image 3]+"]


def test_messages_without_images_are_left_alone() -> None:
    messages = [Message.user_text("hi"), Message.user_text("there")]
    assert within_image_limits(messages) is messages
