"""Maintenance windows are editable, not only created and deleted: the page and
/api/v1/maintenance-windows (CRUD), audited, bad input a clear 4xx."""

from datetime import time

import pytest
from django.test import Client

from pi_dashboard.alerts import services
from pi_dashboard.alerts.models import MaintenanceWindow
from pi_dashboard.audit.models import AuditEntry

pytestmark = pytest.mark.django_db

WEEKLY = {
    "name": "patch tuesday",
    "scope_kind": "tag",
    "scope_value": "gpu",
    "weekdays": [2],
    "start_time": "02:00:00",
    "duration_minutes": 90,
}


def logged_in(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def test_maintenance_window_api_crud(operator) -> None:
    client = logged_in(operator)
    made = client.post(
        "/api/v1/maintenance-windows", WEEKLY, content_type="application/json"
    )
    assert made.status_code == 201, made.content
    window = made.json()
    assert (window["weekdays"], window["start_time"]) == ([2], "02:00:00")
    url = f"/api/v1/maintenance-windows/{window['id']}"

    # Weekly → one-off, renamed: PUT replaces every field.
    one_off = {
        "name": "rack move",
        "scope_kind": "host",
        "scope_value": "h1",
        "starts_at": "2026-12-05T08:00:00Z",
        "ends_at": "2026-12-05T12:00:00",  # no offset: UTC
    }
    changed = client.put(url, one_off, content_type="application/json")
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert body["name"] == "rack move"
    assert body["weekdays"] == []
    assert body["start_time"] is None
    assert body["ends_at"].startswith("2026-12-05T12:00:00")
    stored = MaintenanceWindow.objects.get()
    assert (stored.scope_kind, stored.scope_value) == ("host", "h1")
    assert client.get(url).json()["active_now"] is False
    assert [w["id"] for w in client.get("/api/v1/maintenance-windows").json()] == [
        stored.pk
    ]
    assert AuditEntry.objects.filter(action="alerts.maintenance.save").count() == 2

    # Neither one-off nor weekly: 400 with the reason, nothing changed.
    bad = client.put(url, {**one_off, "weekdays": [1]}, content_type="application/json")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_window"
    missing = client.put(
        "/api/v1/maintenance-windows/999999", one_off, content_type="application/json"
    )
    assert (missing.status_code, missing.json()["code"]) == (404, "unknown_window")
    assert MaintenanceWindow.objects.get().name == "rack move"

    assert client.delete(url).status_code == 204
    assert not MaintenanceWindow.objects.exists()


def test_a_viewer_reads_windows_but_cannot_change_them(viewer) -> None:
    window = services.maintenance_save(
        window=None,
        name="nightly",
        scope_kind="fleet",
        scope_value="",
        weekdays=[1, 2, 3],
        start_time=time(1, 0),
        duration_minutes=30,
    )
    client = logged_in(viewer)
    assert client.get("/api/v1/maintenance-windows").status_code == 200
    refused = client.put(
        f"/api/v1/maintenance-windows/{window.pk}",
        {**WEEKLY, "name": "mine now"},
        content_type="application/json",
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    assert client.post(f"/alerts/maintenance/{window.pk}/").status_code == 403
    assert MaintenanceWindow.objects.get().name == "nightly"


def test_maintenance_window_edit_page(operator) -> None:
    client = logged_in(operator)
    client.post(
        "/alerts/maintenance/",
        {
            "name": "patch tuesday",
            "scope_kind": "fleet",
            "weekdays": "2",
            "start_time": "02:00",
            "duration_minutes": "90",
        },
    )
    window = MaintenanceWindow.objects.get()
    listing = client.get("/alerts/silences/").content.decode()
    assert f'href="/alerts/maintenance/{window.pk}/"' in listing

    form = client.get(f"/alerts/maintenance/{window.pk}/").content.decode()
    assert 'value="patch tuesday"' in form
    assert 'value="2"' in form
    assert 'value="02:00:00"' in form

    refused = client.post(
        f"/alerts/maintenance/{window.pk}/",
        {
            "name": "patch tuesday",
            "scope_kind": "fleet",
            "weekdays": "9",
            "start_time": "02:00",
            "duration_minutes": "90",
        },
    )
    assert refused.status_code == 400
    assert "A recurring window needs weekdays 1-7" in refused.content.decode()

    saved = client.post(
        f"/alerts/maintenance/{window.pk}/",
        {
            "name": "patch wednesday",
            "scope_kind": "fleet",
            "weekdays": "3,4",
            "start_time": "03:30",
            "duration_minutes": "45",
        },
    )
    assert saved.status_code == 302
    window.refresh_from_db()
    assert (window.name, window.weekdays, window.duration_minutes) == (
        "patch wednesday",
        [3, 4],
        45,
    )
    listing = client.get("/alerts/silences/").content.decode()
    assert "weekdays 3,4 at 03:30 for 45 min" in listing
