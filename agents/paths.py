"""Lexical path normalisation shared by workflows and activities.

The workflow keys an agent's read-file state by this form; activities stamp files under the
same key. It never touches the filesystem (workflow code may not), so symlinks are resolved
only inside activities, where the workspace boundary is enforced.
"""

from __future__ import annotations

import posixpath


def normalize_path(cwd: str, path: str) -> str:
    """`path` made absolute against `cwd`, with `.` and `..` folded lexically."""
    return posixpath.normpath(posixpath.join(cwd, path))
