"""Who may do what. Every page, action and API call checks here, on the server."""

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.template.loader import render_to_string

from pi_dashboard.accounts.models import ROLE_RANK, Role
from pi_dashboard.audit import audit
from pi_dashboard.audit.models import AuditOutcome

User = AbstractBaseUser | AnonymousUser


def role_of(user: User) -> Role | None:
    """The user's role, or None for anonymous or inactive users."""
    if not user.is_authenticated or not user.is_active:
        return None
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    profile = getattr(user, "profile", None)
    return Role(profile.role) if profile is not None else Role.VIEWER


def has_role(user: User, needed: Role) -> bool:
    role = role_of(user)
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[needed]


ViewFunc = Callable[..., HttpResponse]
# Any view, streaming ones included; the decorator keeps the view's own type.
AnyView = TypeVar("AnyView", bound=Callable[..., HttpResponseBase])


def role_required(needed: Role) -> Callable[[AnyView], AnyView]:
    """Login required, then the role; a refusal is a 403 and is audited."""

    def decorator(view: AnyView) -> AnyView:
        @wraps(view)
        def wrapper(
            request: HttpRequest, *args: Any, **kwargs: Any
        ) -> HttpResponseBase:
            if not has_role(request.user, needed):
                return refused_response(request, needed=needed, view=view.__name__)
            return view(request, *args, **kwargs)

        return cast(AnyView, login_required(wrapper))

    return decorator


def refused_response(request: HttpRequest, *, needed: Role, view: str) -> HttpResponse:
    """Audit a refused page or action and answer 403."""
    audit.audit_record(
        request=request,
        action=f"view:{view}" if request.method == "GET" else f"action:{view}",
        outcome=AuditOutcome.REFUSED,
        detail={
            "needed_role": needed.value,
            "path": request.path,
            "method": request.method,
        },
    )
    body = render_to_string("403.html", {"needed_role": needed.label}, request=request)
    return HttpResponse(body, status=403)
