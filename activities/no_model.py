"""The model call of a worker started without model credentials (`outlast worker
--no-model`): one that answers queries, runs workflow tasks and this host's tools, e.g. to
show a finished demo's details in the Web UI.

Such a worker takes no regular activity from its task queue (`no_remote_activities`), so a
model call made as one waits for a worker that can make it. A model call made as a local
activity (`model.local_activity`) runs in the worker that runs the workflow task, so it
comes here: it fails at once, not retryable (a retry would come back here, through the
workflow's sticky queue), and the workflow makes it again as a regular activity
(`workflows/model_call.py`: `auto` always did, `true` since `no-model-falls-back`).
"""

from __future__ import annotations

import socket

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.llm import ModelRequest, ModelResponse

NO_MODEL = "NoModelCredentials"
"""The error type of a model call that reached a `--no-model` worker."""


@activity.defn(name="llm.call_model")
async def call_model_unavailable(req: ModelRequest) -> ModelResponse:
    raise ApplicationError(
        f"the worker on {socket.gethostname()} was started with --no-model, without model "
        "credentials: a worker that has them makes this call",
        type=NO_MODEL,
        non_retryable=True,
    )
