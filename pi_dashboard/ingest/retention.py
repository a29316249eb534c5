"""Retention: delete what the dashboard no longer keeps, in short transactions.

- Snapshots: pi rewrites model-adaptation.json on every completion, so rows pile up.
  Current state lives in fleet.HostModel, not here, so old snapshots can go: each
  agent's newest one is kept, and every one received within the retention window.
  A pruned snapshot sent again is harmless: entries never roll state back.
- Event and corpus lines older than the retention window (by `ts`), in batches of a
  bounded size, each its own statement and transaction: no long locks.
- Rollups (small) after a much longer window: hourly cells older than the cutoff,
  daily cells once their whole day is older than it.

Dedupe by content needs the raw row, so deleting rows could let a re-sent, very old
line (a rotated file shipped again) be stored and counted a second time. Before any
line is deleted, the table's `RetentionMark` moves forward to the deletion horizon,
and ingest answers "duplicate" with code `expired` for every line older than the
mark instead of storing it. The mark is moved under an exclusive advisory lock that
every ingest transaction holds shared while it checks and inserts, so no batch can
read the old mark and then insert after rows below the new one were deleted.
Lines older than the mark are therefore never stored again, even ones never seen.
"""

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

# pg advisory lock key (bigint) shared by ingest (shared) and retention (exclusive).
MARK_LOCK = 0x7069_5F72_6574_6E00  # "pi_retn\0"
BATCH = 10_000
EVENTS, CORPUS = "events", "corpus"
_TABLES = {EVENTS: "ingest_eventrecord", CORPUS: "ingest_corpusrecord"}


@dataclass
class RetentionResult:
    """Rows deleted per table."""

    snapshots: int = 0
    events: int = 0
    corpus: int = 0
    rollups: int = 0
    daily_rollups: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def retention_apply(
    *, now: datetime | None = None, batch: int = BATCH
) -> RetentionResult:
    """Apply every retention setting once; beat runs it hourly.

    Not one transaction on purpose: each batch commits on its own, so locks stay short.
    """
    now = now or timezone.now()
    result = RetentionResult()
    hours = int(settings.PI_SNAPSHOT_RETENTION_HOURS)
    result.snapshots = snapshots_prune(cutoff=now - timedelta(hours=hours), batch=batch)
    days = int(settings.PI_EVENT_RETENTION_DAYS)
    if days > 0:  # 0 keeps raw lines forever
        horizon = now - timedelta(days=days)
        result.events = lines_expire(table=EVENTS, horizon=horizon, batch=batch)
        result.corpus = lines_expire(table=CORPUS, horizon=horizon, batch=batch)
    rollup_days = int(settings.PI_ROLLUP_RETENTION_DAYS)
    if rollup_days > 0:
        cutoff = now - timedelta(days=rollup_days)
        result.rollups = rollups_expire(cutoff=cutoff, batch=batch)
        result.daily_rollups = daily_rollups_expire(cutoff=cutoff, batch=batch)
    return result


def snapshots_prune(*, cutoff: datetime, batch: int = BATCH) -> int:
    """Delete snapshots received before `cutoff`, except each agent's newest."""
    with connection.cursor() as cursor:
        # Agents whose rows were set NULL (agent deleted) count as one group.
        cursor.execute(
            "SELECT DISTINCT ON (agent_id) id FROM ingest_snapshot "
            "ORDER BY agent_id, received_at DESC, id DESC"
        )
        keep = [row[0] for row in cursor.fetchall()]
    # Snapshots arriving meanwhile are newer than `cutoff`, so `keep` stays right.
    sql = (
        "DELETE FROM ingest_snapshot WHERE id IN (SELECT id FROM ingest_snapshot "
        "WHERE received_at < %s AND NOT (id = ANY(%s)) LIMIT %s)"
    )
    return _delete_batched(sql, [cutoff, keep], batch)


def lines_expire(*, table: str, horizon: datetime, batch: int = BATCH) -> int:
    """Raise the mark of `table` to `horizon`; delete its lines older than the mark."""
    mark = mark_raise(table=table, horizon=horizon)
    name = _TABLES[table]
    sql = (
        f"DELETE FROM {name} WHERE id IN "  # noqa: S608 (name from _TABLES)
        f"(SELECT id FROM {name} WHERE ts < %s LIMIT %s)"
    )
    return _delete_batched(sql, [mark], batch)


def rollups_expire(*, cutoff: datetime, batch: int = BATCH) -> int:
    """Delete hourly rollup cells older than `cutoff`."""
    sql = (
        "DELETE FROM ingest_rollup WHERE id IN "
        "(SELECT id FROM ingest_rollup WHERE bucket < %s LIMIT %s)"
    )
    return _delete_batched(sql, [cutoff], batch)


def daily_rollups_expire(*, cutoff: datetime, batch: int = BATCH) -> int:
    """Delete daily rollup cells of days that ended at or before `cutoff`.

    The day that holds the cutoff is kept whole until it has fully passed (a day row
    is never cut in part). Rows are keyed by the day's start, hence one day back.
    """
    sql = (
        "DELETE FROM ingest_dailyrollup WHERE id IN "
        "(SELECT id FROM ingest_dailyrollup WHERE bucket <= %s LIMIT %s)"
    )
    return _delete_batched(sql, [cutoff - timedelta(days=1)], batch)


def mark_raise(*, table: str, horizon: datetime) -> datetime:
    """Move the table's mark forward (never back); returns the mark now in force.

    The exclusive lock waits for every ingest transaction in flight; ingest batches
    that start after this commit see the new mark.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [MARK_LOCK])
        cursor.execute(
            'INSERT INTO ingest_retentionmark ("table", horizon) VALUES (%s, %s) '
            'ON CONFLICT ("table") DO UPDATE SET horizon = '
            "GREATEST(ingest_retentionmark.horizon, EXCLUDED.horizon) "
            "RETURNING horizon",
            [table, horizon],
        )
        row = cursor.fetchone()
    assert row is not None
    mark: datetime = row[0]
    return mark


def mark_read(*, table: str) -> datetime | None:
    """The table's mark, read under the shared lock (call in the ingest transaction).

    The lock is taken in its own statement first: a statement's snapshot is taken when
    it starts, so reading in the same statement could miss a mark committed while
    the lock was awaited.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock_shared(%s)", [MARK_LOCK])
        cursor.execute(
            'SELECT horizon FROM ingest_retentionmark WHERE "table" = %s', [table]
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _delete_batched(sql: str, params: list[Any], batch: int) -> int:
    """Run a `DELETE … LIMIT batch` until it deletes fewer; each batch commits."""
    total = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [*params, batch])
            deleted: int = cursor.rowcount
        total += deleted
        if deleted < batch:
            return total
