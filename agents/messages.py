"""Conversation types that cross every boundary: workflow state, activity payloads, queries.

These are ours, not the Anthropic SDK's: the SDK's classes change between releases and carry
fields we never persist, while these are stored in Temporal history and must keep
deserialising for as long as a workflow might replay. Fields are only ever added, with
defaults. `activities/llm.py` converts to and from the wire format.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Frozen):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Frozen):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Frozen):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


INVALID_TOOL_INPUT = "__outlast_invalid_json__"
"""The only key of a tool_use input the model sent as text that is not a JSON object; its value
says why. The agent loop answers such a call with an error and never runs it."""


class ToolUseBlock(_Frozen):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image formats the Messages API takes."""


class ImageSource(_Frozen):
    type: Literal["base64"] = "base64"
    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: str


class ImageBlock(_Frozen):
    """An image inside a tool result (a Read of a PNG). Only activities build one, from the
    blob store: image bytes never pass through a workflow, so never through history."""

    type: Literal["image"] = "image"
    source: ImageSource


class DocumentSource(_Frozen):
    type: Literal["base64"] = "base64"
    media_type: Literal["application/pdf"] = "application/pdf"
    data: str


class DocumentBlock(_Frozen):
    """A PDF inside a tool result (a Read of a PDF); built, like an image, by activities
    only."""

    type: Literal["document"] = "document"
    source: DocumentSource


ToolResultPart = Annotated[TextBlock | ImageBlock | DocumentBlock, Field(discriminator="type")]


class ToolResultBlock(_Frozen):
    """A tool's answer. `is_error` results are how the model learns it must fix its call.

    `content` is text everywhere but in the stored conversation, where a Read of an image (or
    a PDF) has its images (or document) after the text the workflow kept
    (`activities/result_refs.resolve_refs`)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ToolResultPart]
    is_error: bool = False


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock,
    Field(discriminator="type"),
]


class Message(_Frozen):
    role: Literal["user", "assistant"]
    content: list[ContentBlock]

    @classmethod
    def user_text(cls, text: str) -> Message:
        return cls(role="user", content=[TextBlock(text=text)])

    def text(self) -> str:
        """The message's visible text: its text blocks joined, thinking and tools left out."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


def merge_user_messages(messages: list[Message]) -> list[Message]:
    """Consecutive user messages folded into one, as the Messages API reads them: tool
    results and anything queued for the same turn boundary travel as one user turn."""
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1].role == "user" and message.role == "user":
            merged[-1] = Message(role="user", content=[*merged[-1].content, *message.content])
        else:
            merged.append(message)
    return merged


class Usage(_Frozen):
    """Token counts of one or more model calls, as the Messages API reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # Billed per search, apart from tokens (WebSearch's calls); left out of a payload while
    # zero, as in nearly every model turn's recorded result.
    web_search_requests: int = Field(default=0, exclude_if=lambda v: not v)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            web_search_requests=self.web_search_requests + other.web_search_requests,
        )

    @property
    def prompt_tokens(self) -> int:
        """Every input token of the request, whether billed fresh, written or read from cache."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]
