"""Reads of shipped records: events and corpus pages (cursor on (ts, id)), rollups."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F, QuerySet, Sum
from django.db.models.functions import TruncDay

from pi_dashboard.ingest.models import CorpusRecord, EventRecord, Rollup
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.cursor import keyset_page


@dataclass
class RecordFilters:
    host: str | None = None
    model: str | None = None
    kind: str | None = None
    outcome: str | None = None
    phase: str | None = None
    failure_code: str | None = None
    tool: str | None = None
    reason: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _filtered(qs: QuerySet[Any], f: RecordFilters) -> QuerySet[Any]:
    exact = {
        "host__pi_id": f.host,
        "model__key": f.model,
        "kind": f.kind,
        "phase": f.phase,
        "failure_code": f.failure_code,
        "tool": f.tool,
    }
    qs = qs.filter(**{k: v for k, v in exact.items() if v is not None})
    if f.since is not None:
        qs = qs.filter(ts__gte=f.since)
    if f.until is not None:
        qs = qs.filter(ts__lt=f.until)
    return qs


def _page(
    qs: QuerySet[Any], *, cursor: str | None, limit: int
) -> tuple[list[Any], str | None]:
    """Newest first; the cursor is the (ts, id) of the last row, so pages are stable."""
    return keyset_page(qs, cursor=cursor or "", limit=limit, at_field="ts")


def event_page(
    *, filters: RecordFilters, cursor: str | None, limit: int
) -> tuple[list[EventRecord], str | None]:
    qs = _filtered(EventRecord.objects.select_related("host", "model"), filters)
    if filters.outcome is not None:
        qs = qs.filter(outcome=filters.outcome)
    return _page(qs, cursor=cursor, limit=limit)


def corpus_page(
    *, filters: RecordFilters, cursor: str | None, limit: int
) -> tuple[list[CorpusRecord], str | None]:
    qs = _filtered(CorpusRecord.objects.select_related("host", "model"), filters)
    if filters.outcome is not None:
        qs = qs.filter(state=filters.outcome)
    if filters.reason is not None:
        qs = qs.filter(reason=filters.reason)
    return _page(qs, cursor=cursor, limit=limit)


def record_faithful(record: EventRecord | CorpusRecord) -> Any:
    """The record exactly as pi wrote it (lone surrogates and NUL included)."""
    return jsonsafe.faithful(record.payload, record.original)


def rollup_series(
    *,
    dimension: str,
    host: str | None = None,
    model: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    bucket: str = "hour",
) -> list[dict[str, Any]]:
    """Counts per time bucket and key, summed over the hosts and models selected."""
    qs = Rollup.objects.filter(dimension=dimension)
    if host is not None:
        qs = qs.filter(host__pi_id=host)
    if model is not None:
        qs = qs.filter(model__key=model)
    if since is not None:
        qs = qs.filter(bucket__gte=since)
    if until is not None:
        qs = qs.filter(bucket__lt=until)
    start = TruncDay("bucket") if bucket == "day" else F("bucket")
    rows = (
        qs.annotate(start=start)
        .values("start", "key")
        .annotate(count=Sum("count"))
        .order_by("start", "key")
    )
    return [
        {"bucket": row["start"], "key": row["key"], "count": row["count"]}
        for row in rows
    ]
