"""Host × model detail: probe history and recent events (cursor-paginated)."""

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from pi_dashboard.fleet.models import Change, ChangeKind, HostModel
from pi_dashboard.ingest.models import Dimension, EventRecord, Rollup
from pi_dashboard.lib.cursor import cursor_decode, cursor_encode

EVENTS_PER_PAGE = 50
PROBE_HISTORY_KINDS = (
    ChangeKind.VERDICT_CHANGED,
    ChangeKind.GRADE_CHANGED,
    ChangeKind.CALIBRATION_SET,
    ChangeKind.CALIBRATION_REPLACED,
    ChangeKind.CALIBRATION_RESET,
)


def probe_history(host_model: HostModel, limit: int = 50) -> list[Change]:
    """Verdict, grade and calibration changes of this host × model, newest first."""
    return list(
        Change.objects.filter(host_model=host_model, kind__in=PROBE_HISTORY_KINDS)[
            :limit
        ]
    )


def rule_history(host_model: HostModel, limit: int = 50) -> list[Change]:
    kinds = [k for k in ChangeKind.values if k not in PROBE_HISTORY_KINDS]
    return list(Change.objects.filter(host_model=host_model, kind__in=kinds)[:limit])


@dataclass
class EventPage:
    events: list[EventRecord]
    next_cursor: str | None
    bad_cursor: bool


def events_page(
    *, host_model: HostModel, filters: dict[str, Any], cursor: str = ""
) -> EventPage:
    """Newest events first, keyset-paginated on (ts, id) (index event_host_model_ts)."""
    qs: QuerySet[EventRecord] = EventRecord.objects.filter(
        host_id=host_model.host_id, model_id=host_model.model_id
    ).defer("original")
    for name in ("kind", "outcome", "phase", "failure_code", "tool"):
        if filters.get(name):
            qs = qs.filter(**{name: filters[name]})
    after = cursor_decode(cursor) if cursor else None
    if after is not None:
        ts, pk = after
        qs = qs.filter(Q(ts__lt=ts) | Q(ts=ts, id__lt=pk))
    rows = list(qs.order_by("-ts", "-id")[: EVENTS_PER_PAGE + 1])
    more = len(rows) > EVENTS_PER_PAGE
    rows = rows[:EVENTS_PER_PAGE]
    return EventPage(
        events=rows,
        next_cursor=cursor_encode(rows[-1].ts, rows[-1].pk) if more else None,
        bad_cursor=bool(cursor) and after is None,
    )


def event_filter_options(host_model: HostModel) -> dict[str, list[str]]:
    """Values seen for this host × model, for the filter dropdowns (from rollups)."""
    rows = (
        Rollup.objects.filter(
            host_id=host_model.host_id,
            model_id=host_model.model_id,
            dimension__in=[Dimension.PHASE, Dimension.FAILURE_CODE, Dimension.TOOL],
        )
        .values_list("dimension", "key")
        .distinct()
    )
    options: dict[str, list[str]] = {"phase": [], "failure_code": [], "tool": []}
    for dimension, key in rows:
        options[dimension].append(key)
    return {k: sorted(v) for k, v in options.items()}
