"""A model request's new tool results filled in from the blob store.

The workflow sends a long result empty, with the blob its tool's activity stored it in, and
an image or a PDF only as a reference: history keeps each once, in the tool's own event (issue 9).
The model activity puts them back before the call, and what it puts back is what the stored
conversation keeps.
"""

from __future__ import annotations

import base64

from activities.store import BlobStore
from activities.tools.base import ImageRef
from agents.messages import (
    DocumentBlock,
    DocumentSource,
    ImageBlock,
    ImageSource,
    Message,
    TextBlock,
    ToolResultBlock,
)


def resolve_refs(
    message: Message,
    refs: dict[str, str],
    store: BlobStore,
    images: dict[str, tuple[ImageRef, ...]] | None = None,
) -> Message:
    """`message` with every tool_result named in `refs` filled in from the store, and every
    one named in `images` made that image."""
    images = images or {}
    if not (refs or images) or isinstance(message.content, str):
        return message

    def filled(b):
        if not isinstance(b, ToolResultBlock):
            return b
        text = b.content
        if b.tool_use_id in refs:  # sent empty: the tool's own activity recorded it
            text = store.get(refs[b.tool_use_id]).decode("utf-8")
        if shown := images.get(b.tool_use_id):
            # The text stays before the images: it names them, and it is what is left when
            # the request has more images than it may carry (request_images.py).
            parts = [TextBlock(text=text), *(_image_block(i, store) for i in shown)]
            return b.model_copy(update={"content": parts})
        return b.model_copy(update={"content": text}) if text is not b.content else b

    return message.model_copy(update={"content": [filled(b) for b in message.content]})


def _image_block(image: ImageRef, store: BlobStore) -> ImageBlock | DocumentBlock:
    data = base64.b64encode(store.get(image.ref)).decode("ascii")
    if image.is_document:
        return DocumentBlock(source=DocumentSource(data=data))
    return ImageBlock(source=ImageSource(media_type=image.media_type, data=data))
