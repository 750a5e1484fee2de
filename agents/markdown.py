"""Model-written text inside the markdown people read (the Web UI's details)."""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"([\\`*_\[\]()<>#|~!])")


def escape_markdown(text: str) -> str:
    """`text` shown as itself: its markdown characters escaped, so it cannot bold, link,
    open a heading or break a table or list."""
    return _MARKDOWN.sub(r"\\\1", text)
