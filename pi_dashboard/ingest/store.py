"""Set-based writes for the ingest hot path: one statement per table per batch.

A batch is written with one `INSERT … SELECT FROM unnest(arrays)`. Most batches hold
only new lines, so that insert is tried first as it is; when a line turns out to be
stored already (a re-send), the unique index refuses the insert, the transaction is
rolled back, and the batch is written again with `ON CONFLICT DO NOTHING RETURNING
content_hash`, so the database tells which lines were new (the conflict check,
measured in tests/bench/ingest, costs 1 to 5 of the database's ~40 CPU ms for each
1,000-line batch). Only new lines bump the rollups, in one upsert of both levels
(hourly, then daily). Rows are sorted by their unique key first, so that two
concurrent batches lock index entries in the same order (no deadlocks).
Call these inside a transaction.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from django.db import connection

from pi_dashboard.ingest.models import Dimension

RollupCell = tuple[datetime, int | None, str, str]  # bucket, model id, dimension, key

_MODEL_INSERT = """
INSERT INTO fleet_model (key, provider, model_id)
SELECT k, p, m FROM unnest(%b::text[], %b::text[], %b::text[]) AS u(k, p, m)
ORDER BY k
ON CONFLICT (key) DO NOTHING
"""

_MODEL_SELECT = "SELECT key, id FROM fleet_model WHERE key = ANY(%b::text[])"

_EVENT_INSERT = """
INSERT INTO ingest_eventrecord (host_id, model_id, content_hash, kind, ts, session_id,
    record_id, tool, outcome, phase, failure_code, is_text_protocol, payload, original,
    received_at)
SELECT %b::bigint, m, h, k, t, s, r, tl, o, p, f, tp, pl::jsonb, og, now()
FROM unnest(%b::bigint[], %b::bytea[], %b::text[], %b::timestamptz[], %b::text[],
    %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::boolean[],
    %b::text[], %b::text[]) AS u(m, h, k, t, s, r, tl, o, p, f, tp, pl, og)
"""

_CORPUS_INSERT = """
INSERT INTO ingest_corpusrecord (host_id, model_id, content_hash, kind, ts, tool, state,
    phase, failure_code, reason, payload, original, received_at)
SELECT %b::bigint, m, h, k, t, tl, st, p, f, r, pl::jsonb, og, now()
FROM unnest(%b::bigint[], %b::bytea[], %b::text[], %b::timestamptz[], %b::text[],
    %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::text[])
    AS u(m, h, k, t, tl, st, p, f, r, pl, og)
"""

# Appended when the batch may hold stored lines: skip them, name the new ones.
_SKIP_STORED = """
ON CONFLICT (host_id, content_hash) DO NOTHING
RETURNING content_hash
"""

_STATS_UPSERT = """
INSERT INTO ingest_sessionstats (host_id, session_id, last_record_sequence, document,
    original, received_at)
SELECT %b::bigint, s, q, d::jsonb, og, now()
FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[]) AS u(s, q, d, og)
ON CONFLICT (host_id, session_id) DO UPDATE
SET last_record_sequence = EXCLUDED.last_record_sequence,
    document = EXCLUDED.document, original = EXCLUDED.original,
    received_at = EXCLUDED.received_at
WHERE ingest_sessionstats.last_record_sequence < EXCLUDED.last_record_sequence
RETURNING session_id
"""

_ROLLUP_UPSERT = """
INSERT INTO ingest_rollup (bucket, host_id, model_id, dimension, key, count)
SELECT b, %b::bigint, m, d, k, c
FROM unnest(%b::timestamptz[], %b::bigint[], %b::text[], %b::text[], %b::bigint[])
    AS u(b, m, d, k, c)
ON CONFLICT (bucket, host_id, model_id, dimension, key)
DO UPDATE SET count = ingest_rollup.count + EXCLUDED.count
"""

# Both levels in one statement (one round trip); hourly rows are locked first.
_ROLLUPS_UPSERT = f"WITH hourly AS ({_ROLLUP_UPSERT})" + _ROLLUP_UPSERT.replace(
    "ingest_rollup", "ingest_dailyrollup"
)


def _execute(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Run `sql` on Django's connection (same transaction) with binary parameters.

    Django's cursor binds client-side, quoting every array element in Python, which
    costs more than the insert itself; psycopg's own cursor sends the arrays binary.
    """
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def columns(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]]:
    """Transpose rows into one list per column (the arrays `unnest` takes)."""
    if not rows:
        return [[] for _ in range(width)]
    return [list(column) for column in zip(*rows, strict=True)]


