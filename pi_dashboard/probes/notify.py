"""Sending drift notifications: generic JSON webhook, Slack-compatible webhook, email.

Webhook URLs are operator input, so they pass the same outbound guard as probes and
are connected to at the checked address.
"""

import json
import os
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import send_mail

from pi_dashboard.lib.errors import DomainError
from pi_dashboard.probes import chat, conf, outbound
from pi_dashboard.probes.models import ChannelKind

TIMEOUT_SECONDS = 10.0


class NotifyFailed(DomainError):
    code = "notify_failed"


def dashboard_url(path: str) -> str:
    base = os.environ.get("PI_DASHBOARD_URL", "").rstrip("/")
    return f"{base}{path}" if base else path


def post_json(url: str, payload: dict[str, Any]) -> None:
    dest = outbound.destination_check(url, allow_private=conf.allow_private())
    extensions = {"sni_hostname": dest.host} if dest.scheme == "https" else {}
    with httpx.Client(
        verify=chat.tls_context(),
        trust_env=False,
        follow_redirects=False,
        timeout=TIMEOUT_SECONDS,
    ) as client:
        try:
            response = client.post(
                dest.url(""),
                content=json.dumps(payload).encode(),
                headers={"Host": dest.host_header, "Content-Type": "application/json"},
                extensions=extensions,
            )
        except httpx.HTTPError as exc:
            raise NotifyFailed(f"Webhook not reached: {type(exc).__name__}.") from exc
    if response.status_code >= 300:
        raise NotifyFailed(f"Webhook answered HTTP {response.status_code}.")


def send(*, kind: str, target: str, subject: str, event: dict[str, Any]) -> None:
    """Deliver one message; raise NotifyFailed (or OutboundRefused) on failure."""
    if kind == ChannelKind.WEBHOOK:
        post_json(target, event)
    elif kind == ChannelKind.SLACK:
        post_json(target, {"text": f"{subject}\n{event.get('text', '')}".strip()})
    elif kind == ChannelKind.EMAIL:
        recipients = [a.strip() for a in target.split(",") if a.strip()]
        try:
            send_mail(
                subject, event.get("text", ""), settings.DEFAULT_FROM_EMAIL, recipients
            )
        except OSError as exc:
            raise NotifyFailed(f"Email not sent: {exc}.") from exc
    else:
        raise NotifyFailed(f"Unknown channel kind {kind!r}.")
