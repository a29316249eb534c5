"""Reads of commands, for the API and the pages."""

import uuid

from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.control.models import (
    OPEN_COMMAND_STATES,
    Command,
    CommandKind,
    CommandState,
)
from pi_dashboard.fleet.models import Host
from pi_dashboard.lib.errors import NotFound


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
