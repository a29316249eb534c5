"""Users and roles for admins, outside the Django admin (issue 12 item 14).

Invite (a one-time password, shown once), change a role, deactivate or re-activate;
each is a service call, audited whether it is allowed or refused.
"""

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from pi_dashboard.accounts import selectors, services
from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit.audit import client_ip
from pi_dashboard.lib.errors import DomainError


class InviteForm(forms.Form):
    username = forms.RegexField(
        regex=r"^[\w.@+-]+\Z",
        max_length=services.MAX_USERNAME,
        error_messages={"invalid": "Letters, digits and @ . + - _ only."},
    )
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


def _page(
    request: HttpRequest,
    form: InviteForm,
    invited: tuple[User, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "form": form,
        "people": selectors.user_list(),
        "roles": Role.choices,
        "invited": invited[0] if invited else None,
        "password": invited[1] if invited else None,
        "login_url": request.build_absolute_uri("/login/"),
    }
    return render(request, "accounts/user_list.html", context, status=status)


@never_cache
@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def users(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, InviteForm())
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        invited = services.user_invite(
            actor=cast(User, request.user),
            username=form.cleaned_data["username"],
            email=form.cleaned_data["email"],
            role=Role(form.cleaned_data["role"]),
            ip_address=client_ip(request),
        )
    except DomainError as error:
        form.add_error("username", error.detail)
        return _page(request, form, status=400)
    # Rendered, not redirected: the password exists only in this one response.
    return _page(request, InviteForm(), invited)


@require_POST
@role_required(Role.ADMIN)
def user_role(request: HttpRequest, user_id: int) -> HttpResponse:
    person = get_object_or_404(User, pk=user_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose viewer, operator or admin.")
        return redirect("accounts:users")
    role = Role(form.cleaned_data["role"])
    try:
        services.user_set_role(
            actor=cast(User, request.user),
            user=person,
            role=role,
            ip_address=client_ip(request),
        )
    except DomainError as error:
        messages.error(request, error.detail)
    else:
        messages.success(request, f"{person.get_username()} is now {role.label}.")
    return redirect("accounts:users")


@require_POST
@role_required(Role.ADMIN)
def user_active(request: HttpRequest, user_id: int, is_active: bool) -> HttpResponse:
    person = get_object_or_404(User, pk=user_id)
    try:
        services.user_set_active(
            actor=cast(User, request.user),
            user=person,
            is_active=is_active,
            ip_address=client_ip(request),
        )
    except DomainError as error:
        messages.error(request, error.detail)
    else:
        done = "re-activated" if is_active else "deactivated"
        messages.success(request, f"{person.get_username()} is {done}.")
    return redirect("accounts:users")
