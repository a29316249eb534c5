"""Reads of the audit log, for the API, the pages and the CSV export."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.lib.cursor import keyset_page


@dataclass(frozen=True)
class AuditFilters:
    actor: str = ""
    action: str = ""
    outcome: str = ""
    host: str = ""
    model: str = ""
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class AuditPage:
    entries: list[AuditEntry]
    next_cursor: str | None


def audit_queryset(*, filters: AuditFilters) -> QuerySet[AuditEntry]:
    """Audit entries matching `filters`, newest first, with what lists show."""
    entries = AuditEntry.objects.select_related("host", "model")
    if filters.actor:
        entries = entries.filter(actor_label__icontains=filters.actor)
    if filters.action:
        entries = entries.filter(action=filters.action)
    if filters.outcome:
        entries = entries.filter(outcome=filters.outcome)
    if filters.host:
        entries = entries.filter(host__pi_id=filters.host)
    if filters.model:
        entries = entries.filter(model__key=filters.model)
    if filters.since is not None:
        entries = entries.filter(at__gte=filters.since)
    if filters.until is not None:
        entries = entries.filter(at__lt=filters.until)
    return entries.order_by("-at", "-id")


def audit_page(
    *, filters: AuditFilters, cursor: str = "", limit: int = 100
) -> AuditPage:
    """One page of the audit log; pass `next_cursor` back for the next (older) one."""
    rows, next_cursor = keyset_page(
        audit_queryset(filters=filters), cursor=cursor, limit=limit, at_field="at"
    )
    return AuditPage(entries=rows, next_cursor=next_cursor)


def audit_actions() -> list[str]:
    """Distinct action names, for the audit page's filter."""
    return list(
        AuditEntry.objects.order_by("action")
        .values_list("action", flat=True)
        .distinct()
    )
