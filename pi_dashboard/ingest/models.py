"""Records shipped by agents: log and corpus lines, stats files, snapshots, rollups.

Lines are deduplicated by the SHA-256 of their canonical JSON (docs/pi-host-pitfalls.md
§19, §22: `recordId` is not unique and corpus rows have none). `payload` holds the
record with every field; strings PostgreSQL cannot store (lone surrogates, NUL) are
replaced there, and `original` then keeps the exact line as ASCII-escaped JSON, shown
faithfully.
"""

from django.db import models

from pi_dashboard.fleet.models import Agent, Host, Model


class EventKind(models.TextChoices):
    VALIDATION = "tool_argument_validation", "validation"
    EXECUTION_FAILURE = "tool_execution_failure", "execution failure"


class CorpusKind(models.TextChoices):
    TOOL_VALIDATION = "tool_validation", "tool validation"
    TOOL_EXECUTION = "tool_execution", "tool execution"
    PROVIDER = "provider", "provider error"


class ShippedLine(models.Model):
    """What a shipped log or corpus line keeps besides its own columns: the
    content key, when pi wrote it, the record itself and, when it was mended, the
    exact line. Host, model and kind stay on each (their indexes and reverse names
    differ)."""

    content_hash = models.BinaryField(max_length=32)
    ts = models.DateTimeField()
    phase = models.TextField(blank=True, default="")
    failure_code = models.TextField(blank=True, default="")
    payload = models.JSONField()
    original = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class EventRecord(ShippedLine):
    """One line of `tool-recovery-events.jsonl`."""

    # No single-column indexes: the unique content key starts with host and
    # event_model_ts with model, and each index is one more write per line.
    host = models.ForeignKey(
        Host, on_delete=models.CASCADE, related_name="events", db_index=False
    )
    model = models.ForeignKey(
        Model,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="events",
        db_index=False,
    )
    kind = models.CharField(max_length=32, choices=EventKind.choices)
    # Text, not bounded: pi does not bound recordId, sessionId or tool on validation
    # records, and treats outcome, state and phase as open enumerations (§10).
    session_id = models.TextField()
    record_id = models.TextField()
    tool = models.TextField()
    # Validation: repaired | bounced. Execution failure: failed | rejected.
    outcome = models.TextField()
    is_text_protocol = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "content_hash"], name="eventrecord_unique_content"
            ),
        ]
        indexes = [
            # Event lists of a host × model, newest first, with cursor pagination.
            models.Index(
                fields=["host", "model", "-ts", "-id"], name="event_host_model_ts"
            ),
            # Event lists across the fleet or one model, newest first.
            models.Index(fields=["model", "-ts", "-id"], name="event_model_ts"),
            models.Index(fields=["-ts", "-id"], name="event_ts"),
        ]

    def __str__(self) -> str:
        return self.record_id

    # pi's camelCase payload keys, read here so that pages need not spell them.
    @property
    def repairs_applied(self) -> list[str]:
        return _strings(self.payload.get("repairsApplied"))

    @property
    def failure_modes(self) -> list[str]:
        return _strings(self.payload.get("failureModes"))

    @property
    def diagnostic(self) -> str:
        value = self.payload.get("diagnostic")
        return value if isinstance(value, str) else ""


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


class CorpusRecord(ShippedLine):
    """One line of `failure-corpus.jsonl`: tool validation, tool execution, provider."""

    # Indexed by the unique content key (host first), as EventRecord's.
    host = models.ForeignKey(
        Host, on_delete=models.CASCADE, related_name="corpus", db_index=False
    )
    model = models.ForeignKey(
        Model, null=True, blank=True, on_delete=models.CASCADE, related_name="corpus"
    )
    kind = models.CharField(max_length=32, choices=CorpusKind.choices)
    tool = models.TextField(blank=True, default="")
    # Tool execution rows: failed | rejected.
    state = models.TextField(blank=True, default="")
    # Provider rows: rate_limit, overloaded, … (pi's FailureReason, open-ended).
    reason = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "content_hash"], name="corpusrecord_unique_content"
            ),
        ]
        indexes = [
            # Corpus lists of a host × model, newest first, with cursor pagination.
            models.Index(
                fields=["host", "model", "-ts", "-id"], name="corpus_host_model_ts_id"
            ),
            # Corpus lists across the fleet, newest first.
            models.Index(fields=["-ts", "-id"], name="corpus_ts"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}@{self.ts}"


class SessionStats(models.Model):
    """A `tool-recovery-stats/<id>.json` file: running totals of one pi session."""

    host = models.ForeignKey(
        Host, on_delete=models.CASCADE, related_name="session_stats"
    )
    session_id = models.CharField(max_length=256)
    last_record_sequence = models.BigIntegerField()
    document = models.JSONField()
    # The exact document as ASCII-escaped JSON when `document` had to be sanitised.
    original = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["host", "session_id"], name="sessionstats_unique_session"
            ),
        ]

    def __str__(self) -> str:
        return self.session_id


