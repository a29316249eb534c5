"""The host × model page after a command settles (issue 12 item 1), in a real browser.

A real agent applies the command; the page must keep every section and button, and
show the new rule count without a reload.
"""

import re
import sys

import pytest

from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import HostModel
from tests.agent.conftest import move_to_today
from tests.browser.conftest import log_in, screenshot
from tests.browser.test_journeys import (
    AMD,
    MODE,
    MODEL,
    agent_config,
    fast_polls,  # noqa: F401 (a fixture)
    seed_state_dir,
    store_rules,
)
from tests.support.processes import running, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SECTIONS = ["Standing rules", "Teach statistics", "Probe and calibration", "Commands"]


def assert_whole_page(page, expect, rules: int) -> None:
    for name in SECTIONS:
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
    expect(page.locator(".stat", has_text="standing rules")).to_contain_text(
        f"{rules} / 5"
    )
    # This agent has no pi_command: no probe is offered, and the page says why.
    expect(page.get_by_role("button", name="Probe now…")).to_have_count(0)
    expect(page.locator("#probe-why-not")).to_contain_text("no pi_command")
    expect(page.get_by_role("button", name="Remove…", exact=True)).to_have_count(rules)


@pytest.mark.timeout(150)
def test_page_keeps_its_sections_after_a_command_settles(
    live_server,
    new_page,
    operator,
    pi_fixtures,
    tmp_path,
    fast_polls,  # noqa: F811
):
    from playwright.sync_api import expect

    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi-agent")
    # pi prunes by the real clock: unshifted, the fixture's rules are expired and the
    # removal rightly answers "nothing to remove".
    move_to_today(state / "model-adaptation.json")
    before = len(store_rules(state, AMD, MODEL))
    config = agent_config(tmp_path, server=live_server.url, state=state, host=AMD)
    argv = [sys.executable, "-m", "pi_dashboard.agent", "--config", str(config), "run"]
    log = tmp_path / "agent.log"
    with running(argv, env={"PATH": "/usr/bin:/bin"}, log=log):
        assert wait_until(
            lambda: HostModel.objects.filter(
                host__pi_id=AMD, model__key=MODEL
            ).exists(),
            timeout=40,
        ), log.read_text()[-3000:]
        page = new_page()
        log_in(page, live_server.url, operator.username, "pw-" + operator.username)
        page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
        assert_whole_page(page, expect, before)

        row = page.locator("tr", has=page.locator("code", has_text=MODE))
        row.get_by_role("button", name="Remove…", exact=True).click()
        page.locator("dialog[open]").get_by_role("button", name="Remove rule").click()

        result = page.locator("#action-results .command-status .badge").first
        expect(result).to_have_text("confirmed", timeout=60_000)
        # The status in the Commands section settles too, on its own poll.
        in_section = page.locator("#hm-state .command-status .badge").first
        expect(in_section).to_have_text("confirmed", timeout=30_000)
        page.wait_for_timeout(3000)  # one more round of polls, had anything left
        assert_whole_page(page, expect, before - 1)
        rules = page.locator("section[aria-labelledby=rules-h]")
        gone = rules.locator("code", has_text=re.compile(f"^{MODE}$"))
        expect(gone).to_have_count(0)
        screenshot(page, "host-model-after-command-settled")
    assert Command.objects.get(kind="remove_rule").confirmed_at is not None
