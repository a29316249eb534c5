"""Alerting: liveness grace, tags, rules, alerts and their history, silences,
maintenance windows, channels (Apprise URLs) and the notifications sent through them.
"""

from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from pi_dashboard.fleet.models import Host


class HostTag(models.Model):
    """A free label on a host ("gpu", "eu-west"): rules, silences and grace use it."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="tags")
    tag = models.CharField(max_length=64)

    class Meta:
        ordering = ["tag"]
        constraints = [
            models.UniqueConstraint(fields=["host", "tag"], name="hosttag_unique"),
        ]

    def __str__(self) -> str:
        return self.tag


class LivenessGrace(models.Model):
    """Late/down thresholds for one host or every host with a tag (healthchecks'
    period + grace). A host override wins over a tag one, which wins over settings."""

    host = models.OneToOneField(
        Host, null=True, blank=True, on_delete=models.CASCADE, related_name="grace"
    )
    tag = models.CharField(max_length=64, blank=True, default="")
    late_seconds = models.PositiveIntegerField()
    down_seconds = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(host__isnull=False) & models.Q(tag=""))
                | (models.Q(host__isnull=True) & ~models.Q(tag="")),
                name="livenessgrace_host_xor_tag",
            ),
            models.UniqueConstraint(
                fields=["tag"], condition=~models.Q(tag=""), name="livenessgrace_tag"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.host or self.tag}: late {self.late_seconds}s"


class ScopeKind(models.TextChoices):
    FLEET = "fleet", "whole fleet"
    PROVIDER = "provider", "provider"
    MODEL = "model", "model"
    HOST = "host", "host"
    TAG = "tag", "host tag"


class Signal(models.TextChoices):
    AGENT_DOWN = "agent_down", "host down (no heartbeat past the down grace)"
    FAILURE_RATE = "failure_rate", "execution failures in window (phase or code)"
    FAILURE_RATE_MODEL = "failure_rate_model", "execution failures per model"
    BOUNCE_RATE = "bounce_rate", "validation bounce rate (bounced / validations)"
    RULE_LEARNED = "rule_learned", "new standing rule learned"
    RULE_EVICTIONS = "rule_evictions", "rule-cap evictions in window"
    TEXT_PROTOCOL_DEMOTED = "text_protocol_demoted", "text protocol demoted"
    PROBE_DRIFT = "probe_drift", "probe verdict drift"
    VERDICT_MISMATCH = "verdict_mismatch", "host verdict differs from server probe"
    COMMAND_TROUBLE = "command_trouble", "command failed, expired or reverted"
    INGEST_TROUBLE = "ingest_trouble", "agent reports ingest trouble"
    STORE_UNREADABLE = "store_unreadable", "pi's store unreadable (urgent)"


class AlertRule(models.Model):
    """Scope × signal × threshold over a window, with Gatus-style hysteresis."""

    name = models.CharField(max_length=200, unique=True)
    scope_kind = models.CharField(
        max_length=16, choices=ScopeKind.choices, default=ScopeKind.FLEET
    )
    scope_value = models.CharField(max_length=600, blank=True, default="")
    signal = models.CharField(max_length=32, choices=Signal.choices)
    # Narrows a signal: a phase ("execute") or "code:<failure code>" for failures.
    param = models.CharField(max_length=300, blank=True, default="")
    threshold = models.FloatField(default=1.0)
    window_minutes = models.PositiveIntegerField(default=60)
    fire_after = models.PositiveSmallIntegerField(default=1)
    resolve_after = models.PositiveSmallIntegerField(default=1)
    # 0: no reminders while firing.
    remind_minutes = models.PositiveIntegerField(default=0)
    is_urgent = models.BooleanField(default=False)
    is_enabled = models.BooleanField(default=True)
    channels: "models.ManyToManyField[Channel, Any]" = models.ManyToManyField(
        "Channel", blank=True, related_name="rules"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AlertState(models.TextChoices):
    PENDING = "pending", "pending"  # breached, fewer than fire_after times
    FIRING = "firing", "firing"
    RESOLVED = "resolved", "resolved"


OPEN_ALERT_STATES = (AlertState.PENDING, AlertState.FIRING)


class Alert(models.Model):
    """One episode of one rule on one subject (a host, a model, a host × model…)."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    subject = models.CharField(max_length=900)
    label = models.CharField(max_length=900)
    host = models.ForeignKey(
        Host, null=True, blank=True, on_delete=models.CASCADE, related_name="alerts"
    )
    model_key = models.CharField(max_length=600, blank=True, default="")
    evidence_url = models.CharField(max_length=1200, blank=True, default="")
    state = models.CharField(max_length=16, choices=AlertState.choices)
    value = models.FloatField(default=0)
    breaches = models.PositiveIntegerField(default=0)
    clears = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    fired_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    last_notified_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "subject"],
                condition=models.Q(state__in=["pending", "firing"]),
                name="alert_one_open_per_subject",
            ),
        ]
        indexes = [models.Index(fields=["state", "-started_at"], name="alert_state")]

    def __str__(self) -> str:
        return f"{self.rule.name}: {self.label} ({self.state})"


