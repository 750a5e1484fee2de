"""Where the Temporal SDK core's own log lines go in an `outlast` process.

By default the core writes them to stderr itself, with ANSI colours, past Python's logging:
while the server restarted, `outlast run` and `attach` printed a gRPC retry warning every
second in the middle of their follow, piped output included (a user test, 2026-12-05). They
go to Python's logging instead, as the logger `temporalio.core`: a follow keeps errors only
(and says in its own words that the server is away, `outlast/progress.py`); `outlast worker`
and `outlast dev`, whose log is for an operator, keep warnings.
"""

from __future__ import annotations

import logging

from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)

CORE_LOGGER = logging.getLogger("temporalio.core")


def forward_core_logs(level: int) -> None:
    """Send the core's lines to CORE_LOGGER, which passes on those at `level` and up. Before
    any client connects: a client keeps the runtime it was made with."""
    forwarding = LogForwardingConfig(logger=CORE_LOGGER)
    telemetry = TelemetryConfig(
        logging=LoggingConfig(
            filter=TelemetryFilter(core_level="WARN", other_level="ERROR"), forwarding=forwarding
        )
    )
    Runtime.set_default(Runtime(telemetry=telemetry), error_if_already_set=False)
    CORE_LOGGER.setLevel(level)
