"""Operator actions from the pages: buttons by role, POSTs, refusals, live status."""

import pytest

from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.control.models import Command
from tests.fleet.test_pages import AMD, XEON, login, seed_fleet

MODEL = "openai/gpt-5.1"
PAGE = f"/hosts/{AMD}/models/{MODEL}/"


@pytest.fixture
def fleet(db, pi_fixtures):
    return seed_fleet(pi_fixtures)


def test_operator_sees_actions_with_exact_confirmation_text(client, operator, fleet):
    body = login(client, operator).get(PAGE).content.decode()
    assert "Remove…" in body
    assert "Remove and forget…" in body
    assert "Probe now…" in body
    assert (
        f"Removes the standing rule numberFromString for {MODEL} on host {AMD} "
        "(maria-workstation)." in body
    )
    assert "clears the numberFromString teach statistics" in body
    # No calibration on this host × model: nothing to reset.
    assert "Reset calibration…" not in body
    xeon = client.get(f"/hosts/{XEON}/models/llamacpp/glm-4.6/").content.decode()
    assert "Reset calibration…" in xeon
    assert "Reset and re-probe…" in xeon


def test_viewer_sees_no_action_buttons(client, viewer, fleet):
    login(client, viewer)
    for url in (PAGE, f"/models/{MODEL}/", f"/hosts/{XEON}/models/llamacpp/glm-4.6/"):
        body = client.get(url).content.decode()
        assert "<dialog" not in body
        assert "data-dialog-open" not in body


def test_viewer_post_is_refused_and_audited(client, viewer, fleet):
    response = login(client, viewer).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "numberFromString"},
    )
    assert response.status_code == 403
    entry = AuditEntry.objects.get()
    assert entry.outcome == AuditOutcome.REFUSED
    assert entry.actor_label == viewer.username
    assert not Command.objects.exists()


def test_anonymous_post_goes_to_login(client, fleet):
    response = client.post("/actions/probe/", {"host": AMD, "model": MODEL})
    assert response.status_code == 302
    assert "/login/" in response["Location"]
    assert not Command.objects.exists()


def test_remove_rule_htmx_shows_live_command_status(client, operator, fleet):
    response = login(client, operator).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "numberFromString", "also": "on"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200
    commands = list(Command.objects.order_by("created_at"))
    assert [c.kind for c in commands] == ["remove_rule", "forget_mode"]
    assert all(c.params == {"mode": "numberFromString"} for c in commands)
    assert "Sent 2 commands" in body
    for command in commands:
        assert f'hx-get="/commands/{command.pk}/status/"' in body
    assert 'class="badge badge-pending"' in body
    assert "<html" not in body


def test_remove_rule_without_htmx_redirects_with_a_message(client, operator, fleet):
    response = login(client, operator).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "jsonStringParse"},
        follow=True,
    )
    body = response.content.decode()
    assert response.redirect_chain[-1][0] == PAGE
    assert f"Sent 1 command: remove rule on {AMD}" in body
    command = Command.objects.get()
    # The page lists the command with its live status.
    assert f'id="command-{command.pk}"' in body


def test_refused_action_shows_the_services_message(client, operator, fleet):
    response = login(client, operator).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "noSuchMode"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "Not sent." in body
    assert "noSuchMode" in body
    assert not Command.objects.exists()
    assert AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).exists()


def test_reset_and_reprobe_creates_both_commands(client, operator, fleet):
    login(client, operator).post(
        "/actions/reset-protocol/",
        {"host": XEON, "model": "llamacpp/glm-4.6", "also": "on"},
        HTTP_HX_REQUEST="true",
    )
    kinds = list(Command.objects.order_by("created_at").values_list("kind", flat=True))
    assert kinds == ["reset_protocol", "probe"]


def test_probe_now(client, operator, fleet):
    login(client, operator).post(
        "/actions/probe/", {"host": AMD, "model": MODEL}, HTTP_HX_REQUEST="true"
    )
    assert Command.objects.get().kind == "probe"


def test_remove_rule_everywhere_names_every_host(client, operator, fleet):
    model = "anthropic/claude-sonnet-4-5"
    page = login(client, operator).get(f"/models/{model}/").content.decode()
    assert "Remove the nullOptionalDrop rule on every host?" in page
    assert f"Removes the standing rule nullOptionalDrop for {model} on 2 hosts" in page
    response = client.post(
        "/actions/remove-rule-everywhere/",
        {"model": model, "mode": "nullOptionalDrop"},
        HTTP_HX_REQUEST="true",
    )
    assert "Sent 2 commands" in response.content.decode()
    hosts = set(Command.objects.values_list("host__pi_id", flat=True))
    assert hosts == {AMD, "apple-m3-max-16c-128g"}


@pytest.mark.parametrize(
    ("url", "data", "status"),
    [
        ("/actions/remove-rule/", {"model": MODEL}, 400),
        ("/actions/probe/", {"host": "nope", "model": MODEL}, 404),
        ("/actions/remove-rule-everywhere/", {"model": MODEL}, 400),
        ("/actions/remove-rule-everywhere/", {"model": "x/y", "mode": "m"}, 404),
    ],
)
def test_bad_action_requests_are_clear_errors(
    client, operator, fleet, url, data, status
):
    assert login(client, operator).post(url, data).status_code == status
    assert not Command.objects.exists()


