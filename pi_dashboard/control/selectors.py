"""Reads of commands, for the API and the pages."""

import uuid

from django.db.models import QuerySet
from django.utils import timezone

from pi_dashboard.control.models import OPEN_COMMAND_STATES, Command
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
