"""Guards in front of every URL: requests no view can handle, a database that is down.

- NUL in the path or the query string reaches PostgreSQL as a filter value or a key,
  and PostgreSQL refuses it with an error that surfaces as a 500 from whichever view
  ran the query; refusing it here fixes every endpoint and page at once.
- With PostgreSQL unreachable a page answers 503 with Retry-After instead of 500 (the
  API's own exception handler does the same for /api/, see `pi_dashboard.api`).
"""

from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

DB_DOWN_RETRY_AFTER_SECONDS = 30


def _wants_json(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def error_response(
    request: HttpRequest, *, status: int, detail: str, code: str
) -> HttpResponse:
    """`{"detail", "code"}` under /api/, a short plain page elsewhere."""
    if _wants_json(request):
        return JsonResponse({"detail": detail, "code": code}, status=status)
    return HttpResponse(detail, status=status, content_type="text/plain; charset=utf-8")


def database_down_response(request: HttpRequest) -> HttpResponse:
    detail = "The database is unavailable; retry later."
    if _wants_json(request):
        response: HttpResponse = JsonResponse(
            {"detail": detail, "code": "database_down"}, status=503
        )
    else:
        # A template of its own: base.html reads the user, i.e. the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(DB_DOWN_RETRY_AFTER_SECONDS)
    return response


def nul_problem(request: HttpRequest) -> str | None:
    """Where a NUL is, or None; the query is checked raw (`%00` and literal NUL)."""
    if "\x00" in request.path_info:
        return "The path holds a NUL character."
    query = request.META.get("QUERY_STRING", "")
    if "%00" in query or "\x00" in query or b"\x00" in unquote_to_bytes(query):
        return "The query string holds a NUL character."
    return None


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = nul_problem(request)
        if problem is not None:
            return error_response(
                request, status=400, detail=problem, code="nul_in_request"
            )
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError):
            return database_down_response(request)
        return None
