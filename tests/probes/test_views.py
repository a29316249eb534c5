"""Probe pages through the real client: roles, forms, htmx fragments, audit."""

import re
from typing import Any

import pytest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.probes import services
from pi_dashboard.probes.models import (
    Endpoint,
    ProbeRun,
    ProbeSchedule,
)
from tests.probes.conftest import API_KEY, logged_in

pytestmark = pytest.mark.django_db

FORM = {
    "name": "lab",
    "base_url": "http://127.0.0.1:1/v1",
    "server_model": "m",
    "model_key": "lab/m",
    "api_key": "sk-form-secret-123456",
    "timeout_seconds": "5",
    "token_param": "max_tokens",
    "is_streaming": "on",
    "tags": "a, b",
    "trials": "1",
    "is_enabled": "on",
    "headers": "X-Team: blue",
}


def test_viewer_sees_pages_without_operator_buttons(
    viewer: Any, make_endpoint: Any
) -> None:
    endpoint = make_endpoint("text-tool-call")
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger="api")
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    client = logged_in(viewer)
    listing = client.get("/probes/").content.decode()
    assert endpoint.name in listing
    assert "text-protocol" in listing
    assert "Probe now" not in listing
    assert "Add endpoint" not in listing
    detail = client.get(f"/probes/endpoints/{endpoint.pk}/").content.decode()
    assert "tool-call" in detail
    assert "text-protocol:tool-call" in detail
    assert API_KEY not in detail
    assert "[REDACTED]" in detail
    page = client.get(f"/probes/runs/{run.pk}/").content.decode()
    assert "&#x27;calibratedAt&#x27;" in page or "calibratedAt" in page
    for url in (
        "/probes/runs/",
        "/probes/schedules/",
        "/probes/drift/",
    ):
        assert client.get(url).status_code == 200, url


def test_viewer_cannot_post(viewer: Any, make_endpoint: Any) -> None:
    endpoint = make_endpoint("native-correct")
    client = logged_in(viewer)
    assert client.post(f"/probes/endpoints/{endpoint.pk}/probe/").status_code == 403
    assert client.post("/probes/schedules/", {"name": "x"}).status_code == 403
    assert ProbeRun.objects.count() == 0
    assert ProbeSchedule.objects.count() == 0
    assert AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).count() == 2


def test_operator_creates_endpoint_and_probes_with_htmx(operator: Any) -> None:
    client = logged_in(operator)
    response = client.post("/probes/endpoints/new/", FORM)
    endpoint = Endpoint.objects.get()
    assert response.status_code == 302
    assert response.url == f"/probes/endpoints/{endpoint.pk}/"
    assert endpoint.header_names == ["X-Team"]
    assert endpoint.tags == ["a", "b"]
    fragment = client.post(
        f"/probes/endpoints/{endpoint.pk}/probe/", HTTP_HX_REQUEST="true"
    )
    run = ProbeRun.objects.get()
    text = fragment.content.decode()
    assert "pending" in text
    assert f"/probes/runs/{run.pk}/status/" in text
    ProbeRun.objects.filter(pk=run.pk).update(
        state="refused", error="Refused 127.0.0.1: test"
    )
    status = client.get(f"/probes/runs/{run.pk}/status/", HTTP_HX_REQUEST="true")
    assert status.status_code == 286
    assert "Refused 127.0.0.1" in status.content.decode()
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"probes.endpoint.create", "probes.probe"} <= actions


def test_bad_form_shows_the_error(operator: Any) -> None:
    response = logged_in(operator).post(
        "/probes/endpoints/new/", {**FORM, "model_key": "x"}
    )
    assert response.status_code == 400
    assert "provider/modelId" in response.content.decode()


