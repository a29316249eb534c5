"""Failure counts from rollups: what "failure rate" means on every page.

Failure rate = (tool execution failures, failed or rejected, + validation bounces) per
hour over the selected range, from rollup rows of the `outcome` dimension.
Repaired validations are not failures: pi fixed the call.

A range starts on an hour and runs open-ended to now (lines stamped in the future
included), or, a custom range, up to its `until`. Its totals read hourly rows
(`ingest.Rollup`) from the start to the first UTC midnight, daily rows
(`ingest.DailyRollup`) for the whole days after it, and hourly rows again for the
part of a day before `until` (a custom range cut at now). A day's row is the sum of
its hourly rows (ingest writes both in one transaction), so the numbers are the same
as summing hours, from at most 2 × 23 hourly rows plus one row a day per cell.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection

from pi_dashboard.ingest.models import Dimension

FAILURE_KEYS = ("execution:failed", "execution:rejected", "validation:bounced")
REPAIRED_KEY = "validation:repaired"
FAILURE_RATE_HELP = (
    "Execution failures (failed or rejected) plus validation bounces, per hour over "
    "the selected range. Repaired calls are not counted."
)


@dataclass(frozen=True)
class Counts:
    failures: int = 0
    repaired: int = 0

    def rate(self, hours: int) -> float:
        return self.failures / hours if hours else 0.0


def first_midnight(since: datetime) -> datetime:
    """The first UTC midnight at or after `since`: whole days from here on."""
    start = since.astimezone(UTC)
    midnight = start.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == start else midnight + timedelta(days=1)


_RANGE_ROWS = """
SELECT host_id, model_id, key, count FROM ingest_rollup
WHERE dimension = %s AND key = ANY(%s)
  AND ((bucket >= %s AND bucket < %s) OR (bucket >= %s AND bucket < %s)){where}
UNION ALL
SELECT host_id, model_id, key, count FROM ingest_dailyrollup
WHERE dimension = %s AND key = ANY(%s) AND bucket >= %s{until}{where}
"""


def outcome_rows(
    *,
    since: datetime,
    until: datetime | None = None,
    keys: Iterable[str],
    where: str = "",
    params: Iterable[Any] = (),
) -> tuple[str, list[Any]]:
    """SQL (and its parameters) of the outcome rows counting `keys` in [since, until).

    Rows are (host_id, model_id, key, count), hourly and daily mixed: sum them.
    `where` ("AND …", its `params`) narrows both halves alike.
    """
    keys, extra = list(keys), list(params)
    midnight = first_midnight(since)
    outcome = Dimension.OUTCOME.value
    tail: tuple[datetime | None, datetime | None]
    if until is None:
        head, tail, days = (since, midnight), (None, None), []
    else:
        last_midnight = until.astimezone(UTC).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        head = (since, min(midnight, until))
        tail = (max(last_midnight, midnight), until)
        days = [last_midnight]
    sql = _RANGE_ROWS.format(where=where, until=" AND bucket < %s" if days else "")
    return sql, [
        *(outcome, keys, *head, *tail, *extra),
        *(outcome, keys, midnight, *days, *extra),
    ]


_COUNTS = """
SELECT host_id, model_id, coalesce(sum(count) FILTER (WHERE key = ANY(%s)), 0),
       coalesce(sum(count) FILTER (WHERE key = %s), 0)
FROM ({rows}) r GROUP BY host_id, model_id
"""


def counts_by_cell(
    *,
    since: datetime,
    until: datetime | None = None,
    host_ids: Iterable[int] | None = None,
    model_ids: Iterable[int] | None = None,
) -> dict[tuple[int, int | None], Counts]:
    """Failures and repairs per (host id, model id) in [since, until), in one query."""
    where, params = "", []
    if host_ids is not None:
        where, params = " AND host_id = ANY(%s)", [list(host_ids)]
    if model_ids is not None:
        where += " AND model_id = ANY(%s)"
        params.append(list(model_ids))
    keys = (*FAILURE_KEYS, REPAIRED_KEY)
    rows_sql, rows_params = outcome_rows(
        since=since, until=until, keys=keys, where=where, params=params
    )
    with connection.cursor() as cursor:
        cursor.execute(
            _COUNTS.format(rows=rows_sql),
            [list(FAILURE_KEYS), REPAIRED_KEY, *rows_params],
        )
        return {(h, m): Counts(f, r) for h, m, f, r in cursor.fetchall()}
