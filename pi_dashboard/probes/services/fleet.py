"""Fleet probes: fan one probe out to many endpoints, then summarise what changed."""

import random
import uuid
from collections import Counter
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes.models import (
    TERMINAL_RUN_STATES,
    Drift,
    Endpoint,
    FleetProbe,
    ProbeRun,
    ProbeSchedule,
    SelectionKind,
    Trigger,
)


def endpoints_selected(kind: str, value: str) -> QuerySet[Endpoint]:
    enabled = Endpoint.objects.filter(is_enabled=True)
    if kind == SelectionKind.ALL:
        return enabled
    if kind == SelectionKind.TAG:
        return enabled.filter(tags__contains=[value])
    if kind == SelectionKind.PROVIDER:
        return enabled.filter(provider=value)
    raise DomainError(f"Unknown selection {kind!r}.", code="invalid_selection")


@transaction.atomic
def fleet_probe_start(
    *,
    key: str | None,
    trigger: Trigger,
    selection_kind: str,
    selection_value: str = "",
    schedule: ProbeSchedule | None = None,
    user: User | None = None,
    jitter_seconds: float = 0,
) -> FleetProbe:
    """Create one run per selected endpoint and send their tasks, spread by jitter.

    `key` makes the start idempotent (the beat message id): starting twice with one
    key returns the first fleet probe and sends nothing more.
    """
    fleet, created = FleetProbe.objects.get_or_create(
        key=key or f"manual:{uuid.uuid4().hex}",
        defaults={
            "schedule": schedule,
            "trigger": trigger,
            "selection": {"kind": selection_kind, "value": selection_value},
            "created_by": user,
        },
    )
    if not created:
        return fleet
    endpoints = list(endpoints_selected(selection_kind, selection_value))
    runs = ProbeRun.objects.bulk_create(
        ProbeRun(endpoint=e, slot=f"fleet:{fleet.pk}", fleet=fleet, trigger=trigger)
        for e in endpoints
    )
    fleet.endpoint_count = len(runs)
    if not runs:
        fleet.finished_at = timezone.now()
        fleet.summary = {"counts": {}, "changed": [], "note": "No endpoint matched."}
    fleet.save()
    by_id = {e.pk: e for e in endpoints}
    for run in runs:
        run.endpoint = by_id[run.endpoint_id]
    transaction.on_commit(lambda: _send(runs, jitter_seconds))
    return fleet


def _send(runs: list[ProbeRun], jitter_seconds: float) -> None:
    from pi_dashboard.celery import app
    from pi_dashboard.probes.services.runs import run_enqueue

    # One broker connection for the whole fan-out (one each costs milliseconds).
    with app.producer_or_acquire() as producer:
        for run in runs:
            countdown = random.uniform(0, jitter_seconds) if jitter_seconds else 0  # noqa: S311
            run_enqueue(run, countdown=countdown, producer=producer)


def fleet_complete_if_done(*, fleet_id: int) -> bool:
    """After a run of the fleet ended: when none is left, write the summary (once)."""
    unfinished = ProbeRun.objects.filter(fleet_id=fleet_id).exclude(
        state__in=TERMINAL_RUN_STATES
    )
    if unfinished.exists():
        return False  # cheap check first, without the lock
    with transaction.atomic():
        return _complete_locked(fleet_id)


def _complete_locked(fleet_id: int) -> bool:
    fleet = FleetProbe.objects.select_for_update().get(pk=fleet_id)
    if fleet.finished_at is not None:
        return False
    if fleet.runs.exclude(state__in=TERMINAL_RUN_STATES).exists():
        return False
    fleet.summary = fleet_summary(fleet)
    fleet.finished_at = timezone.now()
    fleet.save(update_fields=["summary", "finished_at"])
    return True


def fleet_summary(fleet: FleetProbe) -> dict[str, Any]:
    runs = list(fleet.runs.values_list("state", "verdict"))
    counts = Counter(verdict or state for state, verdict in runs)
    changed = [
        {
            "endpoint": d.endpoint.name,
            "endpoint_id": d.endpoint_id,
            "model": d.model_key,
            "before": {
                "verdict": d.previous_verdict,
                "nativeGrade": d.previous_grade,
                "variant": d.previous_variant,
            },
            "after": {
                "verdict": d.verdict,
                "nativeGrade": d.grade,
                "variant": d.variant,
            },
        }
        for d in Drift.objects.filter(run__fleet=fleet).select_related("endpoint")
    ]
    return {"counts": dict(counts), "changed": changed}
