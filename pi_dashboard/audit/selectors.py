"""Reads of the audit log, for the API, the pages and the CSV export."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.lib.cursor import cursor_decode, cursor_encode
from pi_dashboard.lib.errors import DomainError


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
    entries = audit_queryset(filters=filters)
    if cursor:
        at, entry_id = _cursor_decode(cursor)
        entries = entries.filter(Q(at__lt=at) | Q(at=at, id__lt=entry_id))
    rows = list(entries[: limit + 1])
    last = rows[limit - 1] if len(rows) > limit else None
    next_cursor = cursor_encode(last.at, last.pk) if last is not None else None
    return AuditPage(entries=rows[:limit], next_cursor=next_cursor)


def audit_actions() -> list[str]:
    """Distinct action names, for the audit page's filter."""
    return list(
        AuditEntry.objects.order_by("action")
        .values_list("action", flat=True)
        .distinct()
    )


def _cursor_decode(cursor: str) -> tuple[datetime, int]:
    decoded = cursor_decode(cursor)
    if decoded is None:
        raise DomainError(
            "The cursor is not one this server gave out; start again without it.",
            code="invalid_cursor",
        )
    return decoded
