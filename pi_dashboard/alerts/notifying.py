"""Notifications: queue one per channel of a rule, deliver each through Apprise.

A message is queued in the evaluation's transaction and sent after commit by one
Celery task per channel, so a slow or broken channel never holds up evaluation or the
other channels; its failure is stored on the notification and on the channel.
Silences and maintenance windows suppress delivery only: the alert's state moves on
and the suppressed notification is kept, visibly, as `suppressed`.
"""

import logging
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import apprise
from django.db import transaction
from django.utils import timezone

from pi_dashboard.alerts.models import (
    Alert,
    Channel,
    MaintenanceWindow,
    Notification,
    NotificationKind,
    NotificationState,
    Silence,
)
from pi_dashboard.alerts.scopes import Subject, scope_covers
from pi_dashboard.audit import audit
from pi_dashboard.celery import send_by_name
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes import crypto

log = logging.getLogger(__name__)


def dashboard_url(path: str) -> str:
    """An absolute link to the dashboard when PI_DASHBOARD_URL says where it is."""
    base = os.environ.get("PI_DASHBOARD_URL", "").rstrip("/")
    return f"{base}{path}" if base else path


def url_hint(url: str) -> str:
    """What lists show of an Apprise URL: scheme and host, never credentials."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}/…"


def url_check(url: str) -> None:
    if not apprise.Apprise().add(url):
        raise DomainError(
            "Apprise does not understand this URL (see the Apprise wiki for the "
            "URL of each service, e.g. json://host/path or mailto://user@host).",
            code="invalid_url",
        )


def maintenance_active(window: MaintenanceWindow, now: datetime) -> bool:
    if window.starts_at and window.ends_at:
        return window.starts_at <= now < window.ends_at
    if window.start_time is None or not window.weekdays or not window.duration_minutes:
        return False
    # Today's and yesterday's start: a window may run past midnight.
    for days_back in (0, 1):
        day = (now - timedelta(days=days_back)).date()
        if day.isoweekday() not in window.weekdays:
            continue
        start = datetime.combine(day, window.start_time, tzinfo=now.tzinfo)
        if start <= now < start + timedelta(minutes=window.duration_minutes):
            return True
    return False


class Suppressions:
    """Active silences and maintenance windows, read once (per cycle)."""

    def __init__(self, now: datetime) -> None:
        self.silences = list(
            Silence.objects.filter(starts_at__lte=now, ends_at__gt=now)
        )
        self.windows = [
            w for w in MaintenanceWindow.objects.all() if maintenance_active(w, now)
        ]

    def why(self, alert: Alert, subject: Subject) -> str:
        """Why delivery is suppressed now ('' when it is not)."""
        for s in self.silences:
            if s.rule_id in (None, alert.rule_id) and scope_covers(
                s.scope_kind, s.scope_value, subject
            ):
                return f"silenced until {s.ends_at:%Y-%m-%d %H:%M} UTC"
        for w in self.windows:
            if scope_covers(w.scope_kind, w.scope_value, subject):
                return f"maintenance: {w.name}"
        return ""


def message(alert: Alert, kind: str) -> tuple[str, str]:
    rule = alert.rule
    heads: dict[str, str] = {
        NotificationKind.FIRING: "FIRING",
        NotificationKind.REMINDER: "STILL FIRING",
        NotificationKind.RESOLVED: "RESOLVED",
    }
    head = heads.get(kind, kind.upper())
    urgent = "URGENT " if rule.is_urgent and kind != NotificationKind.RESOLVED else ""
    title = f"[pi-dashboard] {urgent}{head}: {rule.name}: {alert.label}"[:500]
    body = (
        f"{rule.get_signal_display()} = {alert.value:g} "
        f"(threshold {rule.threshold:g}, window {rule.window_minutes} min)\n"
        f"Evidence: {dashboard_url(alert.evidence_url)}"
    )
    return title, body


@dataclass(frozen=True)
class Outgoing:
    """One alert's message of one kind to the enabled channels of its rule."""

    alert: Alert
    kind: str
    subject: Subject
    channels: list[Channel]


@transaction.atomic
def notifications_queue(
    *,
    alert: Alert,
    kind: str,
    subject: Subject,
    suppressions: Suppressions | None = None,
    channels: list[Channel] | None = None,
) -> list[int]:
    """One notification per enabled channel of the alert's rule; sent after commit."""
    if channels is None:
        channels = list(alert.rule.channels.all())
    return notifications_queue_many(
        outgoing=[Outgoing(alert, kind, subject, channels)],
        suppressions=suppressions or Suppressions(timezone.now()),
    )


