"""Endpoints, their probe runs and transcripts, and drift."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit import audit
from pi_dashboard.lib.errors import DomainError, Forbidden
from pi_dashboard.lib.htmx import STOP_POLLING, is_htmx
from pi_dashboard.probes import selectors, services
from pi_dashboard.probes.forms import EndpointForm
from pi_dashboard.probes.models import Endpoint, Trigger
from pi_dashboard.probes.views.common import page, query_text, user_of


@require_GET
@role_required(Role.VIEWER)
def endpoint_list(request: HttpRequest) -> HttpResponse:
    tag = query_text(request, "tag")
    endpoints = selectors.endpoint_list(
        tag=tag, provider=query_text(request, "provider")
    )
    return page(
        request, "probes/endpoint_list.html", {"endpoints": endpoints, "tag": tag}
    )


def _form_page(
    request: HttpRequest,
    form: EndpointForm,
    endpoint: Endpoint | None,
    status: int = 200,
) -> HttpResponse:
    return page(
        request,
        "probes/endpoint_form.html",
        {"form": form, "endpoint": endpoint},
        status=status,
    )


def _initial(endpoint: Endpoint) -> dict[str, object]:
    return {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "server_model": endpoint.server_model,
        "model_key": endpoint.model_key,
        "api_key_env": endpoint.api_key_env,
        "timeout_seconds": endpoint.timeout_seconds,
        "token_param": endpoint.token_param,
        "is_streaming": endpoint.is_streaming,
        "tags": ", ".join(endpoint.tags),
        "trials": endpoint.trials,
        "max_concurrent_probes": endpoint.max_concurrent_probes,
        "is_enabled": endpoint.is_enabled,
    }


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def endpoint_form(request: HttpRequest, endpoint_id: int | None = None) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id) if endpoint_id else None
    if request.method == "GET":
        initial = _initial(endpoint) if endpoint else {}
        return _form_page(request, EndpointForm(initial=initial), endpoint)
    form = EndpointForm(request.POST)
    if not form.is_valid():
        return _form_page(request, form, endpoint, status=400)
    data = form.data_for_service()
    try:
        endpoint = (
            services.endpoint_update(endpoint=endpoint, data=data, **audit.who(request))
            if endpoint
            else services.endpoint_create(data=data, **audit.who(request))
        )
    except DomainError as exc:
        form.add_error(None, exc.detail)
        status = 403 if isinstance(exc, Forbidden) else 400
        return _form_page(request, form, endpoint, status=status)
    messages.success(request, f"Saved endpoint {endpoint.name}.")
    return redirect("probes:endpoint", endpoint_id=endpoint.pk)


@require_POST
@role_required(Role.OPERATOR)
def endpoint_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id)
    services.endpoint_delete(endpoint=endpoint, **audit.who(request))
    messages.success(request, f"Deleted endpoint {endpoint.name}.")
    return redirect("probes:endpoints")


@require_GET
@role_required(Role.VIEWER)
def endpoint_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id)
    runs = selectors.run_list(endpoint_id=endpoint.pk)[:50]
    latest = next((r for r in runs if r.is_terminal), None)
    return page(
        request,
        "probes/endpoint_detail.html",
        {
            "endpoint": endpoint,
            "runs": runs,
            "latest": latest,
            "exchanges": latest.exchanges.all() if latest else [],
            "drifts": selectors.drift_list().filter(endpoint=endpoint)[:20],
            "active": selectors.active_runs(endpoint_id=endpoint.pk).first(),
        },
    )


@require_POST
@role_required(Role.OPERATOR)
def endpoint_probe(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id)
    try:
        run = services.probe_request(
            endpoint=endpoint,
            user=user_of(request),
            trigger=Trigger.MANUAL,
            ip_address=audit.client_ip(request),
        )
    except DomainError as exc:
        if is_htmx(request):
            body = format_html('<p class="alert alert-error">{}</p>', exc.detail)
            return HttpResponse(body, status=409)
        messages.error(request, exc.detail)
        return redirect("probes:endpoint", endpoint_id=endpoint.pk)
    if is_htmx(request):
        return page(request, "probes/_run_status.html", {"run": run})
    messages.success(request, "Probe started.")
    return redirect("probes:endpoint", endpoint_id=endpoint.pk)


@require_GET
@role_required(Role.VIEWER)
def run_status(request: HttpRequest, run_id: int) -> HttpResponse:
    """The live status fragment; polling stops (286) once the run has ended."""
    run = selectors.run_get(run_id=run_id)
    response = page(request, "probes/_run_status.html", {"run": run})
    if run.is_terminal:
        response.status_code = STOP_POLLING if is_htmx(request) else 200
    return response


@require_GET
@role_required(Role.VIEWER)
def run_list(request: HttpRequest) -> HttpResponse:
    runs = selectors.run_list(state=query_text(request, "state"))[:200]
    return page(request, "probes/run_list.html", {"runs": runs})


@require_GET
@role_required(Role.VIEWER)
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(selectors.run_list(), pk=run_id)
    return page(
        request,
        "probes/run_detail.html",
        {
            "run": run,
            "exchanges": run.exchanges.all(),
            "tool_probe": selectors.pi_order(run.tool_probe, selectors.TOOL_PROBE_KEYS),
            "protocol": selectors.pi_order(run.protocol, selectors.PROTOCOL_KEYS),
        },
    )


@require_GET
@role_required(Role.VIEWER)
def drift_list(request: HttpRequest) -> HttpResponse:
    drifts = selectors.drift_list(model_key=query_text(request, "model"))[:200]
    return page(request, "probes/drift_list.html", {"drifts": drifts})
