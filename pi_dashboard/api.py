"""The one NinjaAPI, mounted at /api/v1/. Each app contributes one router."""

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.types import DictStrAny

from pi_dashboard.lib import jsonsafe, middleware, openapidoc
from pi_dashboard.lib.errors import DomainError


class SafeJSONParser(Parser):
    """Request bodies through `jsonsafe`: its depth and number limits, and no text
    PostgreSQL cannot store (json.loads would recurse past the stack or hand huge
    integers and NUL on to the database)."""

    def parse_body(self, request: HttpRequest) -> DictStrAny:
        return jsonsafe.loads_strict(request.body)  # type: ignore[no-any-return]


class PiNinjaAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(*args, **kwargs)
        return openapidoc.common_errors_document(schema)


api = PiNinjaAPI(
    title="pi-dashboard API",
    version="1",
    description=(
        "Ingest for pi-dashboard-agent (agent tokens) and the operator API "
        "(operator tokens or a browser session). Errors have the body "
        '`{"detail": ..., "code": ...}`.'
    ),
    docs_url="/docs",
    urls_namespace="api",
    parser=SafeJSONParser(),
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
    response = _error(
        request, 401, "Missing, unknown or revoked token.", "unauthorized"
    )
    # RFC 9110: a 401 names the scheme that would work (agent and operator tokens).
    response["WWW-Authenticate"] = 'Bearer realm="pi-dashboard"'
    return response


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return _error(
        request, 422, "Invalid request.", "invalid_request", errors=exc.errors
    )


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    cause = exc.__cause__
    if isinstance(cause, jsonsafe.JSONLineError):
        # ninja wraps every parser error in "Cannot parse request body"; say which.
        return _error(request, 400, f"The request body: {cause}.", cause.code)
    return _error(request, exc.status_code, str(exc), f"http_{exc.status_code}")


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def on_database_down(request: HttpRequest, exc: Exception) -> HttpResponse:
    logging.getLogger("pi_dashboard.api").warning("Database unavailable: %s", exc)
    return middleware.database_down_response(request)


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
    from pi_dashboard.audit.api import router as audit_router
    from pi_dashboard.control.api import router as control_router
    from pi_dashboard.fleet.api import router as fleet_router
    from pi_dashboard.fleet.tokens_api import router as agent_tokens_router
    from pi_dashboard.ingest.agent_api import router as agent_router
    from pi_dashboard.ingest.api import router as ingest_router
    from pi_dashboard.probes.api import router as probes_router

    api.add_router("/", ingest_router)
    api.add_router("/", agent_router)
    api.add_router("/", fleet_router)
    api.add_router("/", agent_tokens_router)
    api.add_router("/", control_router)
    api.add_router("/", audit_router)
    api.add_router("/", probes_router)
    api.add_router("/", alerts_router)


_register_routers()
