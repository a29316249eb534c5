"""Notification channels for drift, with a "send test" button."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.htmx import is_htmx
from pi_dashboard.probes import selectors, services
from pi_dashboard.probes.audit import audited
from pi_dashboard.probes.forms import ChannelForm
from pi_dashboard.probes.models import NotificationChannel
from pi_dashboard.probes.views.common import page


@require_GET
@role_required(Role.VIEWER)
def channel_list(request: HttpRequest) -> HttpResponse:
    return page(
        request, "probes/channel_list.html", {"channels": selectors.channel_list()}
    )


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def channel_form(request: HttpRequest, channel_id: int | None = None) -> HttpResponse:
    channel = (
        get_object_or_404(NotificationChannel, pk=channel_id) if channel_id else None
    )
    if request.method == "GET":
        initial = (
            {
                "name": channel.name,
                "kind": channel.kind,
                "is_enabled": channel.is_enabled,
            }
            if channel
            else {}
        )
        form = ChannelForm(initial=initial)
        return page(
            request, "probes/channel_form.html", {"form": form, "channel": channel}
        )
    form = ChannelForm(request.POST)
    if form.is_valid():
        c = form.cleaned_data
        try:
            with audited(
                request, "probes.channel.save", name=c["name"], kind=c["kind"]
            ):
                services.channel_save(
                    channel=channel,
                    name=c["name"],
                    kind=c["kind"],
                    target=c["target"] or None,
                    is_enabled=c["is_enabled"],
                )
            messages.success(request, f"Saved channel {c['name']}.")
            return redirect("probes:channels")
        except DomainError as exc:
            form.add_error(None, exc.detail)
    return page(
        request,
        "probes/channel_form.html",
        {"form": form, "channel": channel},
        status=400,
    )


@require_POST
@role_required(Role.OPERATOR)
def channel_delete(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(NotificationChannel, pk=channel_id)
    with audited(request, "probes.channel.delete", name=channel.name):
        services.channel_delete(channel=channel)
    messages.success(request, f"Deleted channel {channel.name}.")
    return redirect("probes:channels")


@require_POST
@role_required(Role.OPERATOR)
def channel_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(NotificationChannel, pk=channel_id)
    with audited(request, "probes.channel.test", name=channel.name) as info:
        error = services.channel_send_test(channel=channel)
        info["error"] = error
    if is_htmx(request):
        return page(
            request, "probes/_channel_test.html", {"channel": channel, "error": error}
        )
    if error:
        messages.error(request, f"Test to {channel.name} failed: {error}")
    else:
        messages.success(request, f"Test message sent to {channel.name}.")
    return redirect("probes:channels")
