"""`{% liveness_badge host %}`: up / late / down (since …) beside a host."""

from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from pi_dashboard.alerts import liveness

register = template.Library()

_CSS = {"up": "ok", "late": "warn", "down": "danger", "never": "neutral"}


def policy_of(context: template.Context) -> liveness.Policy:
    # One Policy per rendered page: a matrix of 25 hosts reads the overrides once.
    request = context.get("request")
    policy = getattr(request, "_liveness_policy", None) if request else None
    if policy is None:
        policy = liveness.Policy()
        if request is not None:
            request._liveness_policy = policy
    return policy


@register.simple_tag(takes_context=True)
def liveness_badge(context: template.Context, host: Any) -> SafeString:
    """A badge for a host (or agent: anything with last_contact_at)."""
    # An agent takes its host's grace; a host (or overview HostInfo) its own.
    host_id = host.host_id if hasattr(host, "host_id") else getattr(host, "pk", None)
    last: datetime | None = getattr(host, "last_contact_at", None)
    state = policy_of(context).of(host_id, last, timezone.now())
    title = f"last contact {last:%Y-%m-%d %H:%M:%S} UTC" if last else "no contact yet"
    text = state.label
    if state.since is not None:
        text = f"{state.label} since {state.since:%Y-%m-%d %H:%M} UTC"
    return format_html(
        '<span class="badge badge-{} liveness" data-liveness="{}" title="{}">{}</span>',
        _CSS[state.status],
        state.status,
        title,
        text,
    )
