"""Domain errors that escape a page view become their 4xx page, never a 500.

The API maps them in `pi_dashboard/api.py`; this is the same mapping for the pages:
NotFound is a 404, Conflict a 409, any other DomainError its own status.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from pi_dashboard.lib.errors import DomainError


class DomainErrorPages:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if not isinstance(exception, DomainError):
            return None
        context = {"status": exception.status, "detail": exception.detail}
        return render(request, "error.html", context, status=exception.status)
