"""Fixtures of the alerts tests: hosts, pairs, rules, a channel to a real receiver."""

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from pi_dashboard.alerts import evaluation, notifying, services
from pi_dashboard.alerts.models import AlertRule, Channel, Notification
from pi_dashboard.fleet.models import Host, HostModel, Model
from pi_dashboard.ingest import store
from tests.alerts.receivers import HttpReceiver, http_receiver


def pair(pi_id: str, key: str, contact_ago: timedelta = timedelta(0)) -> HostModel:
    host, _ = Host.objects.get_or_create(
        pi_id=pi_id, defaults={"last_contact_at": timezone.now() - contact_ago}
    )
    model, _ = Model.objects.get_or_create(
        key=key,
        defaults={"provider": key.partition("/")[0], "model_id": key.partition("/")[2]},
    )
    return HostModel.objects.create(host=host, model=model)


def add_counts(hm: HostModel, counts: dict[tuple[str, str], int]) -> None:
    """Counts in the current hour, as ingest writes them."""
    bucket = timezone.now().replace(minute=0, second=0, microsecond=0)
    store.rollups_add(
        hm.host_id,
        {(bucket, hm.model_id, dim, key): n for (dim, key), n in counts.items()},
    )


def rule(name: str, signal: str, **fields: object) -> AlertRule:
    channels = fields.pop("channels", None)
    return services.rule_save(
        rule=None,
        data={"name": name, "signal": signal, **fields},
        channel_ids=[c.pk for c in channels] if channels else [],  # type: ignore[attr-defined]
    )


def evaluate(at: datetime | None = None) -> evaluation.CycleResult:
    return evaluation.alerts_evaluate(now=at)


def deliver_queued() -> None:
    """What the Celery task does for each queued notification."""
    queued = Notification.objects.filter(state="queued").order_by("pk")
    for pk in queued.values_list("pk", flat=True):
        notifying.notification_send(notification_id=pk)


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as r:
        yield r


@pytest.fixture
def channel(db: None, receiver: HttpReceiver) -> Channel:
    return services.channel_save(
        channel=None, name="ops-hook", url=receiver.url(), is_enabled=True
    )
