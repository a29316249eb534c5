"""API schemas of the alerts router."""

from datetime import datetime, time

from ninja import Field, Schema

from pi_dashboard.alerts.models import ScopeKind


class RuleIn(Schema):
    name: str = Field(max_length=200)
    signal: str
    scope_kind: str = ScopeKind.FLEET.value
    scope_value: str = Field("", max_length=600)
    param: str = Field("", max_length=300)
    threshold: float = 1.0
    window_minutes: int = 60
    fire_after: int = 1
    resolve_after: int = 1
    remind_minutes: int = Field(0, ge=0)
    is_urgent: bool = False
    is_enabled: bool = True
    channel_ids: list[int] = []


class RulePatch(Schema):
    name: str | None = Field(None, max_length=200)
    signal: str | None = None
    scope_kind: str | None = None
    scope_value: str | None = Field(None, max_length=600)
    param: str | None = Field(None, max_length=300)
    threshold: float | None = None
    window_minutes: int | None = None
    fire_after: int | None = None
    resolve_after: int | None = None
    remind_minutes: int | None = Field(None, ge=0)
    is_urgent: bool | None = None
    is_enabled: bool | None = None
    channel_ids: list[int] | None = None


class RuleOut(Schema):
    id: int
    name: str
    signal: str
    scope_kind: str
    scope_value: str
    param: str
    threshold: float
    window_minutes: int
    fire_after: int
    resolve_after: int
    remind_minutes: int
    is_urgent: bool
    is_enabled: bool
    channel_ids: list[int]


class AlertOut(Schema):
    id: int
    rule_id: int
    rule_name: str
    subject: str
    label: str
    state: str
    value: float
    started_at: datetime
    fired_at: datetime | None
    resolved_at: datetime | None
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    evidence_url: str


class AlertFilters(Schema):
    state: str = ""
    rule_id: int | None = None
    limit: int = Field(100, ge=1, le=1000)


class MaintenanceIn(Schema):
    """A one-off window (starts_at, ends_at) or a weekly one (weekdays, start_time,
    duration_minutes), UTC. PUT replaces every field."""

    name: str = Field(max_length=200)
    scope_kind: str = ScopeKind.FLEET.value
    scope_value: str = Field("", max_length=600)
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    weekdays: list[int] = Field([], max_length=7)
    start_time: time | None = None
    duration_minutes: int = Field(0, ge=0)


class MaintenanceOut(MaintenanceIn):
    id: int
    active_now: bool
