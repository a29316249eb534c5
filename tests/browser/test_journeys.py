"""Key journeys in a real browser against a live server and a real agent process."""

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from pi_dashboard.agent.config import DEFAULTS, config_write
from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Agent, HostModel
from pi_dashboard.lib.tokens import token_display_prefix, token_generate, token_hash
from tests.browser.conftest import log_in, screenshot
from tests.support.processes import running, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AMD = "amd-ryzen-9-7950x-16-core-processor-32c-64g"
MODEL = "openai/gpt-5.1"
MODE = "numberFromString"


def seed_state_dir(fixtures: Path, host: str, into: Path) -> Path:
    state = into / "state"
    shutil.copytree(fixtures / host, state)
    return state


def store_rules(state: Path, host: str, model: str) -> list[str]:
    store = json.loads((state / "model-adaptation.json").read_text())
    return [r["mode"] for r in store["hosts"][host][model]["profile"]["rules"]]


def agent_config(tmp_path: Path, *, server: str, state: Path, host: str) -> Path:
    """Enrol a real agent row and write the agent's config (what `enroll` writes)."""
    secret = token_generate("pid_ag")
    Agent.objects.create(
        name="browser-test-agent",
        token_prefix=token_display_prefix(secret),
        token_hash=token_hash(secret),
    )
    store = json.loads((state / "model-adaptation.json").read_text())
    fingerprint = next(iter(store["hosts"][host].values()))["host"]
    path = tmp_path / "agent.json"
    config_write(
        path,
        {
            **DEFAULTS,
            "server": server,
            "token": secret,
            "state_dir": str(state),
            "data_dir": str(tmp_path / "agent-data"),
            # The fixture's host, not this machine's fingerprint.
            "host_override": fingerprint,
            "scan_interval": 0.3,
            "heartbeat_interval": 5.0,
        },
    )
    return path


@pytest.fixture
def fast_polls(settings: Any) -> None:
    settings.PI_AGENT_POLL_SECONDS = 1


@pytest.mark.timeout(150)
def test_operator_removes_a_rule_and_sees_it_confirmed(
    live_server, new_page, operator, pi_fixtures, tmp_path, fast_polls
):
    from playwright.sync_api import expect

    state = seed_state_dir(pi_fixtures, AMD, tmp_path / "pi-agent")
    assert MODE in store_rules(state, AMD, MODEL)
    config = agent_config(tmp_path, server=live_server.url, state=state, host=AMD)
    argv = [sys.executable, "-m", "pi_dashboard.agent", "--config", str(config), "run"]
    log = tmp_path / "agent.log"
    with running(argv, env={"PATH": "/usr/bin:/bin"}, log=log) as agent:
        shipped = wait_until(
            lambda: HostModel.objects.filter(
                host__pi_id=AMD, model__key=MODEL
            ).exists(),
            timeout=40,
        )
        assert shipped, f"the agent shipped no snapshot:\n{log.read_text()[-3000:]}"

        page = new_page()
        log_in(page, live_server.url, operator.username, "pw-" + operator.username)
        page.goto(f"{live_server.url}/models/{MODEL}/")
        expect(page.get_by_role("heading", level=1)).to_have_text(MODEL)
        page.click(f"a[href='/hosts/{AMD}/models/{MODEL}/']")
        expect(page.get_by_role("heading", level=1)).to_have_text(MODEL)

        row = page.locator("tr", has=page.locator("code", has_text=MODE))
        row.get_by_role("button", name="Remove…", exact=True).click()
        dialog = page.locator("dialog[open]")
        expect(dialog).to_contain_text(
            f"Removes the standing rule {MODE} for {MODEL} on host {AMD}"
        )
        dialog.get_by_role("button", name="Remove rule").click()
        expect(dialog).to_have_count(0)

        status = page.locator("#action-results .command-status .badge").first
        expect(status).to_have_text(re.compile("pending|delivered|applied|confirmed"))
        expect(status).to_have_text("confirmed", timeout=60_000)
        screenshot(page, "host-model-rule-removed-confirmed")
        assert agent.poll() is None, log.read_text()[-3000:]

    command = Command.objects.get(kind="remove_rule")
    assert command.state == "applied"
    assert command.confirmed_at is not None
    assert command.params == {"mode": MODE}
    assert MODE not in store_rules(state, AMD, MODEL)
    assert AuditEntry.objects.filter(command=command, outcome=AuditOutcome.OK).exists()


def test_viewer_sees_no_actions_and_a_direct_post_is_refused(
    live_server, new_page, viewer, pi_fixtures
):
    from playwright.sync_api import expect

    from tests.fleet.test_pages import seed_store

    seed_store(json.loads((pi_fixtures / "model-adaptation.json").read_text()))
    page = new_page()
    log_in(page, live_server.url, viewer.username, "pw-" + viewer.username)
    page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    expect(page.get_by_role("heading", level=1)).to_have_text(MODEL)
    expect(page.locator("#rules-h")).to_be_visible()
    expect(
        page.get_by_role("button", name=re.compile("Remove|Reset|Probe"))
    ).to_have_count(0)
    expect(page.locator("dialog")).to_have_count(0)

    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        f"{live_server.url}/actions/remove-rule/",
        form={"host": AMD, "model": MODEL, "mode": MODE},
        headers={"X-CSRFToken": csrf, "Referer": live_server.url + "/"},
    )
    assert response.status == 403
    assert "Operator" in response.text()
    refused = AuditEntry.objects.get(outcome=AuditOutcome.REFUSED)
    assert refused.actor == User.objects.get(username=viewer.username)
    assert refused.detail["path"] == "/actions/remove-rule/"
    assert not Command.objects.exists()


def test_actions_work_without_javascript(live_server, new_page, operator, pi_fixtures):
    """With JavaScript off, the button leads to a confirmation page that POSTs."""
    from playwright.sync_api import expect

    from tests.fleet.test_pages import seed_store

    seed_store(json.loads((pi_fixtures / "model-adaptation.json").read_text()))
    page = new_page(java_script_enabled=False)
    log_in(page, live_server.url, operator.username, "pw-" + operator.username)
    page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    row = page.locator("tr", has=page.locator("code", has_text=MODE))
    row.get_by_role("button", name="Remove…", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Remove the {MODE} rule?"
    )
    expect(
        page.get_by_text(f"Removes the standing rule {MODE} for {MODEL}")
    ).to_be_visible()
    page.get_by_role("button", name="Remove rule").click()
    page.wait_for_url(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    expect(page.get_by_text(f"Sent 1 command: remove rule on {AMD}")).to_be_visible()
    command = Command.objects.get()
    assert (command.kind, command.params) == ("remove_rule", {"mode": MODE})
