"""The images a model request carries: the newest ones, within what the API takes.

Every image a Read showed stays in the conversation and goes with every later request, while
the API refuses a request over 32 MB (or with more than 100 images): a conversation that
kept them all would, a few screenshots on, have every call refused. So the oldest give way,
in the request only (the stored conversation keeps them); the text beside each image, which
names it, stays in its place. Which ones give way depends only on the conversation, so a
conversation's requests drop them in the same order and the prompt cache misses once per
image dropped.
"""

from __future__ import annotations

from agents.messages import ImageBlock, Message, TextBlock, ToolResultBlock

MAX_REQUEST_IMAGES = 20
MAX_REQUEST_IMAGE_BYTES = 20 * 1024**2
"""Base64 characters of all images together: 12 MB of the 32 MB stay for everything else."""
GAVE_WAY = TextBlock(text="[image no longer shown: newer images took its place]")


def _images(block: object) -> list[ImageBlock]:
    if isinstance(block, ToolResultBlock) and isinstance(block.content, list):
        return [p for p in block.content if isinstance(p, ImageBlock)]
    return []


def within_image_limits(messages: list[Message]) -> list[Message]:
    """`messages` with the images beyond the newest that fit replaced by a note; the very
    list (and its blocks) when all fit, so their encoded JSON is reused."""
    # Called on every model call, over the whole conversation (2,000 messages at turn
    # 1,000): a plain loop with class checks, not comprehensions.
    count = size = 0
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].content
        if content.__class__ is not list:
            continue
        for block in content:
            if block.__class__ is ToolResultBlock and block.content.__class__ is list:
                for part in block.content:
                    if part.__class__ is ImageBlock:
                        count += 1
                        size += len(part.source.data)
        if count > MAX_REQUEST_IMAGES or size > MAX_REQUEST_IMAGE_BYTES:
            # Whole messages give way: one turn's results stay together.
            return [_without_images(m) for m in messages[: i + 1]] + messages[i + 1 :]
    return messages


def _without_images(message: Message) -> Message:
    if isinstance(message.content, str) or not any(_images(b) for b in message.content):
        return message
    blocks = [
        b.model_copy(
            update={"content": [GAVE_WAY if isinstance(p, ImageBlock) else p for p in b.content]}
        )
        if _images(b)
        else b
        for b in message.content
    ]
    return message.model_copy(update={"content": blocks})
