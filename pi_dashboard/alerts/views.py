"""Alerts pages: firing now and history (viewers), rules, channels, silences and
maintenance (operators change them). Every change is audited."""

from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import has_role, refused_response, role_required
from pi_dashboard.alerts import liveness, notifying, selectors, services
from pi_dashboard.alerts.forms import (
    ChannelForm,
    GraceForm,
    HostTagForm,
    MaintenanceForm,
    RuleForm,
    SilenceForm,
)
from pi_dashboard.alerts.models import (
    Alert,
    AlertRule,
    Channel,
    LivenessGrace,
    MaintenanceWindow,
    Silence,
)
from pi_dashboard.audit import audit
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes.views.common import page


@require_GET
@role_required(Role.VIEWER)
def alert_list(request: HttpRequest) -> HttpResponse:
    return page(
        request,
        "alerts/alert_list.html",
        {
            "open_alerts": selectors.open_alerts(),
            "history": selectors.alert_history(),
            "silences": selectors.silences_active(),
            "notifications": selectors.notifications_recent(),
            "tab": "alerts",
        },
    )


@require_POST
@role_required(Role.OPERATOR)
def alert_ack(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = get_object_or_404(Alert, pk=alert_id)
    try:
        services.alert_acknowledge(alert=alert, **audit.who(request))
        messages.success(request, f"Acknowledged {alert.rule.name}: {alert.label}.")
    except DomainError as exc:
        messages.error(request, exc.detail)
    return redirect("alerts:list")


@require_GET
@role_required(Role.VIEWER)
def rule_list(request: HttpRequest) -> HttpResponse:
    return page(
        request, "alerts/rule_list.html", {"rules": selectors.rules(), "tab": "rules"}
    )


def _rule_data(c: dict[str, Any]) -> dict[str, Any]:
    data = {k: v for k, v in c.items() if k != "channels"}
    data["scope_value"] = data.get("scope_value") or ""
    data["param"] = data.get("param") or ""
    return data


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def rule_form(request: HttpRequest, rule_id: int | None = None) -> HttpResponse:
    rule = get_object_or_404(AlertRule, pk=rule_id) if rule_id else None
    if request.method == "GET":
        form = RuleForm.for_rule(rule) if rule else RuleForm()
        return page(request, "alerts/form.html", {"form": form, "what": "rule"})
    form = RuleForm(request.POST)
    if form.is_valid():
        c = form.cleaned_data
        try:
            saved = services.rule_save(
                rule=rule,
                data=_rule_data(c),
                channel_ids=[ch.pk for ch in c["channels"]],
                **audit.who(request),
            )
            messages.success(request, f"Saved rule {saved.name}.")
            return redirect("alerts:rules")
        except DomainError as exc:
            form.add_error(None, exc.detail)
    return page(request, "alerts/form.html", {"form": form, "what": "rule"}, status=400)


@require_POST
@role_required(Role.OPERATOR)
def rule_delete(request: HttpRequest, rule_id: int) -> HttpResponse:
    rule = get_object_or_404(AlertRule, pk=rule_id)
    services.rule_delete(rule=rule, **audit.who(request))
    messages.success(request, f"Deleted rule {rule.name}.")
    return redirect("alerts:rules")


@require_GET
@role_required(Role.VIEWER)
def channel_list(request: HttpRequest) -> HttpResponse:
    return page(
        request,
        "alerts/channel_list.html",
        {"channels": selectors.channels(), "tab": "channels"},
    )


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def channel_form(request: HttpRequest, channel_id: int | None = None) -> HttpResponse:
    channel = get_object_or_404(Channel, pk=channel_id) if channel_id else None
    if request.method == "GET":
        initial = (
            {"name": channel.name, "is_enabled": channel.is_enabled} if channel else {}
        )
        return page(
            request,
            "alerts/form.html",
            {"form": ChannelForm(initial=initial), "what": "channel"},
        )
    form = ChannelForm(request.POST)
    if form.is_valid():
        c = form.cleaned_data
        try:
            services.channel_save(
                channel=channel,
                name=c["name"],
                url=c["url"] or None,
                is_enabled=c["is_enabled"],
                **audit.who(request),
            )
            messages.success(request, f"Saved channel {c['name']}.")
            return redirect("alerts:channels")
        except DomainError as exc:
            form.add_error(None, exc.detail)
    return page(
        request, "alerts/form.html", {"form": form, "what": "channel"}, status=400
    )


@require_POST
@role_required(Role.OPERATOR)
def channel_delete(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(Channel, pk=channel_id)
    services.channel_delete(channel=channel, **audit.who(request))
    messages.success(request, f"Deleted channel {channel.name}.")
    return redirect("alerts:channels")


@require_POST
@role_required(Role.OPERATOR)
def channel_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = get_object_or_404(Channel, pk=channel_id)
    error = notifying.channel_send_test(channel=channel, **audit.who(request))
    if error:
        messages.error(request, f"Test to {channel.name} failed: {error}")
    else:
        messages.success(request, f"Test message sent to {channel.name}.")
    return redirect("alerts:channels")


@require_http_methods(["GET", "POST"])
@role_required(Role.VIEWER)
def silence_list(request: HttpRequest) -> HttpResponse:
    form = SilenceForm()
    status = 200
    if request.method == "POST":
        if not has_role(request.user, Role.OPERATOR):
            return refused_response(
                request, needed=Role.OPERATOR, view="silence_create"
            )
        form = SilenceForm(request.POST)
        if form.is_valid():
            c = form.cleaned_data
            try:
                services.silence_create(
                    rule=c["rule"],
                    scope_kind=c["scope_kind"],
                    scope_value=c["scope_value"] or "",
                    ends_at=timezone.now() + timedelta(hours=c["hours"]),
                    reason=c["reason"] or "",
                    actor=request.user.get_username(),
                    **audit.who(request),
                )
                messages.success(request, "Silence created.")
                return redirect("alerts:silences")
            except DomainError as exc:
                form.add_error(None, exc.detail)
        status = 400
    return page(
        request,
        "alerts/silence_list.html",
        {
            "form": form,
            "silences": selectors.silences_recent(),
            "windows": selectors.maintenance_windows(),
            "maintenance_form": MaintenanceForm(),
            "graces": selectors.graces(),
            "grace_form": GraceForm(),
            "tags": selectors.host_tags(),
            "tag_form": HostTagForm(),
            "default_grace": liveness.default_grace(),
            "now": timezone.now(),
            "tab": "silences",
        },
        status=status,
    )


@require_POST
@role_required(Role.OPERATOR)
def silence_end(request: HttpRequest, silence_id: int) -> HttpResponse:
    silence = get_object_or_404(Silence, pk=silence_id)
    services.silence_end(silence=silence, **audit.who(request))
    messages.success(request, "Silence ended.")
    return redirect("alerts:silences")


def _maintenance_save(
    request: HttpRequest, form: MaintenanceForm, window: MaintenanceWindow | None
) -> bool:
    """Save the form's window (new, or `window` changed); False with the reason on
    the form when it is refused."""
    if not form.is_valid():
        return False
    c = form.cleaned_data
    try:
        services.maintenance_save(
            window=window,
            name=c["name"],
            scope_kind=c["scope_kind"],
            scope_value=c["scope_value"] or "",
            starts_at=c["starts_at"],
            ends_at=c["ends_at"],
            weekdays=c["weekdays"],
            start_time=c["start_time"],
            duration_minutes=c["duration_minutes"] or 0,
            **audit.who(request),
        )
    except DomainError as exc:
        form.add_error(None, exc.detail)
        return False
    messages.success(request, f"Maintenance window {c['name']} saved.")
    return True


@require_POST
@role_required(Role.OPERATOR)
def maintenance_create(request: HttpRequest) -> HttpResponse:
    form = MaintenanceForm(request.POST)
    if not _maintenance_save(request, form, None):
        messages.error(
            request, f"Maintenance window not saved: {form.errors.as_text()}"
        )
    return redirect("alerts:silences")


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def maintenance_edit(request: HttpRequest, window_id: int) -> HttpResponse:
    """Change a window: its name, scope, or when it runs (one-off ↔ weekly)."""
    window = get_object_or_404(MaintenanceWindow, pk=window_id)
    if request.method == "POST":
        form = MaintenanceForm(request.POST)
        if _maintenance_save(request, form, window):
            return redirect("alerts:silences")
        status = 400
    else:
        form = MaintenanceForm(initial=MaintenanceForm.initial_of(window))
        status = 200
    return page(
        request,
        "alerts/form.html",
        {"form": form, "what": f"maintenance window {window.name}"},
        status=status,
    )


@require_POST
@role_required(Role.OPERATOR)
def maintenance_delete(request: HttpRequest, window_id: int) -> HttpResponse:
    window = get_object_or_404(MaintenanceWindow, pk=window_id)
    services.maintenance_delete(window=window, **audit.who(request))
    messages.success(request, f"Deleted maintenance window {window.name}.")
    return redirect("alerts:silences")


@require_POST
@role_required(Role.OPERATOR)
def grace_save(request: HttpRequest) -> HttpResponse:
    """Late/down grace for one host or one tag."""
    form = GraceForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Grace not saved: {form.errors.as_text()}")
        return redirect("alerts:silences")
    c = form.cleaned_data
    try:
        services.grace_set(
            host=c["host"] or None,
            tag=c["tag"] or "",
            late_seconds=c["late_seconds"],
            down_seconds=c["down_seconds"],
            **audit.who(request),
        )
        messages.success(request, "Liveness grace saved.")
    except DomainError as exc:
        messages.error(request, exc.detail)
    return redirect("alerts:silences")


@require_POST
@role_required(Role.OPERATOR)
def grace_delete(request: HttpRequest, grace_id: int) -> HttpResponse:
    grace = get_object_or_404(LivenessGrace, pk=grace_id)
    services.grace_delete(grace=grace, **audit.who(request))
    messages.success(request, "Liveness grace removed: the default applies.")
    return redirect("alerts:silences")


@require_POST
@role_required(Role.OPERATOR)
def host_tag(request: HttpRequest) -> HttpResponse:
    """Add (or with remove=1, remove) a tag on a host."""
    form = HostTagForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Tag not saved: {form.errors.as_text()}")
        return redirect("alerts:silences")
    c = form.cleaned_data
    remove = request.POST.get("remove") == "1"
    try:
        change = services.host_tag_remove if remove else services.host_tag_add
        change(host=c["host"], tag=c["tag"], **audit.who(request))
        messages.success(request, f"Tag {c['tag']} {'removed' if remove else 'added'}.")
    except DomainError as exc:
        messages.error(request, exc.detail)
    return redirect("alerts:silences")
