"""Counts every answered request for /metrics (method and status class)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from pi_dashboard.lib import counters


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        counters.count(
            "pi_dashboard_http_requests",
            {
                "method": request.method or "",
                "status": f"{response.status_code // 100}xx",
            },
        )
        return response