@transaction.atomic
def notifications_queue_many(
    *, outgoing: list[Outgoing], suppressions: Suppressions
) -> list[int]:
    """Every message of an evaluation cycle in three statements whatever their number
    (an alert storm's first cycle): one insert, one last_notified_at update, and the
    Celery tasks queued after commit. Returns the queued (not suppressed) ids."""
    now = timezone.now()
    rows = []
    for item in outgoing:
        why = suppressions.why(item.alert, item.subject)
        title, body = message(item.alert, item.kind)
        rows += [
            Notification(
                alert=item.alert,
                channel=channel,
                kind=item.kind,
                title=title,
                body=body,
                state=NotificationState.SUPPRESSED if why else NotificationState.QUEUED,
                error=why,
            )
            for channel in item.channels
            if channel.is_enabled
        ]
        item.alert.last_notified_at = now
    Notification.objects.bulk_create(rows, batch_size=2000)
    Alert.objects.filter(pk__in=[item.alert.pk for item in outgoing]).update(
        last_notified_at=now
    )
    queued = [n for n in rows if n.state == NotificationState.QUEUED]
    per_channel: dict[int, list[int]] = defaultdict(list)
    for n in queued:
        per_channel[n.channel_id].append(n.pk)
    transaction.on_commit(lambda: _enqueue(list(per_channel.values())))
    return [n.pk for n in queued]


NOTIFICATION_SEND_TASK = "pi_dashboard.alerts.tasks.notification_send"
NOTIFICATIONS_SEND_TASK = "pi_dashboard.alerts.tasks.notifications_send"


def _enqueue(batches: list[list[int]]) -> None:
    """One task per channel: a slow or broken channel holds up only its own
    messages, and a storm of thousands costs one broker message per channel.
    By name: tasks.py imports this module."""
    for ids in batches:
        if len(ids) == 1:
            send_by_name(NOTIFICATION_SEND_TASK, (ids[0],))
        else:
            send_by_name(NOTIFICATIONS_SEND_TASK, (ids,))


def apprise_send(url: str, title: str, body: str) -> str:
    """Deliver through Apprise; '' when it worked, else what Apprise said."""
    sender = apprise.Apprise()
    if not sender.add(url):
        return "Apprise does not understand this channel's URL."
    with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as captured:  # type: ignore[no-untyped-call]
        ok = sender.notify(title=title, body=body)
        said = str(captured.getvalue()).strip()
    if ok:
        return ""
    return (said.splitlines()[-1] if said else "Apprise could not deliver.")[:1000]


@transaction.atomic
def notification_send(*, notification_id: int) -> str:
    """Send one queued notification (once: the row lock is the claim)."""
    n = (
        Notification.objects.select_for_update(skip_locked=True)
        .select_related("channel")
        .filter(pk=notification_id, state=NotificationState.QUEUED)
        .first()
    )
    if n is None:
        return ""
    return _deliver(n)


def _deliver(n: Notification) -> str:
    channel = n.channel
    try:
        error = apprise_send(crypto.decrypt(channel.url_encrypted), n.title, n.body)
    except DomainError as exc:
        error = exc.detail
    except Exception as exc:  # a channel's bug must not kill the task
        log.exception("channel %s failed", channel.name)
        error = f"{type(exc).__name__}: {exc}"[:1000]
    now = timezone.now()
    n.state = NotificationState.FAILED if error else NotificationState.SENT
    n.error = error
    n.sent_at = None if error else now
    n.save(update_fields=["state", "error", "sent_at"])
    if error:
        channel.last_error, channel.last_error_at = error, now
        channel.save(update_fields=["last_error", "last_error_at"])
    else:
        channel.last_sent_at, channel.last_error = now, ""
        channel.save(update_fields=["last_sent_at", "last_error"])
    return error


@transaction.atomic
@audit.audits(
    "alerts.channel.test",
    lambda kw: {"channel": kw["channel"].pk, "name": kw["channel"].name},
    result_key="error",
)
def channel_send_test(
    *, channel: Channel, user: audit.Actor = None, ip_address: str | None = None
) -> str:
    """Send a test message now, through the same path; '' on success."""
    n = Notification.objects.create(
        channel=channel,
        kind=NotificationKind.TEST,
        title="[pi-dashboard] test notification",
        body=f"Test message from pi-dashboard for channel {channel.name}.",
    )
    return _deliver(n)
