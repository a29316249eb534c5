"""The one NinjaAPI, mounted at /api/v1/. Each app contributes one router."""

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from pi_dashboard.lib.errors import DomainError

api = NinjaAPI(
    title="pi-dashboard API",
    version="1",
    description=(
        "Ingest for pi-dashboard-agent (agent tokens) and the operator API "
        "(operator tokens or a browser session). Errors have the body "
        '`{"detail": ..., "code": ...}`.'
    ),
    docs_url="/docs",
    urls_namespace="api",
)


def _error(
    request: HttpRequest, status: int, detail: str, code: str, **extra: object
) -> HttpResponse:
    """The one error body of the API: `{"detail", "code"}` (plus `extra`)."""
    return api.create_response(
        request, {"detail": detail, "code": code, **extra}, status=status
    )


@api.exception_handler(DomainError)
def on_domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    return _error(request, exc.status, exc.detail, exc.code)


@api.exception_handler(AuthenticationError)
def on_auth_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, 401, "Missing, unknown or revoked token.", "unauthorized")


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return _error(
        request, 422, "Invalid request.", "invalid_request", errors=exc.errors
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _error(request, exc.status_code, str(exc), f"http_{exc.status_code}")


# Ingest (issue #2): a body Django refuses to read (over DATA_UPLOAD_MAX_MEMORY_SIZE)
# and any unexpected error answer JSON too: no HTML page ever comes out of /api/.
@api.exception_handler(RequestDataTooBig)
def on_body_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _error(request, 413, "The request body is too large.", "too_large")


@api.exception_handler(Exception)
def on_unexpected_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    logging.getLogger("pi_dashboard.api").exception("Unhandled API error")
    return _error(request, 500, "Internal error.", "server_error")


def api_not_found(
    request: HttpRequest, *args: object, **kwargs: object
) -> HttpResponse:
    return JsonResponse(
        {"detail": f"No API endpoint at {request.path}.", "code": "not_found"},
        status=404,
    )


def _register_routers() -> None:
    # Imported here so that each app's router module can import `api` helpers freely.
    from pi_dashboard.alerts.api import router as alerts_router
    from pi_dashboard.control.api import router as control_router
    from pi_dashboard.fleet.api import router as fleet_router
    from pi_dashboard.ingest.api import router as ingest_router
    from pi_dashboard.probes.api import router as probes_router

    api.add_router("/", ingest_router)
    api.add_router("/", fleet_router)
    api.add_router("/", control_router)
    api.add_router("/", probes_router)
    api.add_router("/", alerts_router)


_register_routers()
