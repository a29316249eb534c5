"""Agents → tokens for admins (issue 12 item 5): issue, rotate, revoke in the UI.

A new or rotated token is rendered once, with the exact `pi-dashboard-agent enroll`
line to paste on the pi host; it is never stored, so the page is rendered, not
redirected to, and never cached.
"""

import uuid
from typing import cast

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.fleet import selectors, services
from pi_dashboard.fleet.models import Agent

MAX_AGENT_NAME = 200  # Agent.name


class AgentIssueForm(forms.Form):
    name = forms.CharField(
        max_length=MAX_AGENT_NAME,
        help_text="Which machine it runs on, e.g. “build-07”.",
    )


def actor_of(request: HttpRequest) -> str:
    return cast(User, request.user).get_username()


def server_url(request: HttpRequest) -> str:
    """This dashboard's base URL as the browser reached it: what the agent must use."""
    return request.build_absolute_uri("/").rstrip("/")


def _page(
    request: HttpRequest,
    form: AgentIssueForm,
    issued: tuple[Agent, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "form": form,
        "agents": selectors.agent_list(active_first=True),
        "issued_agent": issued[0] if issued else None,
        "secret": issued[1] if issued else None,
        "server_url": server_url(request),
    }
    return render(request, "accounts/agent_list.html", context, status=status)


@never_cache
@require_http_methods(["GET", "POST"])
@role_required(Role.ADMIN)
def agents(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, AgentIssueForm())
    form = AgentIssueForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    issued = services.agent_issue(
        name=form.cleaned_data["name"].strip(), actor=actor_of(request)
    )
    return _page(request, AgentIssueForm(), issued)


@never_cache
@require_POST
@role_required(Role.ADMIN)
def agent_rotate(request: HttpRequest, agent_id: uuid.UUID) -> HttpResponse:
    agent = get_object_or_404(Agent, pk=agent_id)
    secret = services.agent_rotate(agent=agent, actor=actor_of(request))
    return _page(request, AgentIssueForm(), (agent, secret))


@require_POST
@role_required(Role.ADMIN)
def agent_revoke(request: HttpRequest, agent_id: uuid.UUID) -> HttpResponse:
    agent = get_object_or_404(Agent, pk=agent_id)
    services.agent_revoke(agent=agent, actor=actor_of(request))
    messages.success(request, f"Agent “{agent.name}”'s token is revoked.")
    return redirect("fleet:agents")
