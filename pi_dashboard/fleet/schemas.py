"""Request and response shapes of the fleet API (agent identity, operator reads)."""

from datetime import datetime
from typing import Any
from uuid import UUID

from ninja import Schema


class WhoamiOut(Schema):
    agent_id: UUID
    name: str
    host: str | None
    server_time: datetime
    poll_interval: int


class HeartbeatOut(Schema):
    server_time: datetime
    poll_interval: int
    host: str


class AgentOut(Schema):
    id: UUID
    name: str
    hostname: str
    agent_version: str
    pi_version: str
    last_contact_at: datetime | None
    is_active: bool
    lag: dict[str, Any]
    # The last heartbeat's reports (heartbeat schema: store, capabilities, ingest).
    store: dict[str, Any] = {}
    capabilities: dict[str, Any] = {}
    ingest: dict[str, Any] = {}


class HostOut(Schema):
    id: str
    cpu: str
    cores: int | None
    total_mem_gb: float | None
    first_seen_at: datetime
    last_snapshot_at: datetime | None
    last_contact_at: datetime | None
    hostnames: list[str]
    model_count: int


class HostModelSummaryOut(Schema):
    host: str
    model: str
    probe_status: str
    probe_grade: str
    probe_variant: str
    probed_at: datetime | None
    protocol_status: str
    protocol_variant: str
    rule_count: int
    entry_at: datetime | None


class HostDetailOut(HostOut):
    agents: list[AgentOut]
    models: list[HostModelSummaryOut]


class ModelOut(Schema):
    key: str
    provider: str
    model_id: str
    host_count: int


class ModelDetailOut(ModelOut):
    hosts: list[HostModelSummaryOut]


class RuleOut(Schema):
    """A standing rule as pi stores it, plus what pi's own rules say about it now."""

    mode: str
    text: str
    addedAt: str
    lastFiredAt: str
    retires_at: datetime
    is_expired: bool
    efficacy: str  # no_evidence | helping | retire_early


class HostModelStateOut(HostModelSummaryOut):
    rules: list[RuleOut]
    protocol: dict[str, Any] | None
    toolProbe: dict[str, Any] | None
    teachStats: dict[str, Any]
    perf: dict[str, Any] | None
    entry: dict[str, Any]


class ChangeOut(Schema):
    id: int
    kind: str
    at: datetime
    mode: str
    before: Any
    after: Any
    command_id: UUID | None = None  # the operator's command, for rule_removed
    recorded_at: datetime