def test_schedule_create_pause_and_next_run(operator: Any) -> None:
    client = logged_in(operator)
    response = client.post(
        "/probes/schedules/",
        {
            "name": "nightly",
            "kind": "crontab",
            "cron": "0 3 * * *",
            "selection_kind": "tag",
            "selection_value": "gpu",
            "jitter_seconds": "30",
        },
    )
    assert response.status_code == 302
    schedule = ProbeSchedule.objects.get()
    assert schedule.periodic_task is not None
    assert schedule.periodic_task.enabled
    assert schedule.periodic_task.crontab is not None
    page = client.get("/probes/schedules/").content.decode()
    assert "cron 0 3 * * *" in page
    assert " 03:00:00 UTC" in page
    client.post(f"/probes/schedules/{schedule.pk}/pause/")
    schedule.refresh_from_db()
    assert schedule.is_paused
    assert schedule.periodic_task is not None
    assert not schedule.periodic_task.enabled
    bad = client.post(
        "/probes/schedules/",
        {
            "name": "bad",
            "kind": "crontab",
            "cron": "99 * *",
            "selection_kind": "all",
            "jitter_seconds": "0",
        },
    )
    assert bad.status_code == 400
    assert "five fields" in bad.content.decode()


def test_the_notifications_tab_leads_to_the_alerts_channels(viewer: Any) -> None:
    """Drift is announced through alert rules (issue 11); the tab points there."""
    body = logged_in(viewer).get("/probes/").content.decode()
    assert 'href="/alerts/channels/"' in body
    assert "/probes/channels/" not in body


@pytest.mark.parametrize("htmx", [False, True])
def test_status_of_an_unknown_run_is_a_404_page(viewer: Any, htmx: bool) -> None:
    # A run deleted with its endpoint while a page still polls it.
    headers = {"HX-Request": "true"} if htmx else {}
    response = logged_in(viewer).get("/probes/runs/987654/status/", headers=headers)
    assert response.status_code == 404
    assert "No probe run 987654" in response.content.decode()


def test_schedule_form_fields_say_which_kind_they_belong_to(operator: Any) -> None:
    """Issue 12 item 12: interval and cron fields are shown for their kind only; the
    checkbox sits on one line with its label."""
    body = logged_in(operator).get("/probes/schedules/").content.decode()
    assert 'data-show-when="kind=interval"><label for="id_every_seconds"' in body
    assert 'data-show-when="kind=crontab"><label for="id_cron"' in body
    assert 'data-show-when="selection_kind=tag|provider"' in body
    assert (
        '<div class="field field-check"><input type="checkbox" name="is_paused"' in body
    )


@pytest.mark.django_db
def test_run_page_shows_pis_json_and_the_assembled_stream(
    operator: Any, make_endpoint: Any
) -> None:
    """Issue 12 item 11: JSON in pi's key order (not a sorted Python repr), the
    streamed reply put together, and breadcrumbs."""
    from tests.probes.test_verdicts import run_probe

    run = run_probe(make_endpoint("native-correct", stream=True))
    body = logged_in(operator).get(f"/probes/runs/{run.pk}/").content.decode()
    assert "{&#x27;" not in body  # no Python dict repr anywhere
    tool_probe = body.split("toolProbe (as pi writes it)")[1].split("</pre>")[0]
    keys = re.findall(r"&quot;(\w+)&quot;:", tool_probe)
    assert keys[:2] == ["version", "status"]
    assert keys.index("probedAt") < keys.index("nativeGrade")
    request = body.split("<h4>Request</h4>")[1].split("</pre>")[0]
    request_keys = re.findall(r"^  &quot;(\w+)&quot;:", request, re.M)
    assert request_keys[:3] == ["model", "messages", "stream"]
    assert "Reply, assembled" in body
    assert "<code>read</code>" in body  # the native tool call, put together
    assert "The reply as received" in body
    assert 'aria-label="Breadcrumbs"' in body
    assert f'<span aria-current="page">#{run.pk}</span>' in body


def test_a_disabled_endpoint_says_so_in_the_list(viewer: Any) -> None:
    """The demo's endpoints, disabled while no demo runs, read as disabled (found on
    the README re-walk: only a muted row and a greyed button told them apart)."""
    Endpoint.objects.create(
        name="demo off", base_url="http://127.0.0.1:1/v1", server_model="m",
        model_key="lab/m", is_enabled=False,
    )  # fmt: skip
    Endpoint.objects.create(
        name="lab on", base_url="http://127.0.0.1:1/v1", server_model="m",
        model_key="lab/m",
    )  # fmt: skip
    listing = logged_in(viewer).get("/probes/").content.decode()
    rows = re.findall(r"<tr[^>]*>.*?</tr>", listing, re.S)
    off = next(r for r in rows if "demo off" in r)
    on = next(r for r in rows if "lab on" in r)
    assert ">disabled</span>" in off
    assert ">disabled</span>" not in on
