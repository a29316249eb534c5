"""Probe schedules, kept in step with their django-celery-beat PeriodicTask."""

import json
from dataclasses import dataclass

from celery.schedules import crontab
from django.contrib.auth.models import User
from django.db import transaction
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask

from pi_dashboard.audit import audit
from pi_dashboard.lib.errors import Conflict, DomainError
from pi_dashboard.probes.models import ProbeSchedule, ScheduleKind, SelectionKind

SCHEDULED_TASK = "pi_dashboard.probes.tasks.fleet_probe_scheduled"
MIN_INTERVAL_SECONDS = 1
# A year: beyond it a probe schedule means "never"; PostgreSQL's integer ends at 2**31.
MAX_INTERVAL_SECONDS = 366 * 24 * 3600


@dataclass
class ScheduleData:
    name: str
    kind: str = ScheduleKind.INTERVAL
    every_seconds: int | None = 3600
    cron: str = ""
    selection_kind: str = SelectionKind.ALL
    selection_value: str = ""
    jitter_seconds: int = 10
    is_paused: bool = False


def cron_fields(cron: str) -> list[str]:
    fields = cron.split()
    if len(fields) != 5:
        raise DomainError(
            "A cron expression has five fields: minute hour day month weekday.",
            code="invalid_cron",
        )
    minute, hour, dom, month, dow = fields
    try:
        crontab(
            minute=minute,
            hour=hour,
            day_of_month=dom,
            month_of_year=month,
            day_of_week=dow,
        )
    except (ValueError, IndexError) as exc:
        raise DomainError(
            f"Invalid cron expression: {exc}.", code="invalid_cron"
        ) from exc
    return fields


def schedule_validate(data: ScheduleData) -> None:
    if not data.name.strip():
        raise DomainError("Give the schedule a name.", code="invalid_name")
    if data.kind == ScheduleKind.INTERVAL:
        every = data.every_seconds
        if not every or not MIN_INTERVAL_SECONDS <= every <= MAX_INTERVAL_SECONDS:
            raise DomainError(
                "The interval must be between 1 second and "
                f"{MAX_INTERVAL_SECONDS} seconds (a year).",
                code="invalid_interval",
            )
    elif data.kind == ScheduleKind.CRONTAB:
        cron_fields(data.cron)
    else:
        raise DomainError(
            "A schedule is an interval or a cron expression.", code="invalid_kind"
        )
    if data.selection_kind not in SelectionKind.values:
        raise DomainError("Unknown endpoint selection.", code="invalid_selection")
    if data.selection_kind != SelectionKind.ALL and not data.selection_value.strip():
        raise DomainError(
            "Name the tag or provider to select.", code="invalid_selection"
        )
    if not 0 <= data.jitter_seconds <= 3600:
        raise DomainError(
            "Jitter must be between 0 and 3600 seconds.", code="invalid_jitter"
        )


def _sync_periodic_task(schedule: ProbeSchedule) -> None:
    task = schedule.periodic_task or PeriodicTask(name=f"probes.schedule.{schedule.pk}")
    task.task = SCHEDULED_TASK
    task.kwargs = json.dumps({"schedule_id": schedule.pk})
    task.enabled = not schedule.is_paused
    if schedule.kind == ScheduleKind.INTERVAL:
        task.interval, _ = IntervalSchedule.objects.get_or_create(
            every=schedule.every_seconds, period=IntervalSchedule.SECONDS
        )
        task.crontab = None
    else:
        minute, hour, dom, month, dow = cron_fields(schedule.cron)
        task.crontab, _ = CrontabSchedule.objects.get_or_create(
            minute=minute,
            hour=hour,
            day_of_month=dom,
            month_of_year=month,
            day_of_week=dow,
            timezone="UTC",
        )
        task.interval = None
    # save(), not update(): its signal tells a running beat to reload schedules.
    task.save()
    if schedule.periodic_task_id != task.pk:
        schedule.periodic_task = task
        schedule.save(update_fields=["periodic_task"])


def schedule_save(
    *,
    schedule: ProbeSchedule | None,
    data: ScheduleData,
    user: User | None,
    ip_address: str | None = None,
) -> ProbeSchedule:
    """Create (schedule None) or change a schedule and its beat entry (audited)."""
    with audit.audited(
        actor=user, action="probes.schedule.save", ip_address=ip_address, name=data.name
    ) as info:
        saved = _schedule_save(schedule=schedule, data=data, user=user)
        info["schedule"] = saved.pk
    return saved


@transaction.atomic
def _schedule_save(
    *, schedule: ProbeSchedule | None, data: ScheduleData, user: User | None
) -> ProbeSchedule:
    schedule_validate(data)
    clash = ProbeSchedule.objects.filter(name=data.name.strip())
    if schedule is not None:
        clash = clash.exclude(pk=schedule.pk)
    if clash.exists():
        raise Conflict(f"A schedule named {data.name!r} exists.", code="duplicate_name")
    if schedule is None:
        schedule = ProbeSchedule(created_by=user)
    schedule.name = data.name.strip()
    schedule.kind = data.kind
    schedule.every_seconds = (
        data.every_seconds if data.kind == ScheduleKind.INTERVAL else None
    )
    schedule.cron = (
        " ".join(data.cron.split()) if data.kind == ScheduleKind.CRONTAB else ""
    )
    schedule.selection_kind = data.selection_kind
    schedule.selection_value = data.selection_value.strip()
    schedule.jitter_seconds = data.jitter_seconds
    schedule.is_paused = data.is_paused
    schedule.save()
    _sync_periodic_task(schedule)
    return schedule


def schedule_set_paused(
    *,
    schedule: ProbeSchedule,
    is_paused: bool,
    user: User | None = None,
    ip_address: str | None = None,
) -> ProbeSchedule:
    """Pause or resume a schedule and its beat entry (audited)."""
    with (
        audit.audited(
            actor=user,
            action="probes.schedule.pause" if is_paused else "probes.schedule.resume",
            ip_address=ip_address,
            schedule=schedule.pk,
        ),
        transaction.atomic(),
    ):
        schedule.is_paused = is_paused
        schedule.save(update_fields=["is_paused", "updated_at"])
        _sync_periodic_task(schedule)
    return schedule


def schedule_delete(
    *, schedule: ProbeSchedule, user: User | None = None, ip_address: str | None = None
) -> None:
    """Delete a schedule and its beat entry (audited)."""
    with (
        audit.audited(
            actor=user,
            action="probes.schedule.delete",
            ip_address=ip_address,
            schedule=schedule.pk,
            name=schedule.name,
        ),
        transaction.atomic(),
    ):
        if schedule.periodic_task is not None:
            schedule.periodic_task.delete()
        schedule.delete()
