"""Fleet probes: fan one probe out to many endpoints, then summarise what changed."""

import math
import random
import uuid
from collections import Counter
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome
from pi_dashboard.celery import app
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes import conf, dispatch
from pi_dashboard.probes.models import (
    TERMINAL_RUN_STATES,
    Drift,
    Endpoint,
    FleetProbe,
    ProbeRun,
    ProbeSchedule,
    RunState,
    SelectionKind,
    Trigger,
)

OPEN_STATES = (RunState.PENDING, RunState.RUNNING)


def endpoints_selected(kind: str, value: str) -> QuerySet[Endpoint]:
    enabled = Endpoint.objects.filter(is_enabled=True)
    if kind == SelectionKind.ALL:
        return enabled
    if kind == SelectionKind.TAG:
        return enabled.filter(tags__contains=[value])
    if kind == SelectionKind.PROVIDER:
        return enabled.filter(provider=value)
    raise DomainError(f"Unknown selection {kind!r}.", code="invalid_selection")


def fleet_probe_start(
    *,
    key: str | None,
    trigger: Trigger,
    selection_kind: str,
    selection_value: str = "",
    schedule: ProbeSchedule | None = None,
    user: User | None = None,
    jitter_seconds: float = 0,
    ip_address: str | None = None,
) -> FleetProbe:
    """Create one run per selected endpoint and send their tasks, spread by jitter.

    `key` makes the start idempotent (the beat message id): starting twice with one
    key returns the first fleet probe and sends nothing more. Audited as
    `probes.fleet_probe` by `user` or, for a schedule's firing, the system.
    """
    detail: dict[str, Any] = {"selection": selection_kind, "value": selection_value}
    if schedule is not None:
        detail["schedule"] = schedule.pk
    with audit.refusals_audited(
        actor=user, action=FLEET_PROBE_ACTION, detail=detail, ip_address=ip_address
    ):
        fleet, created = _fleet_probe_start(
            key=key,
            trigger=trigger,
            selection_kind=selection_kind,
            selection_value=selection_value,
            schedule=schedule,
            user=user,
            jitter_seconds=jitter_seconds,
        )
    if created:
        audit.audit_log(
            actor=user,
            action=FLEET_PROBE_ACTION,
            outcome=AuditOutcome.OK,
            detail={**detail, "fleet": fleet.pk, "trigger": str(trigger)},
            ip_address=ip_address,
        )
    return fleet


FLEET_PROBE_ACTION = "probes.fleet_probe"


@transaction.atomic
def _fleet_probe_start(
    *,
    key: str | None,
    trigger: Trigger,
    selection_kind: str,
    selection_value: str,
    schedule: ProbeSchedule | None,
    user: User | None,
    jitter_seconds: float,
) -> tuple[FleetProbe, bool]:
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
        return fleet, False
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
    spread = fleet_jitter_seconds(
        jitter_seconds, endpoint_count=len(runs), schedule=schedule
    )
    transaction.on_commit(lambda: _send(runs, spread))
    return fleet, True


# Jitter spreads a fan-out's start so a fleet does not hit its providers at one
# instant; it must not stretch the run itself. The spread is therefore at most this
# share of the expected wall time of the fan-out.
JITTER_SHARE = 0.1
# Expected duration of one probe when no earlier run of the schedule tells (one
# completion of a real model is about a second).
EXPECTED_PROBE_SECONDS = 1.0


def fleet_jitter_seconds(
    configured: float, *, endpoint_count: int, schedule: ProbeSchedule | None
) -> float:
    """The jitter actually used: min(configured, 10% of the expected wall time).

    Expected wall time: the previous finished fan-out of the same schedule, scaled to
    this endpoint count; without one, rounds of `cap` probes × one second each.
    Each task then starts after uniform(0, jitter) seconds.
    """
    if configured <= 0 or endpoint_count == 0:
        return 0.0
    cap = conf.max_concurrency()
    expected = math.ceil(endpoint_count / cap) * EXPECTED_PROBE_SECONDS
    last = (
        FleetProbe.objects.filter(
            schedule=schedule, finished_at__isnull=False, endpoint_count__gt=0
        )
        .order_by("-created_at")
        .values_list("created_at", "finished_at", "endpoint_count")
        .first()
        if schedule is not None
        else None
    )
    if last is not None and last[1] is not None:
        wall = (last[1] - last[0]).total_seconds()
        expected = wall * endpoint_count / last[2]
    return min(configured, JITTER_SHARE * expected)


def _send(runs: list[ProbeRun], jitter_seconds: float) -> None:
    # One broker connection for the whole fan-out (one each costs milliseconds).
    with app.producer_or_acquire() as producer:
        for run in runs:
            countdown = random.uniform(0, jitter_seconds) if jitter_seconds else 0  # noqa: S311
            budget = dispatch.run_budget_seconds(run.endpoint)
            dispatch.run_send(
                run.pk,
                budget,
                countdown=countdown,
                producer=producer,
                server=dispatch.server_limit(run.endpoint),
            )


def fleet_complete_if_done(*, fleet_id: int) -> bool:
    """After a run of the fleet ended: when none is left, write the summary (once)."""
    # Unfinished = pending or running: an index range on (fleet, state), cheap enough
    # for every finishing run of a fan-out of hundreds.
    unfinished = ProbeRun.objects.filter(fleet_id=fleet_id, state__in=OPEN_STATES)
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
