"""Probes API: endpoints (CRUD), probing one now, and probe runs with transcripts.

People authenticate with an operator token or their session; viewers read, operators
change endpoints and run probes. Every change is audited.
"""

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Query, Router, Schema, Status

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.audit import audit
from pi_dashboard.lib.schemas import WRITE_ERRORS
from pi_dashboard.probes import selectors, services
from pi_dashboard.probes.models import Endpoint, ProbeRun, Trigger
from pi_dashboard.probes.schemas import (
    EndpointIn,
    EndpointOut,
    ProbeRunDetailOut,
    ProbeRunOut,
)

router = Router(tags=["probes"], auth=operator_auth)
ERRORS = WRITE_ERRORS


class RunFilters(Schema):
    endpoint_id: int | None = None
    state: str = ""
    limit: int = 100


def run_out(run: ProbeRun) -> dict[str, Any]:
    return {
        **{f: getattr(run, f) for f in ProbeRunOut.model_fields if hasattr(run, f)},
        "endpoint_name": run.endpoint.name,
        "tool_probe": selectors.pi_order(run.tool_probe, selectors.TOOL_PROBE_KEYS),
        "protocol": selectors.pi_order(run.protocol, selectors.PROTOCOL_KEYS),
    }


def endpoint_data(payload: EndpointIn) -> services.EndpointData:
    return services.EndpointData(**payload.dict())


@router.get("/endpoints", response={200: list[EndpointOut], **ERRORS})
def list_endpoints(request: HttpRequest, tag: str = "", provider: str = "") -> Any:
    """Model endpoints with their latest verdict."""
    require_role(request, Role.VIEWER, action="api:list_endpoints")
    return list(selectors.endpoint_list(tag=tag, provider=provider))


@router.post("/endpoints", response={201: EndpointOut, **ERRORS})
def create_endpoint(request: HttpRequest, payload: EndpointIn) -> Any:
    """Register an OpenAI-compatible endpoint (operator)."""
    require_role(request, Role.OPERATOR, action="api:create_endpoint")
    endpoint = services.endpoint_create(
        data=endpoint_data(payload),
        **audit.who(request),
    )
    return Status(201, endpoint)


@router.get("/endpoints/{endpoint_id}", response={200: EndpointOut, **ERRORS})
def get_endpoint(request: HttpRequest, endpoint_id: int) -> Endpoint:
    """One endpoint (secrets are never returned)."""
    require_role(request, Role.VIEWER, action="api:get_endpoint")
    return selectors.endpoint_get(endpoint_id=endpoint_id)


@router.put("/endpoints/{endpoint_id}", response={200: EndpointOut, **ERRORS})
def update_endpoint(request: HttpRequest, endpoint_id: int, payload: EndpointIn) -> Any:
    """Replace an endpoint's settings; omitted secrets are kept (operator)."""
    require_role(request, Role.OPERATOR, action="api:update_endpoint")
    endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
    return services.endpoint_update(
        endpoint=endpoint,
        data=endpoint_data(payload),
        **audit.who(request),
    )


@router.delete("/endpoints/{endpoint_id}", response={204: None, **ERRORS})
def delete_endpoint(request: HttpRequest, endpoint_id: int) -> Any:
    """Delete an endpoint and its probe history (operator)."""
    require_role(request, Role.OPERATOR, action="api:delete_endpoint")
    endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
    services.endpoint_delete(endpoint=endpoint, **audit.who(request))
    return Status(204, None)


@router.post("/endpoints/{endpoint_id}/probe", response={202: ProbeRunOut, **ERRORS})
def probe_endpoint(request: HttpRequest, endpoint_id: int) -> Any:
    """Probe the endpoint now; poll the returned run for its verdict (operator)."""
    require_role(request, Role.OPERATOR, action="api:probe_endpoint")
    endpoint = selectors.endpoint_get(endpoint_id=endpoint_id)
    user = request.user if isinstance(request.user, User) else None
    run = services.probe_request(
        endpoint=endpoint,
        user=user,
        trigger=Trigger.API,
        ip_address=audit.client_ip(request),
    )
    return Status(202, run_out(run))


@router.get("/probe-runs", response={200: list[ProbeRunOut], **ERRORS})
def list_probe_runs(request: HttpRequest, filters: Query[RunFilters]) -> Any:
    """Probe runs, newest first."""
    require_role(request, Role.VIEWER, action="api:list_probe_runs")
    runs = selectors.run_list(endpoint_id=filters.endpoint_id, state=filters.state)
    return [run_out(r) for r in runs[: max(1, min(filters.limit, 1000))]]


@router.get("/probe-runs/{run_id}", response={200: ProbeRunDetailOut, **ERRORS})
def get_probe_run(request: HttpRequest, run_id: int) -> Any:
    """One run with its requests and replies (redacted)."""
    require_role(request, Role.VIEWER, action="api:get_probe_run")
    run = selectors.run_get(run_id=run_id)
    return {**run_out(run), "exchanges": list(run.exchanges.all())}
