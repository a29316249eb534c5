"""Read-mostly admin for shipped records (for looking things up, not editing)."""

from django.contrib import admin

from pi_dashboard.ingest.models import (
    CorpusRecord,
    DailyRollup,
    EventRecord,
    Rollup,
    SessionStats,
    Snapshot,
)


@admin.register(EventRecord)
class EventRecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["ts", "host", "model", "kind", "tool", "outcome", "phase"]
    list_filter = ["kind", "outcome", "phase"]
    list_select_related = ["host", "model"]
    search_fields = ["record_id", "session_id", "failure_code"]


@admin.register(CorpusRecord)
class CorpusRecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["ts", "host", "model", "kind", "tool", "reason"]
    list_filter = ["kind", "reason"]
    list_select_related = ["host", "model"]


@admin.register(SessionStats)
class SessionStatsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["session_id", "host", "last_record_sequence", "received_at"]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["received_at", "taken_at", "agent"]
    exclude = ["content_hash"]


@admin.register(Rollup)
class RollupAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["bucket", "host", "model", "dimension", "key", "count"]
    list_filter = ["dimension"]


@admin.register(DailyRollup)
class DailyRollupAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["bucket", "host", "model", "dimension", "key", "count"]
    list_filter = ["dimension"]
