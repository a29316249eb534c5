"""The agent's own calls beside its uploads: identity (whoami) and heartbeat.

Here, not in fleet: reading what an agent sends (its JSON, against pi's contracts)
is ingest's job; fleet only records the contact.
"""

from typing import Any

from django.conf import settings
from django.utils import timezone
from ninja import Router

from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.auth import AgentRequest, agent_auth
from pi_dashboard.fleet.schemas import HeartbeatOut, WhoamiOut
from pi_dashboard.ingest import contracts, lines
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.schemas import ErrorOut

# The OpenAPI document keeps these under "fleet", where they always were.
router = Router(tags=["fleet"])

AGENT_ERRORS = {400: ErrorOut, 401: ErrorOut, 413: ErrorOut}


class InvalidHeartbeat(DomainError):
    code = "invalid_heartbeat"


@router.get("/agent/whoami", auth=agent_auth, response={200: WhoamiOut, **AGENT_ERRORS})
def agent_whoami(request: AgentRequest) -> Any:
    """Identify the agent that owns this token (checks URL and token)."""
    agent = request.agent
    fleet_services.agent_contact(agent=agent)
    return {
        "agent_id": agent.pk,
        "name": agent.name,
        "host": agent.host.pi_id if agent.host is not None else None,
        "server_time": timezone.now(),
        "poll_interval": settings.PI_AGENT_POLL_SECONDS,
    }


@router.post(
    "/agent/heartbeat",
    auth=agent_auth,
    response={200: HeartbeatOut, 409: ErrorOut, 415: ErrorOut, **AGENT_ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": contracts.schema_document("heartbeat")}
            },
        }
    },
)
def agent_heartbeat(request: AgentRequest) -> Any:
    """Bind the agent to its pi host (409 if bound to another) and record its report."""
    try:
        beat, _ = jsonsafe.loads(lines.request_body(request))
    except jsonsafe.JSONLineError as exc:
        raise InvalidHeartbeat(f"The heartbeat is not valid JSON: {exc}.") from exc
    problem = contracts.violation("heartbeat", beat)
    if problem is not None:
        raise InvalidHeartbeat(jsonsafe.sanitise_text(f"Invalid heartbeat: {problem}"))
    host = fleet_services.agent_heartbeat(
        agent=request.agent, beat=jsonsafe.sanitise(beat)
    )
    return {
        "server_time": timezone.now(),
        "poll_interval": settings.PI_AGENT_POLL_SECONDS,
        "host": host.pi_id,
    }
