"""Fleet API: agent identity and heartbeat (agent token), operator reads (viewer)."""

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Query, Router, Schema

from pi_dashboard.accounts.auth import operator_auth, require_role
from pi_dashboard.accounts.models import Role
from pi_dashboard.fleet import selectors, services
from pi_dashboard.fleet.auth import agent_auth
from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.fleet.schemas import (
    ChangeOut,
    HeartbeatOut,
    HostDetailOut,
    HostModelStateOut,
    HostOut,
    ModelDetailOut,
    ModelOut,
    WhoamiOut,
)
from pi_dashboard.ingest import contracts, lines
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.schemas import ErrorOut

router = Router(tags=["fleet"])

AGENT_ERRORS = {400: ErrorOut, 401: ErrorOut, 413: ErrorOut}
READ_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut}


class InvalidHeartbeat(DomainError):
    code = "invalid_heartbeat"


@router.get("/agent/whoami", auth=agent_auth, response={200: WhoamiOut, **AGENT_ERRORS})
def agent_whoami(request: HttpRequest) -> Any:
    """Identify the agent that owns this token (checks URL and token)."""
    agent: Agent = request.agent  # type: ignore[attr-defined]
    services.agent_contact(agent=agent)
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
    response={200: HeartbeatOut, 415: ErrorOut, **AGENT_ERRORS},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": contracts.schema_document("heartbeat")}
            },
        }
    },
)
def agent_heartbeat(request: HttpRequest) -> Any:
    """Bind the agent to its pi host and record versions and shipping lag."""
    try:
        beat, _ = jsonsafe.loads(lines.request_body(request))
    except jsonsafe.JSONLineError as exc:
        raise InvalidHeartbeat(f"The heartbeat is not valid JSON: {exc}.") from exc
    problem = contracts.violation("heartbeat", beat)
    if problem is not None:
        raise InvalidHeartbeat(jsonsafe.sanitise_text(f"Invalid heartbeat: {problem}"))
    host = services.agent_heartbeat(
        agent=request.agent,  # type: ignore[attr-defined]
        beat=jsonsafe.sanitise(beat),
    )
    return {
        "server_time": timezone.now(),
        "poll_interval": settings.PI_AGENT_POLL_SECONDS,
        "host": host.pi_id,
    }


# --- operator reads -----------------------------------------------------------------


def _host_out(host: Host) -> dict[str, Any]:
    agents = list(host.agents.all())
    return {
        "id": host.pi_id,
        "cpu": host.cpu,
        "cores": host.cores,
        "total_mem_gb": host.total_mem_gb,
        "first_seen_at": host.first_seen_at,
        "last_snapshot_at": host.last_snapshot_at,
        "last_contact_at": host.last_contact_at,
        "hostnames": sorted({a.hostname for a in agents if a.hostname}),
        "model_count": getattr(host, "model_count", 0),
    }


def _summary_out(hm: HostModel) -> dict[str, Any]:
    return {
        "host": hm.host.pi_id,
        "model": hm.model.key,
        "probe_status": hm.probe_status,
        "probe_grade": hm.probe_grade,
        "probe_variant": hm.probe_variant,
        "probed_at": hm.probed_at,
        "protocol_status": hm.protocol_status,
        "protocol_variant": hm.protocol_variant,
        "rule_count": hm.rule_count,
        "entry_at": hm.entry_at,
    }


def _model_out(model: Model) -> dict[str, Any]:
    return {
        "key": model.key,
        "provider": model.provider,
        "model_id": model.model_id,
        "host_count": getattr(model, "host_count", 0),
    }


@router.get("/hosts", auth=operator_auth, response={200: list[HostOut], **READ_ERRORS})
def list_hosts(request: HttpRequest) -> Any:
    """List pi hosts (fingerprints) with the hostnames of their agents."""
    require_role(request, Role.VIEWER, action="api:list_hosts")
    return [_host_out(host) for host in selectors.host_list()]


@router.get(
    "/hosts/{host_id}", auth=operator_auth, response={200: HostDetailOut, **READ_ERRORS}
)
def get_host(request: HttpRequest, host_id: str) -> Any:
    """Show one host: its agents and the state summary of each of its models."""
    require_role(request, Role.VIEWER, action="api:get_host")
    host = selectors.host_get(pi_id=host_id)
    return {
        **_host_out(host),
        "agents": [
            {**a.__dict__, "id": a.pk, "is_active": a.is_active}
            for a in host.agents.all()
        ],
        "models": [_summary_out(hm) for hm in selectors.host_models_of_host(host=host)],
    }


@router.get(
    "/models", auth=operator_auth, response={200: list[ModelOut], **READ_ERRORS}
)
def list_models(request: HttpRequest) -> Any:
    """List models (pi's provider/modelId keys) and on how many hosts each runs."""
    require_role(request, Role.VIEWER, action="api:list_models")
    return [_model_out(model) for model in selectors.model_list()]


@router.get(
    "/models/{path:key}",
    auth=operator_auth,
    response={200: ModelDetailOut, **READ_ERRORS},
)
def get_model(request: HttpRequest, key: str) -> Any:
    """Show one model and its state summary on every host."""
    require_role(request, Role.VIEWER, action="api:get_model")
    model = selectors.model_get(key=key)
    hosts = [_summary_out(hm) for hm in selectors.host_models_of_model(model=model)]
    return {**_model_out(model), "hosts": hosts}


class HistoryQuery(Schema):
    limit: int = Field(200, ge=1, le=1000)


@router.get(
    "/hosts/{host_id}/models/{path:key}/history",
    auth=operator_auth,
    response={200: list[ChangeOut], **READ_ERRORS},
)
def list_host_model_history(
    request: HttpRequest, host_id: str, key: str, query: Query[HistoryQuery]
) -> Any:
    """List changes seen between snapshots of one host × model, newest first."""
    require_role(request, Role.VIEWER, action="api:list_host_model_history")
    host_model = selectors.host_model_get(pi_id=host_id, key=key)
    return selectors.change_list(host_model=host_model, limit=query.limit)


@router.get(
    "/hosts/{host_id}/models/{path:key}",
    auth=operator_auth,
    response={200: HostModelStateOut, **READ_ERRORS},
)
def get_host_model(request: HttpRequest, host_id: str, key: str) -> Any:
    """Show what one host has learned about one model: rules, probe, protocol."""
    require_role(request, Role.VIEWER, action="api:get_host_model")
    host_model = selectors.host_model_get(pi_id=host_id, key=key)
    entry = selectors.host_model_entry(host_model)
    profile = entry.get("profile", {})
    return {
        **_summary_out(host_model),
        "rules": selectors.rules_described(entry, now=timezone.now()),
        "protocol": profile.get("protocol"),
        "toolProbe": profile.get("toolProbe"),
        "teachStats": profile.get("teachStats", {}),
        "perf": profile.get("perf"),
        "entry": entry,
    }
