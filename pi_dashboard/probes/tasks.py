"""Celery tasks of the probes app: thin, take ids, call one service each.

Names are explicit and never change: beat's schedules and `probes/dispatch.py` send
these tasks by name.
"""

from typing import Any

import httpx
from celery import Task
from django.db import close_old_connections

from pi_dashboard.celery import app
from pi_dashboard.probes import dispatch, services
from pi_dashboard.probes.models import ProbeSchedule, Trigger

PROBE_MAX_RETRIES = 3


@app.task(
    name=dispatch.PROBE_RUN_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # Only the endpoint being unreachable is worth retrying; a bad reply is a verdict.
    autoretry_for=(httpx.TransportError,),
    max_retries=PROBE_MAX_RETRIES,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    soft_time_limit=900,
    time_limit=930,
)
def probe_run(self: Task, run_id: int, server: list[Any] | None = None) -> str:  # type: ignore[type-arg]
    # Where the worker keeps its database connection between tasks (when
    # CELERY_DB_REUSE_MAX is set), drop it here when too old or broken, as Django
    # does per web request; otherwise Celery already closed it (a no-op).
    close_old_connections()
    final = self.request.retries >= PROBE_MAX_RETRIES
    hard_limit = (self.request.timelimit or (None, None))[0]
    return services.probe_run_execute(
        run_id=run_id,
        final_attempt=final,
        budget_seconds=hard_limit,
        server=(str(server[0]), int(server[1])) if server else None,
    )


@app.task(
    name="pi_dashboard.probes.tasks.fleet_probe_scheduled", bind=True, acks_late=True
)
def fleet_probe_scheduled(self: Task, schedule_id: int) -> str:  # type: ignore[type-arg]
    """Fired by celery-beat; the message id makes a redelivered firing a no-op."""
    schedule = ProbeSchedule.objects.filter(pk=schedule_id).first()
    if schedule is None or schedule.is_paused:
        return "schedule gone or paused"
    fleet = services.fleet_probe_start(
        key=f"schedule:{schedule.pk}:{self.request.id}",
        trigger=Trigger.SCHEDULE,
        selection_kind=schedule.selection_kind,
        selection_value=schedule.selection_value,
        schedule=schedule,
        jitter_seconds=schedule.jitter_seconds,
    )
    return f"fleet probe {fleet.pk}: {fleet.endpoint_count} endpoints"


@app.task(name="pi_dashboard.probes.tasks.runs_sweep", acks_late=True)
def runs_sweep() -> dict[str, int]:
    return services.runs_sweep()
