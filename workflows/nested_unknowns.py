"""Unknown fields inside the strict models a client's input carries (the config, a stage, a
task, a definition, hooks), taken out before they fail its decoding.

Those models forbid fields they do not have, so a typo in one (`"stages": [{"modle": ...}]`,
`"config": {"agents": {"max_turn": 3}}`) failed the workflow task's decoding, which the
converter retries as a newer client's input: a run a person started stayed Running for good,
and even a cancel could not reach it. Taken out here by path, the workflow can refuse them at
once when a client started it, naming each one with the field it was probably meant to be
(`workflows/client_input.py`), and leave Outlast's own starts to wait for a newer worker as
before. An unknown field whose value is empty is dropped, as at the top level: that is a
newer release's field at its default.
"""

from __future__ import annotations

import difflib
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel


def strip_unknown(annotation: Any, value: Any, path: str, found: list[str]) -> Any:
    """`value` (JSON data for `annotation`) without the fields its strict models do not
    have; each one is added to `found` as `path.field (did you mean x?)`, but one left at an
    empty value that resembles no field (a newer release's, at its default)."""
    annotation = optional_of(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if not isinstance(value, dict):
            return value
        return _strip_model(annotation, value, path, found)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is list and args and isinstance(value, list):
        return [strip_unknown(args[0], v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {k: strip_unknown(args[1], v, f"{path}.{k}", found) for k, v in value.items()}
    return value


def _strip_model(model: type[BaseModel], value: dict, path: str, found: list[str]) -> dict:
    """A strict model's unknown fields come out; a lenient one (a ClientInput keeps its own,
    another drops them) is only looked through for the strict models inside it."""
    strict = model.model_config.get("extra") == "forbid"
    fields = {}
    for name, field in model.model_fields.items():
        fields[name] = field
        if isinstance(field.alias, str):
            fields[field.alias] = field
    out = {}
    for key, item in value.items():
        field = fields.get(key)
        if field is not None:
            out[key] = strip_unknown(field.annotation, item, f"{path}.{key}", found)
            continue
        if not strict:
            out[key] = item
            continue
        close = difflib.get_close_matches(str(key), list(model.model_fields), n=1)
        # `"local_tool": false` is a typo that would leave `local_tools` on: named, however
        # empty its value.
        if close or not empty(item):
            guess = f" (did you mean {close[0]}?)" if close else ""
            found.append(f"{path}.{key}{guess}")
    return out


def optional_of(annotation: Any) -> Any:
    """`X` for `X | None`; a union of shapes as it is (pydantic picks, and fails as before)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def empty(value: Any) -> bool:
    return value is None or value is False or value in ("", [], {})
