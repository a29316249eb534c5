"""Screenshots of the main pages, light and dark, saved as test artifacts.

Also checks what a person would notice first: the pages render without script
errors, the charts draw, and dark mode really changes the colours.
"""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from pi_dashboard.fleet.models import HostModel
from pi_dashboard.ingest.models import Dimension
from tests.browser.conftest import log_in, screenshot
from tests.fleet.test_pages import AMD, add_event, add_rollups, seed_store

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MODEL = "openai/gpt-5.1"


def seed_activity() -> None:
    """A day of rollups and a few events, so charts and rates have something to show."""
    for n, hm in enumerate(HostModel.objects.select_related("host", "model")):
        for hours_ago in range(0, 24, 3):
            add_rollups(
                hm,
                {
                    (Dimension.OUTCOME, "execution:failed"): (n + hours_ago) % 4,
                    (Dimension.OUTCOME, "validation:bounced"): hours_ago % 3,
                    (Dimension.OUTCOME, "validation:repaired"): 5 + n,
                    (Dimension.REPAIR_MODE, "numberFromString"): 2 + hours_ago % 5,
                    (Dimension.REPAIR_MODE, "nullOptionalDrop"): 1 + n % 3,
                    (Dimension.PHASE, "execution"): 1 + hours_ago % 4,
                    (Dimension.PHASE, "policy"): hours_ago % 2,
                    (Dimension.FAILURE_CODE, "file_not_found"): 1 + hours_ago % 3,
                    (Dimension.FAILURE_CODE, "operation_rejected"): hours_ago % 2,
                },
                hours_ago=hours_ago,
            )
    hm = HostModel.objects.get(host__pi_id=AMD, model__key=MODEL)
    for i in range(8):
        add_event(hm, i, phase="execution" if i % 2 else "policy")
    hm.host.last_contact_at = timezone.now() - timedelta(minutes=3)
    hm.host.save()


@pytest.mark.timeout(120)
def test_main_pages_light_and_dark(live_server, new_page, operator, pi_fixtures):
    seed_store(json.loads((pi_fixtures / "model-adaptation.json").read_text()))
    seed_activity()
    pages = {
        "fleet-overview": "/",
        "fleet-overview-list": "/?view=list",
        "model": f"/models/{MODEL}/",
        "host": f"/hosts/{AMD}/",
        "host-model": f"/hosts/{AMD}/models/{MODEL}/",
        "models": "/models/",
        "hosts": "/hosts/",
    }
    backgrounds = {}
    for scheme in ("light", "dark"):
        page = new_page(color_scheme=scheme)
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        log_in(page, live_server.url, operator.username, "pw-" + operator.username)
        for name, path in pages.items():
            page.goto(live_server.url + path)
            page.wait_for_load_state("networkidle")
            if name == "model":
                # uPlot draws each chart into a canvas.
                page.wait_for_selector(".chart canvas")
                assert page.locator(".chart canvas").count() >= 3
            screenshot(page, f"{name}-{scheme}")
        backgrounds[scheme] = page.evaluate(
            "getComputedStyle(document.body).backgroundColor"
        )
        assert errors == [], errors
    assert backgrounds["light"] != backgrounds["dark"]


def test_dialog_is_keyboard_reachable(live_server, new_page, operator, pi_fixtures):
    from playwright.sync_api import expect

    seed_store(json.loads((pi_fixtures / "model-adaptation.json").read_text()))
    page = new_page()
    log_in(page, live_server.url, operator.username, "pw-" + operator.username)
    page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    button = page.get_by_role("button", name="Probe now…")
    button.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog[open]")
    expect(dialog).to_contain_text(f"Runs pi's tool probe for {MODEL} on host {AMD}")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
