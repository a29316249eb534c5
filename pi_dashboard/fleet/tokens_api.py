"""Agent tokens over the API: list, issue (the secret is shown once) and revoke.

Admins only, by role (a Django superuser is not required); every call, allowed or
refused, is audited.
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.fleet import selectors, services
from pi_dashboard.fleet.models import Agent
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.schemas import ErrorOut

router = Router(tags=["agent tokens"], auth=operator_auth)
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class AgentTokenIn(Schema):
    name: str = Field(min_length=1, max_length=200, description="Who the agent is.")


class AgentTokenOut(Schema):
    id: UUID
    name: str
    token_prefix: str
    host: str | None = Field(None, description="The pi host id it is bound to.")
    hostname: str
    created_at: datetime
    last_contact_at: datetime | None
    revoked_at: datetime | None


class AgentTokenIssuedOut(AgentTokenOut):
    token: str = Field(description="The secret; shown this once, never again.")


def agent_out(agent: Agent) -> dict[str, Any]:
    fields = AgentTokenOut.model_fields
    out = {f: getattr(agent, f) for f in fields if f != "host"}
    return {**out, "host": agent.host.pi_id if agent.host is not None else None}


def _actor(request: HttpRequest) -> str:
    return f"api:{request.user.get_username()}"


@router.get("/agents", response={200: list[AgentTokenOut], **ERRORS})
def list_agents(request: HttpRequest) -> Any:
    """Agents and their token prefixes, never the tokens (admin)."""
    require_role(request, Role.ADMIN, action="api:list_agents")
    return [agent_out(a) for a in selectors.agent_list()]


@router.post("/agents", response={201: AgentTokenIssuedOut, **ERRORS})
def issue_agent_token(request: HttpRequest, payload: AgentTokenIn) -> Any:
    """Create an agent and its token; the secret is in this answer only (admin)."""
    require_role(request, Role.ADMIN, action="api:issue_agent_token")
    if not payload.name.strip():
        raise DomainError("Give the agent a name.", code="invalid_name")
    agent, secret = services.agent_issue(
        name=payload.name.strip(), actor=_actor(request)
    )
    return Status(201, {**agent_out(agent), "token": secret})


@router.post("/agents/{agent_id}/revoke", response={200: AgentTokenOut, **ERRORS})
def revoke_agent_token(request: HttpRequest, agent_id: UUID) -> Any:
    """Stop the agent's token working; its data stays (admin)."""
    require_role(request, Role.ADMIN, action="api:revoke_agent_token")
    agent = selectors.agent_get(agent_id=agent_id)
    services.agent_revoke(agent=agent, actor=_actor(request))
    return agent_out(agent)