class AlertEventKind(models.TextChoices):
    FIRED = "fired", "fired"
    REMINDED = "reminded", "reminder"
    RESOLVED = "resolved", "resolved"
    ACKNOWLEDGED = "acknowledged", "acknowledged"


class AlertEvent(models.Model):
    """A state change of an alert: the history the alerts page shows."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=AlertEventKind.choices)
    at = models.DateTimeField()
    value = models.FloatField(default=0)
    actor = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} @ {self.at:%Y-%m-%dT%H:%M}"


class Silence(models.Model):
    """Suppresses delivery (never state) for a rule and/or scope until `ends_at`."""

    rule = models.ForeignKey(
        AlertRule, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    scope_kind = models.CharField(
        max_length=16, choices=ScopeKind.choices, default=ScopeKind.FLEET
    )
    scope_value = models.CharField(max_length=600, blank=True, default="")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    reason = models.CharField(max_length=500, blank=True, default="")
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-ends_at"]

    def __str__(self) -> str:
        return f"silence until {self.ends_at:%Y-%m-%dT%H:%M}"


class MaintenanceWindow(models.Model):
    """Planned work: one-off (starts_at..ends_at) or weekly recurring (UTC weekdays,
    start time, duration). Alerts keep their state; nothing is delivered."""

    name = models.CharField(max_length=200)
    scope_kind = models.CharField(
        max_length=16, choices=ScopeKind.choices, default=ScopeKind.FLEET
    )
    scope_value = models.CharField(max_length=600, blank=True, default="")
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    # Recurring: ISO weekdays (1 = Monday), start time UTC, duration.
    weekdays = ArrayField(models.PositiveSmallIntegerField(), default=list, blank=True)
    start_time = models.TimeField(null=True, blank=True)
    duration_minutes = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Channel(models.Model):
    """Where notifications go: one Apprise URL (json://, slack://, mailto://, …)."""

    name = models.CharField(max_length=200, unique=True)
    url_encrypted = models.TextField()
    # What lists show instead of the URL, which may hold secrets.
    url_hint = models.CharField(max_length=300, blank=True, default="")
    is_enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    last_error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class NotificationKind(models.TextChoices):
    FIRING = "firing", "firing"
    REMINDER = "reminder", "reminder"
    RESOLVED = "resolved", "resolved"
    TEST = "test", "test"


class NotificationState(models.TextChoices):
    QUEUED = "queued", "queued"
    SENT = "sent", "sent"
    FAILED = "failed", "failed"
    SUPPRESSED = "suppressed", "suppressed (silence or maintenance)"


class Notification(models.Model):
    """One message to one channel; delivered by its own Celery task."""

    alert = models.ForeignKey(
        Alert,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="notifications",
    )
    channel = models.ForeignKey(
        Channel, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=16, choices=NotificationKind.choices)
    title = models.CharField(max_length=500)
    body = models.TextField()
    state = models.CharField(
        max_length=16,
        choices=NotificationState.choices,
        default=NotificationState.QUEUED,
    )
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} → {self.channel_id} ({self.state})"
