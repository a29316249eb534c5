"""Hosts, agents, models and what each host has learned about each model."""

import uuid

from django.db import models

from pi_dashboard.fleet import store_report


class Host(models.Model):
    """A pi host: the fingerprint id pi keys its store by (CPU slug, cores, GiB).

    Identical machines share one; a resize makes a new one (docs/pi-host-pitfalls.md
    §4).
    """

    pi_id = models.CharField(max_length=200, unique=True)
    cpu = models.CharField(max_length=300, blank=True)
    cores = models.PositiveIntegerField(null=True)
    total_mem_gb = models.FloatField(null=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_snapshot_at = models.DateTimeField(null=True, blank=True)
    # Latest contact from any agent of this host (denormalised for the overview).
    last_contact_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pi_id"]

    def __str__(self) -> str:
        return self.pi_id


class Agent(models.Model):
    """One install of pi-dashboard-agent: its own token, hostname and versions."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    token_prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    host = models.ForeignKey(
        Host, null=True, blank=True, on_delete=models.SET_NULL, related_name="agents"
    )
    hostname = models.CharField(max_length=255, blank=True)
    agent_version = models.CharField(max_length=64, blank=True)
    pi_version = models.CharField(max_length=64, blank=True)
    state_dir = models.CharField(max_length=1024, blank=True)
    # Last heartbeat's lag report: bytes and records not yet shipped, spool size.
    lag = models.JSONField(default=dict, blank=True)
    # Last heartbeat's reports (heartbeat schema): the store as the agent read it
    # ({status, reason, host_ids}), what it can do ({probe, rpc, why}) and its
    # cumulative ingest trouble counters ({rejected_lines, quarantined_lines, …}).
    store = models.JSONField(default=dict, blank=True)
    capabilities = models.JSONField(default=dict, blank=True)
    ingest = models.JSONField(default=dict, blank=True)
    # A pi host id the agent claimed in a refused heartbeat (it is bound to another
    # one): shown to admins, who may rebind it. Empty when nothing was refused.
    claimed_host_id = models.CharField(max_length=200, blank=True, default="")
    # Highest X-Snapshot-Seq applied: a snapshot with a lower one is stale.
    snapshot_seq = models.BigIntegerField(null=True, blank=True)
    # The X-Snapshot-Epoch that `snapshot_seq` counts in (a reinstalled agent starts
    # a new epoch at 1), and the epochs it left: their late snapshots are stale.
    snapshot_epoch = models.CharField(max_length=64, blank=True, default="")
    snapshot_epochs_past = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_contact_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def store_findings(self) -> list["store_report.Finding"]:
        """The last heartbeat's store report in words (fleet.store_report)."""
        machine = self.host.pi_id if self.host is not None else ""
        return store_report.store_findings(
            store=self.store if isinstance(self.store, dict) else {},
            machine_host_id=machine,
        )


class Model(models.Model):
    """pi's model key `provider/modelId`; the model id may itself hold slashes."""

    key = models.CharField(max_length=600, unique=True)
    provider = models.CharField(max_length=200)
    model_id = models.CharField(max_length=400)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class ProbeStatus(models.TextChoices):
    NATIVE = "native", "native"
    TEXT_PROTOCOL = "text-protocol", "text-protocol"
    NONE = "none", "none"
    UNPROBED = "", "unprobed"


class ProtocolStatus(models.TextChoices):
    CALIBRATED = "calibrated", "calibrated"
    FAILED = "failed", "failed"
    NONE = "", "none"


class HostModel(models.Model):
    """Current adaptation of one model on one host, from the newest snapshot.

    `entry` is pi's stored entry as received (model, at, host, profile); the columns
    beside it are derived from it so that lists can filter and sort in SQL.
    """

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="host_models")
    model = models.ForeignKey(
        Model, on_delete=models.CASCADE, related_name="host_models"
    )
    entry = models.JSONField(default=dict)
    # The exact entry as ASCII-escaped JSON when `entry` had to be sanitised (lone
    # surrogates, NUL: see lib/jsonsafe.py); readers show this one when set.
    entry_original = models.TextField(blank=True, default="")
    # pi's `at`: last write to this entry (perf samples included). Snapshots whose
    # entry is older than this never roll the state back.
    entry_at = models.DateTimeField(null=True)
    probe_status = models.CharField(
        max_length=16, choices=ProbeStatus.choices, blank=True, default=""
    )
    probe_grade = models.CharField(max_length=16, blank=True, default="")
    probe_variant = models.CharField(max_length=64, blank=True, default="")
    probed_at = models.DateTimeField(null=True, blank=True)
    protocol_status = models.CharField(
        max_length=16, choices=ProtocolStatus.choices, blank=True, default=""
    )
    protocol_variant = models.CharField(max_length=64, blank=True, default="")
    rule_count = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "model"], name="hostmodel_unique"),
        ]
        indexes = [
            # Model page: every host that runs one model.
            models.Index(fields=["model", "host"], name="hostmodel_model_host"),
        ]

    def __str__(self) -> str:
        return f"{self.host_id}:{self.model_id}"


class ChangeKind(models.TextChoices):
    MODEL_SEEN = "model_seen", "model first seen"
    RULE_ADDED = "rule_added", "rule added"
    RULE_REFIRED = "rule_refired", "rule re-fired"
    # pi's own retirement at its next read: not fired for 30 days …
    RULE_RETIRED = "rule_retired", "rule retired by pi (expired)"
    # … or its teach statistics say it stopped helping.
    RULE_INEFFECTIVE = "rule_ineffective", "rule retired by pi (ineffective)"
    # Gone for no reason pi has: an operator's removal (command_id when known).
    RULE_REMOVED = "rule_removed", "rule removed by an operator"
    # Dropped to make room for a 6th rule (pi keeps the 5 most recent).
    RULE_EVICTED = "rule_evicted", "rule evicted by the cap"
    VERDICT_CHANGED = "verdict_changed", "verdict changed"
    GRADE_CHANGED = "grade_changed", "grade changed"
    CALIBRATION_SET = "calibration_set", "calibration set"
    CALIBRATION_REPLACED = "calibration_replaced", "calibration replaced"
    CALIBRATION_RESET = "calibration_reset", "calibration reset"
    TEACH_STATS_CLEARED = "teach_stats_cleared", "teach statistics cleared"


class Change(models.Model):
    """One change to a host × model, derived by comparing successive snapshots."""

    host_model = models.ForeignKey(
        HostModel, on_delete=models.CASCADE, related_name="changes"
    )
    kind = models.CharField(max_length=32, choices=ChangeKind.choices)
    # When pi made the change, as far as the snapshot tells (rule addedAt, probedAt, …),
    # else the entry's `at`.
    at = models.DateTimeField()
    mode = models.CharField(max_length=200, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # The command that made this change (an operator's rule removal), when known.
    # A plain id, not a foreign key: fleet sits below control and must not import it.
    command_id = models.UUIDField(null=True, blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            # History tab of a host × model, newest first.
            models.Index(fields=["host_model", "-at"], name="change_hostmodel_at"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.mode}".strip()
