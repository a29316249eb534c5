"""API authentication for agents: `Authorization: Bearer pid_ag_…`."""

from typing import Any, cast

from django.http import HttpRequest
from ninja.security import HttpBearer

from pi_dashboard.fleet.models import Agent
from pi_dashboard.lib.tokens import token_hash

AGENT_TOKEN_PREFIX = "pid_ag"  # noqa: S105 (a prefix, not a secret)


class AgentRequest(HttpRequest):
    """A request that `agent_auth` let in: it carries the token's agent."""

    agent: Agent


class AgentTokenAuth(HttpBearer):
    """Resolves an active agent and sets `request.agent`."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        if not token.startswith(AGENT_TOKEN_PREFIX + "_"):
            return None
        agent = (
            Agent.objects.select_related("host")
            .filter(token_hash=token_hash(token), revoked_at__isnull=True)
            .first()
        )
        if agent is None:
            return None
        cast(AgentRequest, request).agent = agent
        return agent


agent_auth = AgentTokenAuth()
