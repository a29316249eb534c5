"""The expiry schedule, the Celery task, the long-poll cap and the OpenAPI document."""

import threading
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from pi_dashboard.celery import app
from pi_dashboard.control import lifecycle, services, tasks
from pi_dashboard.control.models import Command, CommandState
from tests.control.conftest import AMD, GPT, ack, bearer, remove_rule

pytestmark = pytest.mark.django_db


def test_expiry_runs_every_minute_from_beat(db):
    task = PeriodicTask.objects.get(task="control.commands_expire")
    assert task.enabled
    assert (task.interval.every, task.interval.period) == (60, "seconds")
    assert "control.commands_expire" in app.tasks


def test_expire_task_expires_overdue_commands(fleet, operator):
    command = remove_rule(operator)
    Command.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    assert tasks.commands_expire() == 1
    command.refresh_from_db()
    assert command.state == CommandState.EXPIRED


def test_long_polls_past_the_cap_answer_at_once(fleet, amd_agent, monkeypatch):
    monkeypatch.setattr(lifecycle, "_long_poll_slots", threading.BoundedSemaphore(1))
    lifecycle._long_poll_slots.acquire()  # another long-poll holds the only slot
    started = time.monotonic()
    response = Client().get("/api/v1/agent/commands?wait=10", **bearer(amd_agent[1]))
    assert response.json() == {"commands": []}
    assert time.monotonic() - started < 5.0  # far from the 10 s asked for


def test_snapshot_from_a_host_clock_behind_still_confirms(fleet, operator, amd_agent):
    import copy

    host_model = fleet[(AMD, GPT)]
    command = remove_rule(operator)
    ack(amd_agent[0], command)
    entry = copy.deepcopy(host_model.entry)
    entry["profile"]["rules"] = [
        r for r in entry["profile"]["rules"] if r["mode"] != "jsonStringParse"
    ]
    assert (
        services.commands_confirm_from_snapshot(
            host=host_model.host,
            model=host_model.model,
            entry=entry,
            taken_at=timezone.now() - timedelta(hours=2),
        )
        == 1
    )


def test_openapi_document_lists_the_control_api(db):
    response = Client().get("/api/v1/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/agent/commands",
        "/api/v1/agent/commands/{command_id}/ack",
        "/api/v1/commands",
        "/api/v1/commands/{command_id}",
        "/api/v1/audit",
        "/api/v1/audit.csv",
    ):
        assert path in paths, path
    wait = paths["/api/v1/agent/commands"]["get"]["parameters"][0]
    assert (wait["name"], wait["schema"]["maximum"]) == ("wait", 25)
