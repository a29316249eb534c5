"""The alerts page and the overview's attention header, in a real browser."""

from datetime import timedelta

import pytest

from pi_dashboard.alerts.models import AlertRule
from pi_dashboard.fleet.models import HostModel
from tests.alerts.conftest import evaluate, pair
from tests.browser.conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_overview_header_leads_to_the_alert_and_it_is_acknowledged(
    live_server, new_page, operator
):
    from playwright.sync_api import expect

    pair("h-gone", "openai/gpt-5.1", contact_ago=timedelta(hours=2))
    degraded = pair("h-up", "anthropic/claude")
    HostModel.objects.filter(pk=degraded.pk).update(probe_status="none")
    AlertRule.objects.create(name="host down", signal="agent_down", is_urgent=True)
    evaluate()

    page = new_page()
    log_in(page, live_server.url, operator.username, "pw-" + operator.username)
    header = page.locator("#attention")
    expect(header.locator("[data-attention=hosts-down] h3")).to_have_text("1 host down")
    expect(header.locator("[data-attention=alerts-firing] h3")).to_have_text(
        "1 alert firing"
    )
    expect(header.locator("[data-attention=pairs-degraded] h3")).to_have_text(
        "1 pair degraded"
    )
    expect(page.locator("#fleet-matrix [data-liveness=down]")).to_have_count(1)
    screenshot(page, "overview-attention")

    header.get_by_role("link", name="1 alert firing").click()
    page.wait_for_url(f"{live_server.url}/alerts/")
    row = page.locator("#firing tbody tr").first
    expect(row).to_contain_text("host down")
    expect(row).to_contain_text("urgent")
    expect(row.get_by_role("link", name="show evidence")).to_have_attribute(
        "href", "/hosts/h-gone/"
    )
    row.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("#firing tbody tr").first).to_contain_text(
        f"by {operator.username}"
    )
    expect(page.locator("#history")).to_contain_text(
        f"acknowledged by {operator.username}"
    )
    screenshot(page, "alerts-page")

    page.locator("#firing").get_by_role("link", name="show evidence").click()
    page.wait_for_url(f"{live_server.url}/hosts/h-gone/")
    expect(page.locator("[data-liveness=down]").first).to_contain_text("down since")
