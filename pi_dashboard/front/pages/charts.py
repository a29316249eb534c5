"""Time series for the charts, from hourly rollups (never from raw events)."""

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Sum
from django.utils import timezone

from pi_dashboard.front.pages.ranges import TimeRange
from pi_dashboard.ingest.models import Dimension, Rollup

# More series than this and a chart stops being readable at a glance: the rest are
# summed into "other".
MAX_SERIES = 8


def bucket_starts(time_range: TimeRange, now: datetime) -> list[datetime]:
    since, end = time_range.since(now), time_range.end_at(now)
    step = timedelta(hours=time_range.bucket_hours)
    starts = []
    t = since
    while t < end:
        starts.append(t)
        t += step
    return starts


def series_for(
    *,
    dimension: Dimension,
    time_range: TimeRange,
    model_id: int | None = None,
    host_id: int | None = None,
    key_prefix: str = "",
    now: datetime | None = None,
) -> dict[str, Any]:
    """{"x": [unix seconds], "series": [{"label", "values", "total"}]} for uPlot.

    One query: rollup sums per (hour, key), regrouped in Python into the range's
    chart buckets. The biggest series come first; the tail is summed into "other".
    """
    now = now or timezone.now()
    since = time_range.since(now)
    qs = Rollup.objects.filter(
        dimension=dimension, bucket__gte=since, bucket__lt=time_range.end_at(now)
    )
    if model_id is not None:
        qs = qs.filter(model_id=model_id)
    if host_id is not None:
        qs = qs.filter(host_id=host_id)
    if key_prefix:
        qs = qs.filter(key__startswith=key_prefix)
    rows = qs.values("bucket", "key").annotate(n=Sum("count")).order_by()
    starts = bucket_starts(time_range, now)
    step = time_range.bucket_hours * 3600
    by_key: dict[str, list[int]] = defaultdict(lambda: [0] * len(starts))
    for r in rows:
        index = int((r["bucket"] - since).total_seconds() // step)
        if 0 <= index < len(starts):
            by_key[r["key"].removeprefix(key_prefix)][index] += r["n"]
    ranked = sorted(by_key.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    head, tail = ranked[:MAX_SERIES], ranked[MAX_SERIES:]
    if tail:
        other = [sum(values[i] for _, values in tail) for i in range(len(starts))]
        head.append((f"other ({len(tail)})", other))
    return {
        "x": [int(s.timestamp()) for s in starts],
        "series": [
            {"label": label, "values": values, "total": sum(values)}
            for label, values in head
        ],
        "bucket_hours": time_range.bucket_hours,
    }
