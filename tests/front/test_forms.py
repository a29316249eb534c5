"""No form gives a 500 (issue 12 item 2): every form, every field, hostile values.

Each form gets a valid base payload; then one field at a time is replaced by an empty,
out-of-range or garbage value, and the answer must be a page or a 4xx, never a 5xx.
Query-string filters get the same treatment through GET.
"""

from typing import Any

import pytest
from django.test import Client

from pi_dashboard.accounts.models import Role
from pi_dashboard.alerts import services as alert_services
from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.probes import services as probe_services
from tests.conftest import make_user
from tests.fleet.test_pages import AMD, seed_fleet

HOSTILE = [
    "",
    " ",
    "0",
    "-1",
    "999999999999999",
    "99999999999999999999999999",
    "1e309",
    "nan",
    "-inf",
    "garbage",
    "x" * 5000,
    "\x00",
    "2026-13-45",
    "'; DROP TABLE x; --",
]


@pytest.fixture
def objects(db: None, pi_fixtures: Any) -> dict[str, int]:
    seed_fleet(pi_fixtures)
    endpoint = probe_services.endpoint_create(
        data=probe_services.EndpointData(
            name="ep",
            base_url="http://127.0.0.1:9/v1",
            server_model="m",
            model_key="scripted/m",
        )
    )
    schedule = probe_services.schedule_save(
        schedule=None, data=probe_services.ScheduleData(name="sched"), user=None
    )
    channel = alert_services.channel_save(
        channel=None, name="ch", url="json://127.0.0.1:9/hook", is_enabled=True
    )
    person = make_user("pat-person", Role.VIEWER)
    return {
        "endpoint": endpoint.pk,
        "schedule": schedule.pk,
        "channel": channel.pk,
        "user": person.pk,
    }


ENDPOINT = {
    "name": "e",
    "base_url": "http://127.0.0.1:9/v1",
    "server_model": "m",
    "model_key": "scripted/m2",
    "api_key": "",
    "api_key_env": "",
    "headers": "",
    "timeout_seconds": "5",
    "token_param": "max_tokens",
    "is_streaming": "on",
    "tags": "a",
    "trials": "1",
    "is_enabled": "on",
}
SCHEDULE = {
    "name": "s",
    "kind": "interval",
    "every_seconds": "60",
    "cron": "",
    "selection_kind": "all",
    "selection_value": "",
    "jitter_seconds": "0",
}
CHANNEL = {"name": "c", "url": "json://127.0.0.1:9/hook", "is_enabled": "on"}
ACTION = {"host": AMD, "model": "openai/gpt-5.1", "mode": "numberFromString"}


def forms(ids: dict[str, int]) -> list[tuple[str, dict[str, str]]]:
    return [
        ("/probes/endpoints/new/", ENDPOINT),
        (f"/probes/endpoints/{ids['endpoint']}/edit/", ENDPOINT),
        ("/probes/schedules/", SCHEDULE),
        (f"/probes/schedules/{ids['schedule']}/edit/", SCHEDULE),
        ("/alerts/channels/new/", CHANNEL),
        (f"/alerts/channels/{ids['channel']}/", CHANNEL),
        ("/probes/fleet/", {"schedule": str(ids["schedule"])}),
        ("/account/tokens/", {"name": "laptop"}),
        ("/agents/", {"name": "build-07"}),
        ("/users/", {"username": "newbie", "email": "", "role": "viewer"}),
        (f"/users/{ids['user']}/role/", {"role": "operator"}),
        ("/corpus/", {}),
        ("/actions/remove-rule/", ACTION),
        ("/actions/reset-protocol/", ACTION),
        ("/actions/probe/", ACTION),
        ("/actions/remove-rule-everywhere/", ACTION),
    ]


FILTERS: list[tuple[str, list[str]]] = [
    ("/", ["q", "provider", "verdict", "host", "sort", "view", "range"]),
    ("/audit/", ["actor", "action", "outcome", "since", "until", "cursor"]),
    ("/audit.csv", ["since", "until", "outcome"]),
    ("/commands/", ["host", "model", "state", "kind", "cursor"]),
    ("/probes/runs/", ["state"]),
    ("/probes/drift/", ["model"]),
    ("/probes/", ["tag", "provider"]),
    (f"/hosts/{AMD}/models/openai/gpt-5.1/", ["kind", "outcome", "range", "cursor"]),
    ("/models/openai/gpt-5.1/", ["range"]),
    ("/corpus/", ["model", "host", "range", "since", "until"]),
    ("/corpus/failure-corpus.jsonl", ["model", "since", "until"]),
]


def admin_client(admin_user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


@pytest.mark.django_db(transaction=False)
def test_every_form_answers_hostile_values_without_a_5xx(
    admin_user: Any, objects: dict[str, int]
) -> None:
    client = admin_client(admin_user)
    failures = []
    for url, base in forms(objects):
        for field in base:
            for value in HOSTILE:
                response = client.post(url, {**base, field: value})
                if response.status_code >= 500:
                    failures.append((url, field, value[:20], response.status_code))
        # Nothing posted at all, too.
        if client.post(url, {}).status_code >= 500:
            failures.append((url, "(empty body)", "", 500))
    assert failures == []


@pytest.mark.django_db(transaction=False)
def test_every_filter_answers_hostile_values_without_a_5xx(
    admin_user: Any, objects: dict[str, int]
) -> None:
    client = admin_client(admin_user)
    failures = []
    for url, fields in FILTERS:
        for field in fields:
            for value in HOSTILE:
                response = client.get(url, {field: value})
                if response.status_code >= 500:
                    failures.append((url, field, value[:20], response.status_code))
    assert failures == []


def test_huge_schedule_interval_is_a_form_error(admin_user: Any, db: None) -> None:
    """The reported case: a 400 with the reason on the form, not a 500."""
    client = admin_client(admin_user)
    response = client.post(
        "/probes/schedules/", {**SCHEDULE, "every_seconds": "999999999999999"}
    )
    assert response.status_code == 400
    assert "Every (seconds)" in response.content.decode()
    assert "less than or equal to" in response.content.decode()


def test_refused_schedule_save_is_audited(admin_user: Any, db: None) -> None:
    """Item 12: every refused schedule save lands in the audit log, not only a bad
    cron."""
    client = admin_client(admin_user)
    client.post("/probes/schedules/", {**SCHEDULE, "every_seconds": "-5"})
    entry = AuditEntry.objects.get(action="probes.schedule.save")
    assert entry.outcome == AuditOutcome.REFUSED
    assert entry.detail["code"] == "invalid_form"
    assert "every_seconds" in entry.detail["reason"]
