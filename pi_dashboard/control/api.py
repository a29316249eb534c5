"""Control API: agents pull and ack commands; people create and read them.

Agents authenticate with their agent token; people with an operator token or their
browser session. Roles: viewer reads, operator creates commands.
"""

import uuid
from typing import Any, cast

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Query, Router, Status

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.audit.audit import client_ip
from pi_dashboard.control import selectors, services
from pi_dashboard.control.schemas import (
    AckIn,
    AckOut,
    AgentCommandsOut,
    CommandCreateIn,
    CommandFiltersIn,
    CommandOut,
    CommandsOut,
    PullQuery,
)
from pi_dashboard.fleet.auth import agent_auth
from pi_dashboard.fleet.models import Agent
from pi_dashboard.lib.schemas import ErrorOut

router = Router(tags=["control"])


def _agent(request: HttpRequest) -> Agent:
    return cast(Agent, request.agent)  # type: ignore[attr-defined]


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


@router.get(
    "/agent/commands",
    auth=agent_auth,
    response={200: AgentCommandsOut, 401: ErrorOut, 409: ErrorOut},
)
def pull_commands(request: HttpRequest, query: Query[PullQuery]) -> dict[str, Any]:
    """Open commands for the agent's host; with `wait`, long-polls up to that long."""
    commands = services.commands_pull(agent=_agent(request), wait_seconds=query.wait)
    return {"commands": commands}


@router.post(
    "/agent/commands/{command_id}/ack",
    auth=agent_auth,
    response={200: AckOut, 400: ErrorOut, 401: ErrorOut, 404: ErrorOut, 409: ErrorOut},
)
def ack_command(
    request: HttpRequest, command_id: uuid.UUID, payload: AckIn
) -> dict[str, Any]:
    """Report a command's outcome; 409 when it expired, harmless when repeated."""
    command = services.command_ack(
        agent=_agent(request),
        command_id=command_id,
        status=payload.status,
        result=payload.result,
        detail=payload.detail,
    )
    return {"id": command.pk, "state": command.state}


@router.post(
    "/commands",
    auth=operator_auth,
    response={201: CommandOut, 400: ErrorOut, 401: ErrorOut, 403: ErrorOut},
)
def create_command(request: HttpRequest, payload: CommandCreateIn) -> Any:
    """Queue a command for the agent on a host (operator role)."""
    require_role(request, Role.OPERATOR, action="api:create_command")
    command = services.command_create(
        actor=_user(request),
        host=payload.host,
        model=payload.model,
        kind=payload.kind,
        params=payload.params,
        ip_address=client_ip(request),
    )
    return Status(201, selectors.command_get(command_id=command.pk))


@router.get(
    "/commands",
    auth=operator_auth,
    response={200: CommandsOut, 401: ErrorOut, 403: ErrorOut},
)
def list_commands(
    request: HttpRequest, query: Query[CommandFiltersIn]
) -> dict[str, Any]:
    """Commands, newest first, filtered by pi host id, model key, state or kind."""
    require_role(request, Role.VIEWER, action="api:list_commands")
    commands = selectors.command_list(
        host=query.host,
        model=query.model,
        state=query.state,
        kind=query.kind,
        limit=query.limit,
    )
    return {"commands": commands}


@router.get(
    "/commands/{command_id}",
    auth=operator_auth,
    response={200: CommandOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut},
)
def get_command(request: HttpRequest, command_id: uuid.UUID) -> Any:
    """One command with its live state."""
    require_role(request, Role.VIEWER, action="api:get_command")
    return selectors.command_get(command_id=command_id)
