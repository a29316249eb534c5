"""“My API tokens”: create one (the secret is shown once), revoke one."""

from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from pi_dashboard.accounts import selectors, services
from pi_dashboard.accounts.models import ApiToken, Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit.audit import client_ip
from pi_dashboard.lib.errors import DomainError


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        max_length=services.MAX_TOKEN_NAME,
        help_text="Where it will be used, e.g. “CI pipeline” or “my laptop”.",
    )


@never_cache
@require_http_methods(["GET", "POST"])
@role_required(Role.VIEWER)
def tokens(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    form = TokenCreateForm(request.POST or None)
    secret = None
    if request.method == "POST" and form.is_valid():
        try:
            _, secret = services.api_token_issue(
                actor=user,
                user=user,
                name=form.cleaned_data["name"],
                ip_address=client_ip(request),
            )
        except DomainError as error:
            form.add_error("name", error.detail)
        else:
            form = TokenCreateForm()
    context = {
        "form": form,
        "secret": secret,
        "tokens": selectors.api_token_list(user=user),
    }
    # Rendered, not redirected: the secret exists only in this one response.
    return render(request, "accounts/token_list.html", context)


@require_POST
@role_required(Role.VIEWER)
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    user = cast(User, request.user)
    token = get_object_or_404(ApiToken.objects.select_related("user"), pk=token_id)
    try:
        services.api_token_revoke(
            actor=user, token=token, ip_address=client_ip(request)
        )
    except DomainError as error:
        messages.error(request, error.detail)
        return redirect("accounts:tokens")
    messages.success(request, f"Token “{token.name}” ({token.prefix}…) is revoked.")
    return redirect("accounts:tokens")
