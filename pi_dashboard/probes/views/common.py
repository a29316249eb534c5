"""What every probes view shares."""

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role


def user_of(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


def page(
    request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    context.setdefault("can_operate", has_role(request.user, Role.OPERATOR))
    return render(request, template, context, status=status)


def is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


MAX_FILTER_CHARS = 600


def query_text(request: HttpRequest, name: str) -> str:
    """A free-text filter from the query string; one PostgreSQL cannot hold (NUL) or
    no row can match (too long) filters nothing rather than answering 500."""
    value = request.GET.get(name, "")
    if "\x00" in value or len(value) > MAX_FILTER_CHARS:
        return ""
    return value
