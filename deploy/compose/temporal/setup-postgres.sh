#!/bin/sh
# Creates Temporal's two databases and brings their schemas up to this admin-tools version,
# then exits. Safe to run on every `docker compose up`: setup-schema skips a database whose
# schema is already past 0.0, and update-schema applies only the missing versions. That is
# also how a server upgrade gets its schema changes (raise both image tags together).
set -eu

SCHEMA=/etc/temporal/schema/postgresql/v12
sql() {
    temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" -p "$SQL_PORT" -u "$SQL_USER" "$@"
}

for db in temporal temporal_visibility; do
    dir=temporal
    [ "$db" = temporal_visibility ] && dir=visibility
    # PostgreSQL has no CREATE DATABASE IF NOT EXISTS, so a second run fails here; a real
    # fault (wrong password, no server) fails again, loudly, at setup-schema below.
    sql --db "$db" create || echo "database $db already exists"
    sql --db "$db" setup-schema -v 0.0
    sql --db "$db" update-schema -d "$SCHEMA/$dir/versioned"
done
echo "Temporal schemas are up to date"
