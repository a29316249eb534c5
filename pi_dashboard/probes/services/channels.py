"""Notification channels: create, change, delete, send a test message."""

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from pi_dashboard.lib.errors import Conflict, DomainError
from pi_dashboard.probes import crypto, outbound
from pi_dashboard.probes.models import ChannelKind, NotificationChannel
from pi_dashboard.probes.services.drift import channel_deliver


def channel_target_hint(kind: str, target: str) -> str:
    """What lists show instead of the (secret) target."""
    if kind == ChannelKind.EMAIL:
        return target
    parts = urlsplit(target)
    return f"{parts.scheme}://{parts.hostname}/…"


def channel_validate(*, name: str, kind: str, target: str) -> None:
    if not name.strip():
        raise DomainError("Give the channel a name.", code="invalid_name")
    if kind not in ChannelKind.values:
        raise DomainError("Unknown channel kind.", code="invalid_kind")
    if kind == ChannelKind.EMAIL:
        addresses = [a.strip() for a in target.split(",") if a.strip()]
        if not addresses:
            raise DomainError("Give at least one email address.", code="invalid_target")
        for address in addresses:
            try:
                validate_email(address)
            except ValidationError as exc:
                raise DomainError(
                    f"{address!r} is not an email address.", code="invalid_target"
                ) from exc
    elif not target.startswith(("http://", "https://")):
        raise DomainError(
            "The webhook URL must start with http:// or https://.",
            code="invalid_target",
        )
    else:
        outbound.url_check(target)  # what a webhook could never be sent to


@transaction.atomic
def channel_save(
    *,
    channel: NotificationChannel | None,
    name: str,
    kind: str,
    target: str | None,
    is_enabled: bool,
) -> NotificationChannel:
    """Create (channel None) or change a channel; target None keeps the stored one."""
    if channel is None and not target:
        raise DomainError("Give the channel a target.", code="invalid_target")
    current = (
        crypto.decrypt(channel.target_encrypted)
        if channel and target is None
        else target
    )
    channel_validate(name=name, kind=kind, target=current or "")
    clash = NotificationChannel.objects.filter(name=name.strip())
    if channel is not None:
        clash = clash.exclude(pk=channel.pk)
    if clash.exists():
        raise Conflict(f"A channel named {name!r} exists.", code="duplicate_name")
    channel = channel or NotificationChannel()
    channel.name = name.strip()
    channel.kind = kind
    channel.is_enabled = is_enabled
    if target is not None:
        channel.target_encrypted = crypto.encrypt(target.strip())
        channel.target_hint = channel_target_hint(kind, target.strip())
    channel.save()
    return channel


@transaction.atomic
def channel_delete(*, channel: NotificationChannel) -> None:
    channel.delete()


def channel_send_test(*, channel: NotificationChannel) -> str:
    """Send a test message now; '' on success, else why it failed."""
    event = {
        "event": "probe.test",
        "text": f"Test message from pi-dashboard for channel {channel.name}.",
        "at": timezone.now().isoformat(),
    }
    return channel_deliver(
        channel=channel, subject="[pi-dashboard] test notification", event=event
    )
