"""The images (and PDFs) a model request carries: the newest ones, within what the API takes.

Every image a Read showed stays in the conversation and goes with every later request, while
the API refuses a request over 32 MB (or with more than 100 images): a conversation that
kept them all would, a few screenshots on, have every call refused. So the oldest give way,
in the request only (the stored conversation keeps them), each replaced by a note; the text
beside it, which names the image, stays. Which ones give way depends only on the
conversation, and only grows as it grows: its requests stay a prefix of one another but at
the calls where more images give way, and there the prompt cache misses from the oldest of
them on. So they give way ten at a time, not one per new image.
"""

from __future__ import annotations

from agents.messages import DocumentBlock, ImageBlock, Message, TextBlock, ToolResultBlock

MAX_REQUEST_IMAGES = 20
MAX_REQUEST_DOCUMENTS = 2
"""PDFs of at most 20 pages each (a Read's limit), so at most 40 pages: ~1,500-3,000 tokens a
page, 60-120k tokens, what a 200k context can carry beside the conversation (the API's own
limit, 100 pages, would not fit in it)."""
GIVE_WAY_STEP = 10
MAX_REQUEST_IMAGE_BYTES = 20 * 1024**2
"""Base64 characters of all images and PDFs together: 12 MB of the 32 MB stay for everything
else."""
GAVE_WAY = TextBlock(text="[image no longer shown: newer images took its place]")
DOCUMENT_GAVE_WAY = TextBlock(text="[document no longer shown: newer files took its place]")
_SHOWN = (ImageBlock, DocumentBlock)


def within_image_limits(messages: list[Message]) -> list[Message]:
    """`messages` with the oldest images beyond the limits replaced by a note; the very list
    (and its messages) when all fit, so their encoded JSON is reused."""
    # Called on every model call, over the whole conversation (2,000 messages at turn
    # 1,000): a plain loop with class checks, not comprehensions.
    sizes: list[tuple[int, int]] = []  # (message index, base64 length), oldest first
    documents: list[bool] = []
    for i, message in enumerate(messages):
        content = message.content
        if content.__class__ is not list:
            continue
        for block in content:
            if block.__class__ is ToolResultBlock and block.content.__class__ is list:
                for part in block.content:
                    if part.__class__ is ImageBlock or part.__class__ is DocumentBlock:
                        sizes.append((i, len(part.source.data)))
                        documents.append(part.__class__ is DocumentBlock)
    drop = images_to_drop([size for _, size in sizes], documents)
    if not drop:
        return messages
    counts: dict[int, int] = {}
    for i, _ in sizes[:drop]:
        counts[i] = counts.get(i, 0) + 1
    return [_without_images(m, counts[i]) if i in counts else m for i, m in enumerate(messages)]


def images_to_drop(sizes: list[int], documents: list[bool] | None = None) -> int:
    """How many of the oldest images and PDFs (their base64 lengths, oldest first; which of
    them are PDFs) give way."""
    documents = documents or [False] * len(sizes)
    drop = max(
        _prefix_leaving(documents, False, MAX_REQUEST_IMAGES, GIVE_WAY_STEP),
        # A PDF past the second costs one cache miss each, not ten attachments.
        _prefix_leaving(documents, True, MAX_REQUEST_DOCUMENTS, 1),
    )
    kept = sum(sizes[drop:])
    while kept > MAX_REQUEST_IMAGE_BYTES:
        kept -= sizes[drop]
        drop += 1
    return drop


def _prefix_leaving(documents: list[bool], kind: bool, most: int, step: int) -> int:
    """The shortest prefix, a multiple of `step` (or all), whose removal leaves at most `most`
    attachments of `kind` (PDFs: True, images: False)."""
    over = sum(d is kind for d in documents) - most
    if over <= 0:
        return 0
    seen = 0
    for n, d in enumerate(documents, 1):
        seen += d is kind
        if seen == over:
            return min(len(documents), -(-n // step) * step)
    return len(documents)


def _without_images(message: Message, count: int) -> Message:
    """`message` with its first `count` images replaced by the note."""
    blocks = []
    for block in message.content:
        if isinstance(block, ToolResultBlock) and isinstance(block.content, list) and count:
            parts = []
            for part in block.content:
                if isinstance(part, _SHOWN) and count:
                    parts.append(DOCUMENT_GAVE_WAY if isinstance(part, DocumentBlock) else GAVE_WAY)
                    count -= 1
                else:
                    parts.append(part)
            block = block.model_copy(update={"content": parts})
        blocks.append(block)
    return message.model_copy(update={"content": blocks})
