"""Commands and audit pages, the live status partial, through the real client."""

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from pi_dashboard.audit.models import AuditEntry
from pi_dashboard.control import services
from pi_dashboard.control.models import Command, CommandState
from pi_dashboard.lib.errors import DomainError
from tests.control.conftest import AMD, GLM, GPT, XEON, ack, remove_rule

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def browser(viewer) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


def test_commands_page_lists_with_live_state(browser, fleet, operator):
    command = remove_rule(operator)
    response = browser.get("/commands/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html
    assert "remove rule" in html
    assert "jsonStringParse" in html
    assert AMD in html
    assert "otto-operator" in html
    assert f'hx-get="/commands/{command.pk}/status/"' in html  # polls while open


def test_commands_page_partial_and_filters(browser, fleet, operator):
    remove_rule(operator)
    remove_rule(operator, host=XEON, model=GLM, mode="numberFromString")
    response = browser.get(f"/commands/?host={XEON}", **HX)
    html = response.content.decode()
    assert "<html" not in html
    assert 'id="commands-table"' in html
    assert XEON in html
    assert AMD not in html
    empty = browser.get("/commands/?state=failed").content.decode()
    assert "No commands match these filters" in empty


def test_commands_page_query_count_is_flat(
    browser, fleet, operator, django_assert_max_num_queries
):
    for mode in ("jsonStringParse", "numberFromString", "nullOptionalDrop"):
        remove_rule(operator, mode=mode)
    with django_assert_max_num_queries(8) as few:
        browser.get("/commands/")
    for host, model, mode in [
        (XEON, GLM, "numberFromString"),
        (XEON, GLM, "propertyCaseNormalize"),
        (AMD, GLM, "bashCommandUnwrap"),
        (AMD, GLM, "numberFromString"),
    ]:
        remove_rule(operator, host=host, model=model, mode=mode)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = browser.get("/commands/")
    assert response.content.decode().count("command-status") == 7


def test_status_partial_polls_until_settled(browser, fleet, operator, amd_agent):
    command = remove_rule(operator)
    url = f"/commands/{command.pk}/status/"
    pending = browser.get(url, **HX)
    assert pending.status_code == 200
    assert "waiting for the host" in pending.content.decode()
    assert "hx-trigger" in pending.content.decode()
    ack(amd_agent[0], command)
    applied = browser.get(url, **HX)
    assert applied.status_code == 200  # applied, but a snapshot may still confirm
    assert "waiting for the next snapshot" in applied.content.decode()
    Command.objects.filter(pk=command.pk).update(confirmed_at=timezone.now())
    confirmed = browser.get(url, **HX)
    assert confirmed.status_code == 286
    assert "confirmed" in confirmed.content.decode()
    assert "hx-trigger" not in confirmed.content.decode()
    # Issue 12 item 1: the page's live sections reload once it settles.
    assert confirmed["HX-Trigger"] == "fleet-changed"
    assert "HX-Trigger" not in pending


def test_polling_status_targets_itself_not_the_section_around_it(
    browser, fleet, operator
):
    """Inside #hm-state (hx-target="this") a status without its own target would
    replace the whole section when it settles (issue 12 item 1)."""
    command = remove_rule(operator)
    body = browser.get(f"/commands/{command.pk}/status/", **HX).content.decode()
    assert 'hx-target="this"' in body


def test_status_stops_for_failed_expired_and_stale_applied(browser, fleet, operator):
    command = remove_rule(operator)
    url = f"/commands/{command.pk}/status/"
    Command.objects.filter(pk=command.pk).update(
        state=CommandState.FAILED, error="store is not valid JSON"
    )
    failed = browser.get(url, **HX)
    assert failed.status_code == 286
    assert "store is not valid JSON" in failed.content.decode()
    Command.objects.filter(pk=command.pk).update(state=CommandState.EXPIRED)
    assert browser.get(url, **HX).status_code == 286
    Command.objects.filter(pk=command.pk).update(
        state=CommandState.APPLIED, finished_at=timezone.now() - timedelta(hours=1)
    )
    stale = browser.get(url, **HX)
    assert stale.status_code == 286
    assert "no snapshot has confirmed it" in stale.content.decode()


def test_status_full_page_shows_the_trail(browser, fleet, operator):
    command = remove_rule(operator)
    response = browser.get(f"/commands/{command.pk}/status/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Audit trail" in html
    assert "command.create" in html
    missing = browser.get("/commands/6f1c1c2e-0000-4000-8000-000000000000/status/")
    assert missing.status_code == 404


def test_audit_page_filters(browser, fleet, operator):
    remove_rule(operator)
    with pytest.raises(DomainError):
        remove_rule(operator, host=XEON, model=GLM, mode="notARule")
    html = browser.get("/audit/?outcome=refused").content.decode()
    assert "There is no notARule rule" in html
    assert "jsonStringParse" not in html
    partial = browser.get(f"/audit/?host={AMD}&action=command.create", **HX)
    text = partial.content.decode()
    assert "<html" not in text
    assert "jsonStringParse" in text
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    assert (
        "No audit entries" in browser.get(f"/audit/?since={tomorrow}").content.decode()
    )
    bad = browser.get("/audit/?since=2026-02-01&until=2026-01-01").content.decode()
    assert "“From” is after “To”" in bad


def test_invalid_audit_dates_are_a_visible_error_not_ignored(browser, fleet, operator):
    """Issue 12 item 12: a bad date shows which filter is wrong and lists nothing,
    rather than every entry as if it had applied; the CSV export refuses it."""
    remove_rule(operator)
    body = browser.get("/audit/?since=2026-13-45").content.decode()
    assert "Filter not applied." in body
    assert "From: Enter a valid date." in body
    assert "command.create" not in body.split('id="audit-table"')[1]
    csv_response = browser.get("/audit.csv?until=garbage")
    assert csv_response.status_code == 400
    assert "valid date" in csv_response.content.decode()


def test_audit_page_pages_with_a_cursor(browser, fleet, operator, monkeypatch):
    from pi_dashboard.audit import views

    monkeypatch.setattr(views, "AUDIT_PAGE_SIZE", 2)
    for mode in ("jsonStringParse", "numberFromString", "nullOptionalDrop"):
        remove_rule(operator, mode=mode)
    first = browser.get("/audit/").content.decode()
    assert "nullOptionalDrop" in first
    assert "jsonStringParse" not in first
    cursor = first.split("cursor=")[1].split('"')[0]
    older = browser.get(f"/audit/?cursor={cursor}").content.decode()
    assert "jsonStringParse" in older
    assert "nullOptionalDrop" not in older
    assert "Newest" in older


def test_audit_csv_page(browser, fleet, operator):
    remove_rule(operator)
    response = browser.get(f"/audit.csv?host={AMD}")
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r[2] for r in rows[1:]] == ["command.create"]
    assert rows[1][4:6] == [AMD, GPT]


def test_anonymous_and_outsider_are_kept_out(fleet, outsider):
    assert Client().get("/commands/").status_code == 302
    client = Client()
    client.force_login(outsider)
    assert client.get("/audit/").status_code == 302  # inactive: back to login
    assert client.get("/audit.csv").status_code == 302


def test_viewer_cannot_use_agent_ack_or_create(browser, fleet):
    response = browser.post(
        "/api/v1/commands",
        {"host": AMD, "model": GPT, "kind": "probe", "params": {}},
        content_type="application/json",
    )
    assert response.status_code == 403
    refused = AuditEntry.objects.get(outcome="refused")
    assert refused.actor_label == "vera-viewer"
    assert not Command.objects.exists()


def test_audit_page_says_what_happened(browser, fleet, operator, amd_agent):
    command = remove_rule(operator)
    services.commands_pull(agent=amd_agent[0], wait_seconds=0)
    services.command_ack(
        agent=amd_agent[0],
        command_id=command.pk,
        status="failed",
        result={"removed": False, "via": "file"},
        detail="lock held by pid 4242",
    )
    html = browser.get("/audit/").content.decode()
    assert "failed · removed false · lock held by pid 4242" in html
    assert "agent:amd-box" in html
    assert "remove rule jsonStringParse" in html
    trail = browser.get(f"/commands/{command.pk}/status/").content.decode()
    state_card, audit_trail = trail.split("Audit trail")
    assert "lock held by pid 4242" in state_card
    assert "failed · removed false · lock held by pid 4242" in audit_trail
