"""`start_task`'s arguments checked for their types before anything is built or sent."""

from __future__ import annotations

from agents.config import OutlastConfig


def check_argument_types(task: object, workflow_id: object, options: dict) -> None:
    """`start_task`'s arguments of a wrong type, refused by name: they failed deep inside as
    an AttributeError (`'NoneType' object has no attribute 'strip'`), or were taken as
    something else (`b"hi"` as the task "hi"; a user test, 2026-12-07).

    Raises:
        TypeError: the first argument of a wrong type."""
    if not isinstance(task, str):
        raise TypeError(f"start_task() task: a string, not {type(task).__name__}")
    if workflow_id is not None and (not isinstance(workflow_id, str) or not workflow_id.strip()):
        raise TypeError(
            f"start_task() workflow_id: a non-empty string or None, not {workflow_id!r}"
        )
    for name in ("teammates", "team_tasks", "forks"):
        given = options.get(name)
        if given is not None and (
            not isinstance(given, list | tuple) or not all(isinstance(g, str) for g in given)
        ):
            raise TypeError(f"start_task() {name}: a list of strings, not {given!r}")
    config = options.get("config")
    if config is not None and not isinstance(config, OutlastConfig | dict):
        raise TypeError(
            f"start_task() config: an OutlastConfig or a dict, not {type(config).__name__}"
        )
