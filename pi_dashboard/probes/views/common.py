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


MAX_FILTER_CHARS = 600


def query_text(request: HttpRequest, name: str) -> str:
    """A free-text filter from the query string; one no row can match (too long)
    filters nothing rather than costing a scan. NUL never gets here (the request
    guard middleware answers 400)."""
    value = request.GET.get(name, "")
    return "" if len(value) > MAX_FILTER_CHARS else value
