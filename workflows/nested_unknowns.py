"""Unknown fields inside the models a client's input carries (the config, a stage, a task, a
definition, hooks, the workspace, ...), taken out before they fail its decoding or are
dropped without a word.

The strict ones forbid fields they do not have, so a typo in one (`"stages": [{"modle": ...}]`,
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


def strip_unknown(
    annotation: Any, value: Any, path: str, found: list[str], dropped: list[str] | None = None
) -> Any:
    """`value` (JSON data for `annotation`) without the fields its models do not have; each
    one is added as `path.field (did you mean x?)` to `found`, or, for a lenient model's, to
    `dropped` when it is given, but one left at an empty value that resembles no field (a
    newer release's, at its default)."""
    annotation = optional_of(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if not isinstance(value, dict):
            return value
        return _strip_model(annotation, value, path, found, dropped)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is list and args and isinstance(value, list):
        return [
            strip_unknown(args[0], v, f"{path}[{i}]", found, dropped) for i, v in enumerate(value)
        ]
    if origin is dict and len(args) == 2 and isinstance(value, dict):
        return {
            k: strip_unknown(args[1], v, f"{path}.{k}", found, dropped) for k, v in value.items()
        }
    return value


def _strip_model(
    model: type[BaseModel], value: dict, path: str, found: list[str], dropped: list[str] | None
) -> dict:
    """Each nested model's unknown fields come out, named; a ClientInput's stay in, for its
    own check to name with its path (the converter's `_inputs_unknown`).

    A lenient model (the workspace, the lineage) would drop them without a word: a client's
    `"workspace": {"root": ..., "host_queue": ..., "read_only": true}` ran with write access
    (noticed 2026-12-07). Only a client's start is refused for them
    (`workflows/client_input.py`); what Outlast's own workflows build stays lenient."""
    strict = model.model_config.get("extra") == "forbid"
    named = found if strict or dropped is None else dropped
    fields = {}
    for name, field in model.model_fields.items():
        fields[name] = field
        if isinstance(field.alias, str):
            fields[field.alias] = field
    out = {}
    for key, item in value.items():
        field = fields.get(key)
        if field is not None:
            out[key] = strip_unknown(field.annotation, item, f"{path}.{key}", found, dropped)
            continue
        if _keeps_its_own(model):
            out[key] = item
            continue
        close = difflib.get_close_matches(str(key), list(model.model_fields), n=1)
        # `"local_tool": false` is a typo that would leave `local_tools` on: named, however
        # empty its value.
        if close or not empty(item):
            guess = f" (did you mean {close[0]}?)" if close else ""
            named.append(f"{path}.{key}{guess}")
    return out


def _keeps_its_own(model: type[BaseModel]) -> bool:
    """A ClientInput: it collects its unknown fields itself (`unknown_input_fields`); this
    module cannot import it (contracts import this module)."""
    return "unknown_input_fields" in model.model_fields


def optional_of(annotation: Any) -> Any:
    """`X` for `X | None`; a union of shapes as it is (pydantic picks, and fails as before)."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def empty(value: Any) -> bool:
    return value is None or value is False or value in ("", [], {})