def models_ensure(keys: Iterable[str]) -> dict[str, int]:
    """Model ids for these `provider/modelId` keys, creating the missing ones."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    found = _models_found(wanted)
    missing = [key for key in wanted if key not in found]
    if missing:
        # Split at the FIRST '/': the model id may hold more slashes
        # (docs/pi-host-data.md §0.3).
        provider = [key.partition("/")[0] for key in missing]
        model_id = [key.partition("/")[2] for key in missing]
        _execute(_MODEL_INSERT, [missing, provider, model_id])
        # A separate statement, so that keys another transaction committed are seen.
        found.update(_models_found(missing))
    return found


def _models_found(keys: list[str]) -> dict[str, int]:
    return dict(_execute(_MODEL_SELECT, [keys]))


class AlreadyStored(Exception):
    """A line of an insert tried as all-new is stored already; nothing was written."""


def events_insert(
    host_id: int, rows: list[tuple[Any, ...]], *, all_new: bool
) -> set[bytes]:
    """Insert event rows (model, hash, kind, ts, …); returns the new hashes.

    With `all_new`, raises AlreadyStored if any row's content is stored already
    (the caller's transaction is then unusable: roll it back).
    """
    return _insert(_EVENT_INSERT, host_id, rows, width=13, all_new=all_new)


def corpus_insert(
    host_id: int, rows: list[tuple[Any, ...]], *, all_new: bool
) -> set[bytes]:
    return _insert(_CORPUS_INSERT, host_id, rows, width=11, all_new=all_new)


def _insert(
    sql: str, host_id: int, rows: list[tuple[Any, ...]], *, width: int, all_new: bool
) -> set[bytes]:
    if not rows:
        return set()
    rows = sorted(rows, key=lambda row: row[1])  # by content hash: stable lock order
    params = [host_id, *columns(rows, width)]
    if not all_new:
        return {bytes(row[0]) for row in _execute(sql + _SKIP_STORED, params)}
    try:
        _execute(sql, params)
    except psycopg.errors.UniqueViolation as exc:
        if not (exc.diag.constraint_name or "").endswith("_unique_content"):
            raise
        raise AlreadyStored from exc
    return {row[1] for row in rows}


def stats_upsert(host_id: int, rows: list[tuple[str, int, str, str]]) -> set[str]:
    """Keep each session's file with the highest lastRecordSequence; returns updated."""
    if not rows:
        return set()
    rows = sorted(rows)
    return {row[0] for row in _execute(_STATS_UPSERT, [host_id, *columns(rows, 4)])}


# Only range-wide totals read the daily level, and they count outcomes (failure
# rate); every other dimension would cost ingest an upsert per batch for nothing.
DAILY_DIMENSIONS = frozenset({Dimension.OUTCOME.value})


def rollups_add(host_id: int, counts: dict[RollupCell, int]) -> None:
    """Add counts to the hourly cells and to their days' cells, in one statement.

    Both levels in the caller's transaction, so a day's row is always the sum of its
    hourly rows (range totals read days, see front.pages.failures).
    """
    if not counts:
        return
    daily: Counter[RollupCell] = Counter()
    for (bucket, model_id, dimension, key), n in counts.items():
        if dimension in DAILY_DIMENSIONS:
            daily[(day_floor(bucket), model_id, dimension, key)] += n
    _execute(
        _ROLLUPS_UPSERT,
        [host_id, *_cell_columns(counts), host_id, *_cell_columns(daily)],
    )


def day_floor(moment: datetime) -> datetime:
    """Midnight UTC of the moment's day: the bucket of its daily rollup row."""
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _cell_columns(counts: dict[RollupCell, int]) -> list[list[Any]]:
    """The cells as unnest arrays, sorted: concurrent batches lock in one order."""
    cells = sorted(
        counts.items(), key=lambda item: (item[0][0], item[0][1] or 0, *item[0][2:])
    )
    # Plain str: psycopg would dump a str Enum (Dimension) by its name, not its value.
    rows = [(b, m, str(d), str(k), count) for (b, m, d, k), count in cells]
    return columns(rows, 5)
