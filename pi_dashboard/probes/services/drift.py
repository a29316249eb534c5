"""Drift: a verdict, grade or calibrated variant that differs from the previous run."""

import logging
from datetime import datetime
from typing import Any

from django.utils import timezone

from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes import crypto, notify
from pi_dashboard.probes.models import (
    Drift,
    NotificationChannel,
    ProbeRun,
    RunState,
)

log = logging.getLogger(__name__)


Outcome = tuple[str, str, str]  # (verdict, nativeGrade, variant)


def drift_record(
    *,
    endpoint_id: int,
    model_key: str,
    run_id: int,
    before: Outcome,
    after: Outcome,
    at: datetime,
) -> Drift | None:
    """Called inside run_finish's transaction with the endpoint's previous latest.

    `before` is what the endpoint showed as latest (empty before its first verdict);
    the previous run itself is looked up only when there is drift to record.
    """
    if not before[0] or before == after:
        return None  # a first verdict is not drift; an equal one neither
    previous = (
        ProbeRun.objects.filter(endpoint_id=endpoint_id, state=RunState.DONE)
        .exclude(pk=run_id)
        .order_by("-finished_at", "-id")
        .first()
    )
    item = Drift.objects.create(
        endpoint_id=endpoint_id,
        run_id=run_id,
        previous_run=previous,
        model_key=model_key,
        previous_verdict=before[0],
        previous_grade=before[1],
        previous_variant=before[2],
        verdict=after[0],
        grade=after[1],
        variant=after[2],
        at=at,
    )
    # Announced by the alerts app's "probe verdict drift" rule (issue 11), through
    # the channels migrated from these; drift_notify stays for direct calls only.
    return item


def drift_event(item: Drift) -> dict[str, Any]:
    def side(verdict: str, grade: str, variant: str) -> dict[str, str]:
        return {"verdict": verdict, "nativeGrade": grade, "variant": variant}

    text = f"{item.model_key} via endpoint {item.endpoint.name}: {item.summary}" + (
        f" (variant {item.variant})" if item.variant else ""
    )
    return {
        "event": "probe.drift",
        "text": text,
        "endpoint": {"id": item.endpoint_id, "name": item.endpoint.name},
        "model": item.model_key,
        "before": side(
            item.previous_verdict, item.previous_grade, item.previous_variant
        ),
        "after": side(item.verdict, item.grade, item.variant),
        "at": item.at.isoformat(),
        "run": item.run_id,
        "url": notify.dashboard_url(f"/probes/runs/{item.run_id}/"),
    }


def channel_deliver(
    *, channel: NotificationChannel, subject: str, event: dict[str, Any]
) -> str:
    """Send through one channel and record the outcome on it; '' when it worked."""
    try:
        target = crypto.decrypt(channel.target_encrypted)
        notify.send(kind=channel.kind, target=target, subject=subject, event=event)
        error = ""
    except DomainError as exc:
        error = exc.detail
    channel.last_error = error
    if not error:
        channel.last_sent_at = timezone.now()
    channel.save(update_fields=["last_error", "last_sent_at"])
    return error


def drift_notify(*, drift_id: int) -> dict[str, str]:
    """Announce one drift on every enabled channel (once: notified_at is the claim)."""
    claimed = Drift.objects.filter(pk=drift_id, notified_at__isnull=True).update(
        notified_at=timezone.now()
    )
    if not claimed:
        return {}
    item = Drift.objects.select_related("endpoint").get(pk=drift_id)
    event = drift_event(item)
    subject = f"[pi-dashboard] probe drift: {item.model_key} {item.summary}"
    errors = {
        channel.name: error
        for channel in NotificationChannel.objects.filter(is_enabled=True)
        if (error := channel_deliver(channel=channel, subject=subject, event=event))
    }
    if errors:
        Drift.objects.filter(pk=drift_id).update(
            notify_error="; ".join(f"{k}: {v}" for k, v in errors.items())
        )
    return errors