class Snapshot(models.Model):
    """A received `model-adaptation.json`, one row per distinct content."""

    agent = models.ForeignKey(
        Agent,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="snapshots",
    )
    content_hash = models.BinaryField(max_length=32, unique=True)
    # Newest entry `at` in the document: how new the snapshot is, whenever it arrived.
    taken_at = models.DateTimeField(null=True)
    received_at = models.DateTimeField(auto_now_add=True)
    # The agent's X-Snapshot-Seq (its own send order), when it sent one.
    seq = models.BigIntegerField(null=True, blank=True)
    document = models.JSONField()
    original = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-received_at"]
        indexes = [
            # Retention keeps each agent's newest snapshot (DISTINCT ON agent).
            models.Index(
                fields=["agent", "-received_at", "-id"], name="snapshot_agent_newest"
            ),
            # Retention deletes snapshots received before a cutoff.
            models.Index(fields=["received_at"], name="snapshot_received"),
        ]

    def __str__(self) -> str:
        return f"snapshot {self.content_hash.hex()[:12]}"


class Dimension(models.TextChoices):
    """What a rollup row counts."""

    OUTCOME = "outcome", "record kind and outcome"
    TOOL = "tool", "tool"
    PHASE = "phase", "execution-failure phase"
    FAILURE_CODE = "failure_code", "execution-failure code"
    REPAIR_MODE = "repair_mode", "repair mode applied"
    FAILURE_MODE = "failure_mode", "failure mode detected"
    PROVIDER_REASON = "provider_reason", "provider error reason"


class CountCell(models.Model):
    """A count per time bucket × host × model × dimension value: a rollup row.

    Only lines stored for the first time count, so re-sent lines change nothing.
    """

    bucket = models.DateTimeField()
    # No single-column indexes: the host and model indexes below start with these,
    # and every index is one more write for each new cell. No reverse accessors
    # either (deletes still cascade): nothing reads cells from a host or a model.
    host = models.ForeignKey(
        Host, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    model = models.ForeignKey(
        Model,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
    )
    dimension = models.CharField(max_length=32, choices=Dimension.choices)
    key = models.CharField(max_length=300)
    count = models.BigIntegerField(default=0)

    bucket_format = "%Y-%m-%dT%H"

    class Meta:
        abstract = True
        constraints = [
            models.UniqueConstraint(
                fields=["bucket", "host", "model", "dimension", "key"],
                name="%(class)s_unique_cell",
                nulls_distinct=False,
            ),
        ]
        indexes = [
            # Charts and totals of one model (all hosts) over a time range.
            models.Index(
                fields=["model", "dimension", "bucket"], name="%(class)s_model"
            ),
            # Fleet overview and host pages: one host's cells over a time range.
            models.Index(fields=["host", "dimension", "bucket"], name="%(class)s_host"),
        ]

    def __str__(self) -> str:
        when = format(self.bucket, self.bucket_format)
        return f"{when} {self.dimension}={self.key}: {self.count}"


class Rollup(CountCell):
    """Hourly counts, for pages and charts."""

    class Meta(CountCell.Meta):
        indexes = [
            *CountCell.Meta.indexes,
            # Fleet overview: every cell in a time range.
            models.Index(fields=["dimension", "bucket"], name="rollup_dimension"),
            # Alert evaluation (alerts.measures.Sums):
            #   SELECT dimension, key, host_id, model_id, sum(count) FILTER (...)
            #   WHERE bucket BETWEEN %s AND %s AND dimension = %s AND key = ANY(%s)
            #   GROUP BY 1, 2, 3, 4
            # Only the wanted keys' cells of the window are visited. `count` is left
            # out on purpose: every ingest batch updates it, and an indexed `count`
            # would end the HOT updates the table's fillfactor is there for (the
            # ingest bench: 7 ms more database time per 1,000 lines).
            models.Index(
                fields=["dimension", "key", "bucket"],
                include=["host", "model"],
                name="rollup_alerts_scan_hot",
            ),
        ]


class DailyRollup(CountCell):
    """Daily outcome counts per host × model: the hourly cells of one UTC day.

    Written by ingest in the same transaction as the hourly cells, so the sum of a
    day's hourly rows always equals its daily row. Range-wide totals (the failure rate
    on every page) read these for whole days: 30 rows per cell instead of 720. Only
    the `outcome` dimension has a daily level (ingest.store.DAILY_DIMENSIONS).
    `bucket` is midnight UTC of the day.
    """

    bucket_format = "%Y-%m-%d"

    class Meta(CountCell.Meta):
        indexes = [
            *CountCell.Meta.indexes,
            # Fleet overview: failures of every cell in a range, read from the index
            # alone (index-only scan): a heap scan would read every dimension's rows.
            models.Index(
                fields=["key", "bucket"],
                include=["host", "model", "count"],
                condition=models.Q(dimension="outcome"),
                name="dailyrollup_outcome",
            ),
        ]


class RetentionMark(models.Model):
    """How far back raw lines of one table may have been deleted by retention.

    Dedupe needs the raw row: a line whose row was deleted would be stored and counted
    again when an agent re-sends it (rotated files). Ingest therefore answers
    "duplicate" (code `expired`) for lines older than this mark instead of storing
    them. The mark only moves forward, and only when rows are about to be deleted.
    """

    table = models.CharField(max_length=64, unique=True)
    horizon = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.table} < {self.horizon:%Y-%m-%dT%H:%M}"
