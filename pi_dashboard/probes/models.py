"""Model endpoints, probe runs and transcripts, schedules, drift, notifications."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django_celery_beat.models import PeriodicTask


class TokenParam(models.TextChoices):
    MAX_COMPLETION_TOKENS = "max_completion_tokens", "max_completion_tokens"
    MAX_TOKENS = "max_tokens", "max_tokens"


class Verdict(models.TextChoices):
    NATIVE = "native", "native"
    TEXT_PROTOCOL = "text-protocol", "text-protocol"
    NONE = "none", "none"


class Endpoint(models.Model):
    """An OpenAI-compatible chat-completions endpoint serving one pi model."""

    name = models.CharField(max_length=200, unique=True)
    base_url = models.CharField(max_length=500)
    # The model id as the server names it (sent as `model`).
    server_model = models.CharField(max_length=300)
    # pi's `provider/modelId` key this endpoint stands for (fleet.Model.key).
    model_key = models.CharField(max_length=600)
    provider = models.CharField(max_length=200)
    api_key_encrypted = models.TextField(blank=True, default="")
    # Alternative to a stored key: the worker reads it from this environment variable.
    api_key_env = models.CharField(max_length=200, blank=True, default="")
    # Extra request headers, encrypted as one JSON object (they may carry secrets);
    # their names are kept in clear so pages can list them.
    headers_encrypted = models.TextField(blank=True, default="")
    header_names = ArrayField(
        models.CharField(max_length=200), default=list, blank=True
    )
    timeout_seconds = models.FloatField(default=60.0)
    token_param = models.CharField(
        max_length=32,
        choices=TokenParam.choices,
        default=TokenParam.MAX_COMPLETION_TOKENS,
    )
    is_streaming = models.BooleanField(default=True)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    # k: every trial must pass k times in a row for its verdict (1 is pi's own probe).
    trials = models.PositiveSmallIntegerField(default=1)
    # Probes in flight at once against this endpoint's server (scheme, host and
    # port, shared by every endpoint there); empty is no limit of its own, only the
    # fleet-wide cap. 1 suits llama.cpp-like servers that abort a stream when
    # another request arrives.
    max_concurrent_probes = models.PositiveSmallIntegerField(null=True, blank=True)
    is_enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Latest finished verdict, denormalised for lists and drift comparison.
    last_verdict = models.CharField(max_length=16, blank=True, default="")
    last_grade = models.CharField(max_length=16, blank=True, default="")
    last_variant = models.CharField(max_length=32, blank=True, default="")
    last_probed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        indexes = [
            # Schedule selection "by tag": tags @> ARRAY[tag].
            GinIndex(fields=["tags"], name="endpoint_tags_gin"),
            # Drift and verdicts on the model page / fleet overview, by model key.
            models.Index(fields=["model_key"], name="endpoint_model_key"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted or self.api_key_env)


class RunState(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    DONE = "done", "done"
    REFUSED = "refused", "refused"
    FAILED = "failed", "failed"


TERMINAL_RUN_STATES = frozenset({RunState.DONE, RunState.REFUSED, RunState.FAILED})


class Trigger(models.TextChoices):
    MANUAL = "manual", "manual (page)"
    API = "api", "API"
    SCHEDULE = "schedule", "schedule"
    FLEET = "fleet", "fleet probe"


class SelectionKind(models.TextChoices):
    ALL = "all", "all endpoints"
    TAG = "tag", "by tag"
    PROVIDER = "provider", "by provider"


class ScheduleKind(models.TextChoices):
    INTERVAL = "interval", "interval"
    CRONTAB = "crontab", "cron"


class ProbeSchedule(models.Model):
    """Which endpoints to probe and when; beat fires it through `periodic_task`."""

    name = models.CharField(max_length=200, unique=True)
    selection_kind = models.CharField(
        max_length=16, choices=SelectionKind.choices, default=SelectionKind.ALL
    )
    selection_value = models.CharField(max_length=200, blank=True, default="")
    kind = models.CharField(
        max_length=16, choices=ScheduleKind.choices, default=ScheduleKind.INTERVAL
    )
    every_seconds = models.PositiveIntegerField(null=True, blank=True)
    # Five cron fields: minute hour day-of-month month day-of-week.
    cron = models.CharField(max_length=120, blank=True, default="")
    # Probes start spread over this many seconds, so a fleet does not hit at once.
    jitter_seconds = models.PositiveIntegerField(default=10)
    is_paused = models.BooleanField(default=False)
    periodic_task = models.OneToOneField(
        PeriodicTask, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FleetProbe(models.Model):
    """One fan-out over many endpoints (a schedule firing, or "probe all" by hand)."""

    # Idempotency key: the Celery message id of the firing, or a fresh uuid.
    key = models.CharField(max_length=200, unique=True)
    schedule = models.ForeignKey(
        ProbeSchedule,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="fleet_probes",
    )
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    selection = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    endpoint_count = models.PositiveIntegerField(default=0)
    # What changed since each endpoint's previous run; filled when the last run ends.
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.key


class ProbeRun(models.Model):
    """One probe of one endpoint for one slot; written in full, once, at the end."""

    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, related_name="runs"
    )
    # Idempotency: a task delivered twice for the same slot finds this row.
    slot = models.CharField(max_length=200)
    fleet = models.ForeignKey(
        FleetProbe, null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    trigger = models.CharField(max_length=16, choices=Trigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    state = models.CharField(
        max_length=16, choices=RunState.choices, default=RunState.PENDING
    )
    verdict = models.CharField(
        max_length=16, choices=Verdict.choices, blank=True, default=""
    )
    native_grade = models.CharField(max_length=16, blank=True, default="")
    variant = models.CharField(max_length=32, blank=True, default="")
    diagnostic = models.TextField(blank=True, default="")
    # Exactly what pi would write as profile.toolProbe / profile.protocol.
    tool_probe = models.JSONField(null=True, blank=True)
    protocol = models.JSONField(null=True, blank=True)
    # Why the run was refused or failed (outbound guard, unreachable, time limit).
    error = models.TextField(blank=True, default="")
    # Said beside the result, e.g. the server does not list `server_model`.
    warning = models.TextField(blank=True, default="")
    completions = models.PositiveSmallIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The claim: whoever holds this token may finish the run until the lease ends.
    claim_token = models.CharField(max_length=64, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "slot"], name="proberun_endpoint_slot"
            ),
        ]
        indexes = [
            # Endpoint page: verdict history, newest first.
            models.Index(
                fields=["endpoint", "-created_at"], name="proberun_endpoint_at"
            ),
            # Sweep: unfinished runs whose lease expired (or that were never claimed).
            models.Index(fields=["state", "lease_until"], name="proberun_state_lease"),
            # Fleet probe page and "is the fan-out finished?".
            models.Index(fields=["fleet", "state"], name="proberun_fleet_state"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id}:{self.slot} ({self.state})"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_RUN_STATES


class ProbeExchange(models.Model):
    """One request and reply of a run (redacted, bounded), in the order sent."""

    run = models.ForeignKey(
        ProbeRun, on_delete=models.CASCADE, related_name="exchanges"
    )
    seq = models.PositiveSmallIntegerField()
    # read-task, echo, text-protocol:<variant> (pi's spend-report kinds).
    kind = models.CharField(max_length=64)
    passed = models.BooleanField(default=False)
    request = models.JSONField(default=dict)
    response = models.JSONField(default=dict)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "seq"], name="probeexchange_run_seq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.kind}"


class Drift(models.Model):
    """A finished run whose verdict or grade differs from the previous one."""

    endpoint = models.ForeignKey(
        Endpoint, on_delete=models.CASCADE, related_name="drifts"
    )
    run = models.OneToOneField(ProbeRun, on_delete=models.CASCADE, related_name="drift")
    previous_run = models.ForeignKey(
        ProbeRun, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    model_key = models.CharField(max_length=600)
    previous_verdict = models.CharField(max_length=16)
    previous_grade = models.CharField(max_length=16, blank=True, default="")
    previous_variant = models.CharField(max_length=32, blank=True, default="")
    verdict = models.CharField(max_length=16)
    grade = models.CharField(max_length=16, blank=True, default="")
    variant = models.CharField(max_length=32, blank=True, default="")
    at = models.DateTimeField()
    notified_at = models.DateTimeField(null=True, blank=True)
    notify_error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            # Model page / fleet overview: recent drift of some model keys.
            models.Index(fields=["model_key", "-at"], name="drift_model_at"),
            models.Index(fields=["-at"], name="drift_at"),
        ]

    def __str__(self) -> str:
        return f"{self.model_key}: {self.previous_verdict} → {self.verdict}"

    @property
    def summary(self) -> str:
        before = f"{self.previous_verdict}/{self.previous_grade or '-'}"
        return f"{before} → {self.verdict}/{self.grade or '-'}"
