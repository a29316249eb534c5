"""Reads of commands and the audit log, for the API, the pages and the CSV export."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone

from pi_dashboard.control.models import (
    OPEN_COMMAND_STATES,
    AuditEntry,
    Command,
    CommandKind,
    CommandState,
)
from pi_dashboard.fleet.models import Host
from pi_dashboard.lib.cursor import cursor_decode, cursor_encode
from pi_dashboard.lib.errors import DomainError, NotFound


def command_list(
    *,
    host: str = "",
    model: str = "",
    state: str = "",
    kind: str = "",
    limit: int = 100,
) -> list[Command]:
    """Newest first; filters are exact pi host id / model key / state / kind."""
    commands = Command.objects.select_related("host", "model", "created_by")
    if host:
        commands = commands.filter(host__pi_id=host)
    if model:
        commands = commands.filter(model__key=model)
    if state:
        commands = commands.filter(state=state)
    if kind:
        commands = commands.filter(kind=kind)
    return list(commands[:limit])


def command_get(*, command_id: uuid.UUID) -> Command:
    command = (
        Command.objects.select_related("host", "model", "created_by")
        .filter(pk=command_id)
        .first()
    )
    if command is None:
        raise NotFound(f"No command with id {command_id}.")
    return command


def command_open_for_host(*, host_id: int) -> QuerySet[Command]:
    """A host's commands that an agent may still be handed, oldest first."""
    return Command.objects.filter(
        host_id=host_id,
        state__in=OPEN_COMMAND_STATES,
        expires_at__gt=timezone.now(),
    ).order_by("created_at")


def removals_in_flight(
    *, host: Host, model_ids: list[int]
) -> dict[int, dict[str, uuid.UUID]]:
    """Per model, the modes an operator's remove-rule command is taking away now.

    Delivered or applied and not yet confirmed (the agent may ship the store before
    its ack), minus those pi answered `removed: false` for: pi had already pruned
    that rule itself. The history names such a removal with its command.
    """
    rows = (
        Command.objects.filter(
            host=host,
            model_id__in=model_ids,
            kind=CommandKind.REMOVE_RULE,
            state__in=(CommandState.DELIVERED, CommandState.APPLIED),
            confirmed_at__isnull=True,
        )
        .exclude(result__removed=False)
        .order_by("created_at")
        .values_list("model_id", "params", "pk")
    )
    found: dict[int, dict[str, uuid.UUID]] = {}
    for model_id, params, pk in rows:
        if isinstance(params, dict) and isinstance(params.get("mode"), str):
            found.setdefault(model_id, {})[params["mode"]] = pk
    return found


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