def test_actions_change_nothing_without_post(client, operator, fleet):
    login(client, operator)
    assert client.put("/actions/probe/").status_code == 405
    # A GET is the confirmation page only: it creates no command.
    assert client.get(f"/actions/probe/?host={AMD}&model={MODEL}").status_code == 200
    assert not Command.objects.exists()


def test_buttons_link_to_a_confirmation_page_that_works_without_javascript(
    client, operator, fleet
):
    body = login(client, operator).get(PAGE).content.decode()
    href = (
        f"/actions/remove-rule/?host={AMD}&amp;model=openai%2Fgpt-5.1"
        "&amp;mode=numberFromString&amp;also="
    )
    assert f'<a class="btn btn-sm" href="{href}" role="button"' in body
    page = client.get(href.replace("&amp;", "&"))
    text = page.content.decode()
    assert page.status_code == 200
    assert "<html" in text
    assert "Remove the numberFromString rule?" in text
    assert (
        f"Removes the standing rule numberFromString for {MODEL} on host {AMD} "
        "(maria-workstation)." in text
    )
    assert '<form method="post" action="/actions/remove-rule/">' in text
    assert "hx-post" not in text
    assert f'href="{PAGE}">Cancel</a>' in text
    assert not Command.objects.exists()
    # Confirming posts the same fields; the page comes back with the command.
    done = client.post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "numberFromString", "also": ""},
        follow=True,
    )
    assert done.redirect_chain[-1][0] == PAGE
    assert Command.objects.get().kind == "remove_rule"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            f"/actions/remove-rule/?host={AMD}&model={MODEL}&mode=m&also=on",
            "Remove the m rule and forget its statistics?",
        ),
        (
            f"/actions/reset-protocol/?host={XEON}&model=llamacpp/glm-4.6&also=on",
            "Reset the calibration and probe again?",
        ),
        (
            f"/actions/reset-protocol/?host={XEON}&model=llamacpp/glm-4.6",
            "Reset the text-protocol calibration?",
        ),
        (f"/actions/probe/?host={AMD}&model={MODEL}", "Probe this model on its host?"),
        (
            f"/actions/remove-rule-everywhere/?model={MODEL}&mode=numberFromString",
            f"numberFromString for {MODEL} on 1 host: {AMD}.",
        ),
    ],
)
def test_every_action_has_a_confirmation_page(client, operator, fleet, url, expected):
    response = login(client, operator).get(url)
    assert response.status_code == 200
    assert expected in response.content.decode()


def test_confirmation_page_errors_and_roles(client, operator, viewer, fleet):
    login(client, operator)
    assert (
        client.get(f"/actions/remove-rule/?host={AMD}&model={MODEL}").status_code == 400
    )
    assert client.get(f"/actions/probe/?host=nope&model={MODEL}").status_code == 404
    login(client, viewer)
    assert client.get(f"/actions/probe/?host={AMD}&model={MODEL}").status_code == 403


def test_htmx_action_tells_the_page_to_refresh(client, operator, fleet):
    response = login(client, operator).post(
        "/actions/probe/", {"host": AMD, "model": MODEL}, HTTP_HX_REQUEST="true"
    )
    assert response["HX-Trigger"] == "fleet-changed"
    page = client.get(PAGE).content.decode()
    assert 'hx-trigger="fleet-changed from:body, every 10s' in page
    # The live section alone, with the new command listed.
    part = client.get(PAGE, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="hm-state")
    body = part.content.decode()
    assert body.lstrip().startswith('<div id="hm-state"')
    assert "<html" not in body
    assert "Standing rules" in body
    assert f'id="command-{Command.objects.get().pk}"' in body
    model = client.get(
        f"/models/{MODEL}/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="model-state"
    ).content.decode()
    assert model.lstrip().startswith('<div id="model-state"')
    assert "Open commands" in model


def test_refused_htmx_action_does_not_trigger_a_refresh(client, operator, fleet):
    response = login(client, operator).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "noSuchMode"},
        HTTP_HX_REQUEST="true",
    )
    assert "HX-Trigger" not in response


def test_action_post_needs_csrf(operator, fleet):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(operator)
    response = strict.post("/actions/probe/", {"host": AMD, "model": MODEL})
    assert response.status_code == 403
    assert not Command.objects.exists()


def test_reset_and_reprobe_only_where_the_agent_can_probe(client, operator, fleet):
    """“Reset and re-probe…” probes too: offered as “Probe now…” is (issue 13)."""
    from pi_dashboard.fleet.models import Agent, Host

    xeon_page = f"/hosts/{XEON}/models/llamacpp/glm-4.6/"
    agent = Agent.objects.create(
        name="xeon-agent",
        token_prefix="p",
        token_hash="h-xeon",
        host=Host.objects.get(pi_id=XEON),
        capabilities={
            "probe": False,
            "rpc": False,
            "why": "no pi_command in the agent config",
        },
    )
    body = login(client, operator).get(xeon_page).content.decode()
    assert "Reset calibration…" in body
    assert "Reset and re-probe…" not in body
    assert "Probe now…" not in body
    assert "No “Reset and re-probe”: The host&#x27;s agent cannot run pi" in body
    assert "(no pi_command in the agent config)" in body

    agent.capabilities = {"probe": True, "rpc": True, "why": ""}
    agent.save()
    body = client.get(xeon_page).content.decode()
    assert "Reset and re-probe…" in body
    assert "Probe now…" in body
    assert "No “Reset and re-probe”" not in body
