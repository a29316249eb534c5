"""Charts that fit their data, with markers (issue 12 item 13).

- Buckets: a range's fixed bucket (1 h for 24 h) draws a flat line ending in a spike
  when the data covers only its end. The chart starts at the first bucket with data
  and takes the smallest bucket that keeps it under `ranges.MAX_POINTS`; a custom
  range keeps its end.
- Markers: what changed a model on a host — pi's own events (rule learned, retired,
  removed; verdict or calibration changed) and operators' commands — as labelled
  vertical lines on the time axis.
"""

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Change
from pi_dashboard.front.pages.charts import series_for
from pi_dashboard.front.pages.ranges import TimeRange, bucket_for
from pi_dashboard.ingest.models import Dimension, Rollup

MAX_MARKERS = 50


def first_data_at(
    *,
    dimensions: list[Dimension],
    since: datetime,
    until: datetime,
    model_id: int | None,
    host_id: int | None,
) -> datetime | None:
    rows = Rollup.objects.filter(
        dimension__in=dimensions, bucket__gte=since, bucket__lt=until
    )
    if model_id is not None:
        rows = rows.filter(model_id=model_id)
    if host_id is not None:
        rows = rows.filter(host_id=host_id)
    first = rows.order_by("bucket").values_list("bucket", flat=True).first()
    return first


def fitted_range(
    time_range: TimeRange, first: datetime | None, now: datetime
) -> TimeRange:
    """The range cut to start at `first`, with a bucket that fits what is left."""
    if first is None:
        return time_range
    seconds = (time_range.end_at(now) - first).total_seconds()
    span_hours = max(1, -int(-seconds // 3600))
    hours = min(time_range.hours, span_hours)
    bucket = bucket_for(hours)
    # Whole buckets, so the first one starts on or before the first data.
    hours = -(-hours // bucket) * bucket
    return replace(time_range, hours=hours, bucket_hours=bucket)


def fitted_charts(
    *,
    dimensions: list[Dimension],
    time_range: TimeRange,
    model_id: int,
    host_id: int | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """One chart per dimension on one shared, fitted time axis, with the markers.

    1 query for where the data starts, 1 per chart, 2 for the markers.
    """
    now = now or timezone.now()
    first = first_data_at(
        dimensions=dimensions,
        since=time_range.since(now),
        until=time_range.end_at(now),
        model_id=model_id,
        host_id=host_id,
    )
    fitted = fitted_range(time_range, first, now)
    step = timedelta(hours=fitted.bucket_hours)
    markers = chart_markers(
        since=fitted.since(now) - step,
        until=fitted.end,
        model_id=model_id,
        host_id=host_id,
    )
    return [
        {
            **series_for(
                dimension=dimension,
                time_range=fitted,
                model_id=model_id,
                host_id=host_id,
                now=now,
            ),
            "markers": markers,
        }
        for dimension in dimensions
    ]


def chart_markers(
    *,
    since: datetime,
    until: datetime | None = None,
    model_id: int,
    host_id: int | None = None,
) -> list[dict[str, Any]]:
    """[{"x": unix seconds, "label": str, "by": "pi" | "operator"}], oldest first."""
    changes: QuerySet[Change] = Change.objects.filter(
        host_model__model_id=model_id, at__gte=since
    )
    commands: QuerySet[Command] = Command.objects.filter(
        model_id=model_id, created_at__gte=since
    )
    if until is not None:
        changes = changes.filter(at__lt=until)
        commands = commands.filter(created_at__lt=until)
    if host_id is not None:
        changes = changes.filter(host_model__host_id=host_id)
        commands = commands.filter(host_id=host_id)
    markers = [
        {
            "x": int(c.at.timestamp()),
            "label": f"{c.get_kind_display()}{' ' + c.mode if c.mode else ''}",
            "by": "pi",
        }
        for c in changes.order_by("-at")[:MAX_MARKERS]
    ]
    markers += [
        {
            "x": int(c.created_at.timestamp()),
            "label": f"{c.get_kind_display()} (operator)",
            "by": "operator",
        }
        for c in commands.order_by("-created_at")[:MAX_MARKERS]
    ]
    return sorted(markers, key=lambda m: m["x"])
