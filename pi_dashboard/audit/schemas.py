"""Response and query bodies of the audit API."""

import dataclasses
import uuid
from datetime import datetime
from typing import Any

from ninja import Schema
from pydantic import Field

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.audit.selectors import AuditFilters


class AuditEntryOut(Schema):
    id: int
    at: datetime
    actor: str
    action: str
    outcome: str
    host: str | None
    model: str | None
    command: uuid.UUID | None
    detail: dict[str, Any]
    ip_address: str | None

    @staticmethod
    def resolve_actor(obj: AuditEntry) -> str:
        return obj.actor_label

    @staticmethod
    def resolve_host(obj: AuditEntry) -> str | None:
        return obj.host.pi_id if obj.host else None

    @staticmethod
    def resolve_model(obj: AuditEntry) -> str | None:
        return obj.model.key if obj.model else None

    @staticmethod
    def resolve_command(obj: AuditEntry) -> uuid.UUID | None:
        return obj.command_id


class AuditPageOut(Schema):
    entries: list[AuditEntryOut]
    next_cursor: str | None


class AuditFiltersIn(Schema):
    actor: str = ""
    action: str = ""
    outcome: str = ""
    host: str = ""
    model: str = ""
    since: datetime | None = None
    until: datetime | None = None

    def filters(self) -> AuditFilters:
        # The fields match AuditFilters one to one (AuditQueryIn adds paging).
        names = {f.name for f in dataclasses.fields(AuditFilters)}
        return AuditFilters(**self.dict(include=names))


class AuditQueryIn(AuditFiltersIn):
    cursor: str = ""
    limit: int = Field(100, ge=1, le=500)
