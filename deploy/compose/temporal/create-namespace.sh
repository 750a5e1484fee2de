#!/bin/sh
# Registers the Temporal namespace Outlast uses ($TEMPORAL_NAMESPACE) once the frontend
# answers, then exits. The `temporal` CLI reads TEMPORAL_ADDRESS from the environment.
set -eu

tries=0
until temporal operator cluster health >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 30 ]; then
        echo "Temporal at $TEMPORAL_ADDRESS did not become healthy" >&2
        exit 1
    fi
    sleep 2
done

if temporal operator namespace describe -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
    echo "namespace $TEMPORAL_NAMESPACE exists"
else
    temporal operator namespace create -n "$TEMPORAL_NAMESPACE"
fi
