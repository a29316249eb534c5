"""Reads of the probes app, for pages, the API, and other apps' pages (drift)."""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.lib.errors import NotFound
from pi_dashboard.probes.models import (
    Drift,
    Endpoint,
    FleetProbe,
    ProbeRun,
    ProbeSchedule,
    RunState,
)

TOOL_PROBE_KEYS = (
    "version",
    "status",
    "probedAt",
    "variant",
    "nativeGrade",
    "diagnostic",
)
PROTOCOL_KEYS = ("version", "status", "variant", "calibratedAt")


def pi_order(
    obj: dict[str, Any] | None, keys: tuple[str, ...]
) -> dict[str, Any] | None:
    """PostgreSQL jsonb reorders keys; present them in the order pi writes them."""
    if obj is None:
        return None
    return {k: obj[k] for k in keys if k in obj} | {
        k: v for k, v in obj.items() if k not in keys
    }


# The order `chat.request_body` and `chat.request_headers` write a request in (jsonb
# keeps none): known keys first, in this order, at every depth; others after them.
REQUEST_KEY_ORDER = (
    *("Host", "Content-Type", "Authorization"),
    *("model", "messages", "role", "content", "type", "text", "stream"),
    *("max_tokens", "max_completion_tokens", "temperature", "stream_options"),
    *("include_usage", "tools", "function", "name", "description", "parameters"),
    *("properties", "required", "additionalProperties"),
)


def request_in_order(value: Any) -> Any:
    """A stored request (body or headers) in the order it was sent."""
    if isinstance(value, list):
        return [request_in_order(item) for item in value]
    if not isinstance(value, dict):
        return value
    ordered = pi_order(value, REQUEST_KEY_ORDER) or {}
    return {key: request_in_order(item) for key, item in ordered.items()}


def endpoint_list(*, tag: str = "", provider: str = "") -> QuerySet[Endpoint]:
    qs = Endpoint.objects.all()
    if tag:
        qs = qs.filter(tags__contains=[tag])
    if provider:
        qs = qs.filter(provider=provider)
    return qs


def endpoint_get(*, endpoint_id: int) -> Endpoint:
    endpoint = Endpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None:
        raise NotFound(f"No endpoint {endpoint_id}.")
    return endpoint


def run_list(
    *, endpoint_id: int | None = None, state: str = "", fleet_id: int | None = None
) -> QuerySet[ProbeRun]:
    qs = ProbeRun.objects.select_related("endpoint")
    if endpoint_id is not None:
        qs = qs.filter(endpoint_id=endpoint_id)
    if fleet_id is not None:
        qs = qs.filter(fleet_id=fleet_id)
    if state:
        qs = qs.filter(state=state)
    return qs.order_by("-created_at", "-id")


def run_get(*, run_id: int) -> ProbeRun:
    run = ProbeRun.objects.select_related("endpoint", "fleet").filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"No probe run {run_id}.")
    return run


def schedule_list() -> QuerySet[ProbeSchedule]:
    return ProbeSchedule.objects.select_related(
        "periodic_task", "periodic_task__interval", "periodic_task__crontab"
    )


def schedule_next_run(schedule: ProbeSchedule) -> datetime | None:
    """When beat will next fire it (an estimate, as beat computes it)."""
    task = schedule.periodic_task
    if schedule.is_paused or task is None or not task.enabled:
        return None
    now = timezone.now()
    last = task.last_run_at or task.date_changed or now
    remaining: timedelta = task.schedule.remaining_estimate(last)
    # Rounded to the second: the estimate is computed from `now` with microseconds.
    at = max(now, now + remaining) + timedelta(microseconds=500_000)
    return at.replace(microsecond=0)


def fleet_list() -> QuerySet[FleetProbe]:
    return FleetProbe.objects.select_related("schedule")


def drift_list(*, model_key: str = "") -> QuerySet[Drift]:
    qs = Drift.objects.select_related("endpoint")
    return qs.filter(model_key=model_key) if model_key else qs


def drift_for_models(
    model_keys: Iterable[str], *, limit: int = 5
) -> dict[str, list[Drift]]:
    """Recent drift per pi model key, newest first (model page and fleet overview)."""
    keys = list(model_keys)
    out: dict[str, list[Drift]] = {k: [] for k in keys}
    for item in Drift.objects.filter(model_key__in=keys).select_related("endpoint"):
        if len(out[item.model_key]) < limit:
            out[item.model_key].append(item)
    return out


def latest_verdicts(model_keys: Iterable[str]) -> dict[str, list[Endpoint]]:
    """Per pi model key, its endpoints with their latest server-side verdict.

    `Endpoint.last_verdict/last_grade/last_variant/last_probed_at` hold the verdict.
    """
    out: dict[str, list[Endpoint]] = {k: [] for k in model_keys}
    for endpoint in Endpoint.objects.filter(model_key__in=list(out)).exclude(
        last_verdict=""
    ):
        out[endpoint.model_key].append(endpoint)
    return out


def active_runs(*, endpoint_id: int) -> QuerySet[ProbeRun]:
    return ProbeRun.objects.filter(
        endpoint_id=endpoint_id, state__in=[RunState.PENDING, RunState.RUNNING]
    )
