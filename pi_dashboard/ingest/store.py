"""Set-based writes for the ingest hot path: one statement per table per batch.

A batch is written with `INSERT … SELECT FROM unnest(arrays) ON CONFLICT DO NOTHING
RETURNING content_hash`, so the database tells which lines were new; only those bump
the rollups, in one aggregated upsert. Rows are sorted by their unique key first, so
that two concurrent batches lock index entries in the same order (no deadlocks).
Call these inside a transaction.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection

from pi_dashboard.fleet.models import Model

RollupCell = tuple[datetime, int | None, str, str]  # bucket, model id, dimension, key

_MODEL_INSERT = """
INSERT INTO fleet_model (key, provider, model_id)
SELECT k, p, m FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(k, p, m)
ORDER BY k
ON CONFLICT (key) DO NOTHING
"""

_EVENT_INSERT = """
INSERT INTO ingest_eventrecord (host_id, model_id, content_hash, kind, ts, session_id,
    record_id, tool, outcome, phase, failure_code, is_text_protocol, payload, original,
    received_at)
SELECT %s, m, h, k, t, s, r, tl, o, p, f, tp, pl::jsonb, og, now()
FROM unnest(%s::bigint[], %s::bytea[], %s::text[], %s::timestamptz[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::boolean[],
    %s::text[], %s::text[]) AS u(m, h, k, t, s, r, tl, o, p, f, tp, pl, og)
ON CONFLICT (host_id, content_hash) DO NOTHING
RETURNING content_hash
"""

_CORPUS_INSERT = """
INSERT INTO ingest_corpusrecord (host_id, model_id, content_hash, kind, ts, tool, state,
    phase, failure_code, reason, payload, original, received_at)
SELECT %s, m, h, k, t, tl, st, p, f, r, pl::jsonb, og, now()
FROM unnest(%s::bigint[], %s::bytea[], %s::text[], %s::timestamptz[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])
    AS u(m, h, k, t, tl, st, p, f, r, pl, og)
ON CONFLICT (host_id, content_hash) DO NOTHING
RETURNING content_hash
"""

_STATS_UPSERT = """
INSERT INTO ingest_sessionstats (host_id, session_id, last_record_sequence, document,
    original, received_at)
SELECT %s, s, q, d::jsonb, og, now()
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[]) AS u(s, q, d, og)
ON CONFLICT (host_id, session_id) DO UPDATE
SET last_record_sequence = EXCLUDED.last_record_sequence,
    document = EXCLUDED.document, original = EXCLUDED.original,
    received_at = EXCLUDED.received_at
WHERE ingest_sessionstats.last_record_sequence < EXCLUDED.last_record_sequence
RETURNING session_id
"""

_ROLLUP_UPSERT = """
INSERT INTO ingest_rollup (bucket, host_id, model_id, dimension, key, count)
SELECT b, %s, m, d, k, c
FROM unnest(%s::timestamptz[], %s::bigint[], %s::text[], %s::text[], %s::bigint[])
    AS u(b, m, d, k, c)
ON CONFLICT (bucket, host_id, model_id, dimension, key)
DO UPDATE SET count = ingest_rollup.count + EXCLUDED.count
"""


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
    # Split at the FIRST '/': the model id may hold more slashes (reference §0.3).
    provider = [key.partition("/")[0] for key in wanted]
    model_id = [key.partition("/")[2] for key in wanted]
    with connection.cursor() as cursor:
        cursor.execute(_MODEL_INSERT, [wanted, provider, model_id])
    # A separate statement, so that keys another transaction just committed are seen.
    found = Model.objects.filter(key__in=wanted).values_list("key", "id")
    return dict(found)


def events_insert(host_id: int, rows: list[tuple[Any, ...]]) -> set[bytes]:
    """Insert event rows (model, hash, kind, ts, …); returns the new hashes."""
    return _insert_returning(_EVENT_INSERT, host_id, rows, width=13)


def corpus_insert(host_id: int, rows: list[tuple[Any, ...]]) -> set[bytes]:
    return _insert_returning(_CORPUS_INSERT, host_id, rows, width=11)


def _insert_returning(
    sql: str, host_id: int, rows: list[tuple[Any, ...]], *, width: int
) -> set[bytes]:
    if not rows:
        return set()
    rows = sorted(rows, key=lambda row: row[1])  # by content hash: stable lock order
    with connection.cursor() as cursor:
        cursor.execute(sql, [host_id, *columns(rows, width)])
        return {bytes(row[0]) for row in cursor.fetchall()}


def stats_upsert(host_id: int, rows: list[tuple[str, int, str, str]]) -> set[str]:
    """Keep each session's file with the highest lastRecordSequence; returns updated."""
    if not rows:
        return set()
    rows = sorted(rows)
    with connection.cursor() as cursor:
        cursor.execute(_STATS_UPSERT, [host_id, *columns(rows, 4)])
        return {row[0] for row in cursor.fetchall()}


def rollups_add(host_id: int, counts: dict[RollupCell, int]) -> None:
    """Add counts to hourly rollup cells in one upsert (sorted: stable lock order)."""
    if not counts:
        return
    cells = sorted(
        counts.items(), key=lambda item: (item[0][0], item[0][1] or 0, *item[0][2:])
    )
    # Plain str: psycopg would dump a str Enum (Dimension) by its name, not its value.
    rows = [(b, m, str(d), str(k), count) for (b, m, d, k), count in cells]
    with connection.cursor() as cursor:
        cursor.execute(_ROLLUP_UPSERT, [host_id, *columns(rows, 5)])
